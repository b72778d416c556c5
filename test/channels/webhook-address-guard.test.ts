import { describe, expect, it } from "vitest";
import {
  checkTarget,
  nonPublicKind,
  PrivateTargetError,
  pinnedLookup,
  type Resolver,
} from "../../src/channels/address-guard.js";

describe("nonPublicKind", () => {
  const cases: Array<[string, string | undefined]> = [
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.20.30.40", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "carrier-grade NAT (CGNAT)"],
    ["169.254.169.254", "link-local"],
    ["0.0.0.0", "unspecified (this-network)"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "reserved (including broadcast)"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["fe80::1%eth0", "link-local"],
    ["fd12:3456::1", "unique-local"],
    ["fc00::1", "unique-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback (IPv4-mapped)"],
    ["::ffff:7f00:1", "loopback (IPv4-mapped)"],
    ["0:0:0:0:0:ffff:a00:1", "private (IPv4-mapped)"],
    ["::ffff:0:192.168.0.1", "private (IPv4-translated)"],
    ["64:ff9b::a9fe:a9fe", "link-local (NAT64)"],
    ["2002:7f00:1::1", "loopback (6to4)"],
    ["::127.0.0.1", "reserved (IPv4-compatible)"],
    ["2001:db8::1", "reserved (documentation)"],
    ["not-an-address", "not an IP address"],
    // Public: nothing to say.
    ["8.8.8.8", undefined],
    ["172.32.0.1", undefined],
    ["100.128.0.1", undefined],
    ["1.1.1.1", undefined],
    ["::ffff:8.8.8.8", undefined],
    ["64:ff9b::808:808", undefined],
    ["2606:4700:4700::1111", undefined],
    ["2a00:1450:4001:82b::200e", undefined],
  ];
  for (const [address, kind] of cases) {
    it(`${address} → ${kind ?? "public"}`, () => {
      expect(nonPublicKind(address)).toBe(kind);
    });
  }
});

describe("checkTarget", () => {
  const answers =
    (...addresses: string[]): Resolver =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

  it("returns every address a public name has", async () => {
    const target = await checkTarget("hooks.example.test", {
      allowPrivate: false,
      resolve: answers("93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"),
    });
    expect(target.addresses).toEqual([
      { address: "93.184.215.14", family: 4 },
      { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 },
    ]);
  });

  it("refuses when any address is private, naming it and the way to allow it", async () => {
    const attempt = checkTarget("hooks.example.test", {
      allowPrivate: false,
      resolve: answers("93.184.215.14", "fd00::5"),
    });
    await expect(attempt).rejects.toBeInstanceOf(PrivateTargetError);
    await expect(attempt).rejects.toThrow(
      "refused to connect to hooks.example.test: it resolves to fd00::5, a unique-local address; set `allowPrivateTargets: true`",
    );
  });

  it("checks an IP literal without resolving it", async () => {
    const resolve: Resolver = async () => {
      throw new Error("must not be called");
    };
    await expect(checkTarget("[::1]", { allowPrivate: false, resolve })).rejects.toThrow(
      "refused to connect to ::1: a loopback address",
    );
    expect(await checkTarget("[::1]", { allowPrivate: true, resolve })).toEqual({
      addresses: [{ address: "::1", family: 6 }],
    });
  });

  it("allowPrivate lets private addresses through", async () => {
    const target = await checkTarget("intranet.test", {
      allowPrivate: true,
      resolve: answers("10.0.0.7"),
    });
    expect(target.addresses).toEqual([{ address: "10.0.0.7", family: 4 }]);
  });

  it("a name with no address is an error", async () => {
    await expect(
      checkTarget("empty.test", { allowPrivate: true, resolve: answers() }),
    ).rejects.toThrow("resolved to no address");
  });
});

describe("pinnedLookup", () => {
  it("answers with the checked addresses only, whatever name is asked", () => {
    const lookup = pinnedLookup({
      addresses: [
        { address: "93.184.215.14", family: 4 },
        { address: "2606:2800::1", family: 6 },
      ],
    });
    const seen: unknown[] = [];
    lookup("other.example", { all: true }, (error, address) => seen.push(error, address));
    lookup("other.example", {}, (error, address, family) => seen.push(error, address, family));
    expect(seen).toEqual([
      null,
      [
        { address: "93.184.215.14", family: 4 },
        { address: "2606:2800::1", family: 6 },
      ],
      null,
      "93.184.215.14",
      4,
    ]);
  });
});
