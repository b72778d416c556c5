// Keeps outgoing requests (webhooks) off the server's own network: a configured URL whose host is, or
// resolves to, a loopback, private, link-local, unique-local, CGNAT, multicast, unspecified or otherwise
// reserved address is refused unless an admin allowed private targets. Every address the name resolves
// to is checked, and the connection is then pinned to the checked address (`pinnedLookup`), so a DNS
// answer that changes between the check and the connection (rebinding) cannot reach another host.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP } from "node:net";

/** Resolves a host name to every address it has (node:dns `lookup` with `all: true`). Injected in
 * tests to make a name resolve where the test needs it. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });

/** What an address is when it is not a public unicast one (e.g. "loopback"), or undefined when it is
 * public. Accepts IPv4 and IPv6 text, IPv6 with or without brackets or a zone (`fe80::1%eth0`).
 * IPv4 embedded in IPv6 (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is judged by
 * the IPv4 address it carries. Anything that is not an address at all counts as not public. */
export function nonPublicKind(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const version = isIP(bare);
  if (version === 4) return ipv4Kind(parseIPv4(bare));
  if (version === 6) return ipv6Kind(parseIPv6(bare));
  return "not an IP address";
}

/** Every address the host resolved to, each one checked (unless private targets are allowed); the
 * connection goes to one of these and nowhere else. Never empty. */
export interface CheckedTarget {
  addresses: Array<{ address: string; family: 4 | 6 }>;
}

/** Why a target was refused; `message` says how to allow it. Carries no secret. */
export class PrivateTargetError extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
    readonly kind: string,
  ) {
    super(
      host === address
        ? `refused to connect to ${host}: a ${kind} address; set \`allowPrivateTargets: true\` on the channel to allow private targets`
        : `refused to connect to ${host}: it resolves to ${address}, a ${kind} address; set \`allowPrivateTargets: true\` on the channel to allow private targets`,
    );
    this.name = "PrivateTargetError";
  }
}

/** Resolves `hostname` (a URL's hostname: an IP literal, bracketed for IPv6, or a name) and checks every
 * address it has; throws PrivateTargetError on the first non-public one unless `allowPrivate`. */
export async function checkTarget(
  hostname: string,
  options: { allowPrivate: boolean; resolve?: Resolver },
): Promise<CheckedTarget> {
  const bare = hostname.replace(/^\[|\]$/g, "");
  const literal = isIP(bare);
  const addresses: LookupAddress[] =
    literal !== 0
      ? [{ address: bare, family: literal }]
      : await (options.resolve ?? systemResolver)(bare);
  if (addresses.length === 0) throw new Error(`${bare} resolved to no address`);
  if (!options.allowPrivate) {
    for (const { address } of addresses) {
      const kind = nonPublicKind(address);
      if (kind !== undefined) throw new PrivateTargetError(bare, address, kind);
    }
  }
  return {
    addresses: addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 })),
  };
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A `lookup` for node:http(s) `request` that answers every query with the checked addresses (all of
 * them when asked for all, as Node's happy-eyeballs connect does; else the first), so the socket goes
 * where the check looked, while TLS still verifies the certificate against the host name. */
export function pinnedLookup(target: CheckedTarget) {
  return (_hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    const [first] = target.addresses;
    if (options.all) callback(null, target.addresses);
    else if (first !== undefined) callback(null, first.address, first.family);
    else callback(Object.assign(new Error("no checked address"), { code: "ENOTFOUND" }), "");
  };
}

// --- IPv4 -------------------------------------------------------------------------------------------

/** [first address, prefix length, kind]. Sources: IANA IPv4 Special-Purpose Address Registry. */
const IPV4_RANGES: ReadonlyArray<readonly [string, number, string]> = [
  ["0.0.0.0", 8, "unspecified (this-network)"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "carrier-grade NAT (CGNAT)"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved (IETF protocol assignments)"],
  ["192.0.2.0", 24, "reserved (documentation)"],
  ["192.88.99.0", 24, "reserved (6to4 relay anycast)"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved (benchmarking)"],
  ["198.51.100.0", 24, "reserved (documentation)"],
  ["203.0.113.0", 24, "reserved (documentation)"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved (including broadcast)"],
];

const IPV4_TABLE = IPV4_RANGES.map(([base, bits, kind]) => ({
  base: parseIPv4(base),
  mask: bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0,
  kind,
}));

function parseIPv4(text: string): number {
  return text.split(".").reduce((acc, part) => ((acc << 8) | Number(part)) >>> 0, 0);
}

function ipv4Kind(value: number): string | undefined {
  return IPV4_TABLE.find((r) => (value & r.mask) >>> 0 === r.base)?.kind;
}

// --- IPv6 -------------------------------------------------------------------------------------------

/** Eight 16-bit groups from valid IPv6 text (checked by `isIP` first), `::` and a dotted tail included. */
function parseIPv6(text: string): number[] {
  let head = text;
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(head);
  if (dotted?.[1] !== undefined) {
    const v4 = parseIPv4(dotted[1]);
    tail.push(v4 >>> 16, v4 & 0xffff);
    head = head.slice(0, -dotted[1].length);
    // "::ffff:1.2.3.4" leaves "::ffff:", "1::1.2.3.4" leaves "1::": drop one trailing colon unless "::".
    if (head.endsWith(":") && !head.endsWith("::")) head = head.slice(0, -1);
  }
  const groups = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const gap = head.indexOf("::");
  const left = gap === -1 ? groups(head) : groups(head.slice(0, gap));
  const right = gap === -1 ? [] : groups(head.slice(gap + 2));
  const zeros = 8 - left.length - right.length - tail.length;
  return [...left, ...new Array<number>(Math.max(zeros, 0)).fill(0), ...right, ...tail];
}

function ipv6Kind(g: number[]): string | undefined {
  const at = (i: number) => g[i] ?? 0;
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  const embedded = (hi: number, lo: number) => ((hi << 16) | lo) >>> 0;
  if (zeroUpTo(8)) return "unspecified";
  if (zeroUpTo(7) && at(7) === 1) return "loopback";
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (the deprecated compatible form): the IPv4 address decides.
  if (zeroUpTo(5) && at(5) === 0xffff) {
    const kind = ipv4Kind(embedded(at(6), at(7)));
    return kind === undefined ? undefined : `${kind} (IPv4-mapped)`;
  }
  if (zeroUpTo(4) && at(4) === 0xffff && at(5) === 0) {
    const kind = ipv4Kind(embedded(at(6), at(7)));
    return kind === undefined ? undefined : `${kind} (IPv4-translated)`;
  }
  if (zeroUpTo(6)) return "reserved (IPv4-compatible)";
  if (at(0) === 0x64 && at(1) === 0xff9b && g.slice(2, 6).every((x) => x === 0)) {
    const kind = ipv4Kind(embedded(at(6), at(7)));
    return kind === undefined ? undefined : `${kind} (NAT64)`;
  }
  if (at(0) === 0x64 && at(1) === 0xff9b && at(2) === 1) return "reserved (local-use NAT64)";
  if (at(0) === 0x2002) {
    const kind = ipv4Kind(embedded(at(1), at(2)));
    return kind === undefined ? undefined : `${kind} (6to4)`;
  }
  if (at(0) === 0x100 && g.slice(1, 4).every((x) => x === 0)) return "reserved (discard)";
  if (at(0) === 0x2001 && at(1) === 0xdb8) return "reserved (documentation)";
  if ((at(0) & 0xfe00) === 0xfc00) return "unique-local";
  if ((at(0) & 0xffc0) === 0xfe80) return "link-local";
  if ((at(0) & 0xffc0) === 0xfec0) return "site-local (deprecated)";
  if ((at(0) & 0xff00) === 0xff00) return "multicast";
  return undefined;
}
