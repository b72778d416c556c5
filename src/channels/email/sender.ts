// Whether a reply's From address was really its sender's. The header From is whatever the sender
// wrote; a reply decides as the reviewer it names only when the envelope agrees with it (SMTP
// MAIL FROM, or the Return-Path the receiving server wrote from it) and, when the inbound server is
// known to add Authentication-Results (`inbound.authservId`), when that server saw a DMARC pass or
// a DKIM signature of the From address's domain. Even then a reply proves only that someone could
// send mail as that address through this path.
import type { ParsedMail } from "mailparser";
import type { Envelope } from "./inbound.js";

/** Why the reply's From is not proven (undefined when it is). `sender`: the From address, lower case. */
export function senderProblem(
  mail: ParsedMail,
  envelope: Envelope,
  sender: string,
  authservId: string | undefined,
): string | undefined {
  const bounce = typeof envelope.mailFrom === "string" ? envelope.mailFrom : returnPath(mail);
  if (bounce !== undefined && bounce.trim().toLowerCase() !== sender) {
    return `its envelope sender (MAIL FROM) is ${JSON.stringify(clipped(bounce))}, not the From address: mail decides only when it is sent as the reviewer's own address`;
  }
  if (authservId === undefined) return undefined;
  const results = authenticationResults(mail, authservId);
  if (!results) {
    return `it carries no Authentication-Results from ${authservId}, the inbound server configured to check DKIM and DMARC`;
  }
  const domain = sender.slice(sender.lastIndexOf("@") + 1);
  const pass = results.some(
    (r) =>
      r.result === "pass" &&
      ((r.method === "dmarc" && (r.props["header.from"] ?? domain) === domain) ||
        (r.method === "dkim" && aligned(signingDomain(r.props), domain))),
  );
  if (pass) return undefined;
  const seen = results
    .filter((r) => r.method === "dkim" || r.method === "dmarc")
    .map((r) => `${r.method}=${r.result}${r.props["header.d"] ? ` (${r.props["header.d"]})` : ""}`);
  return `Authentication-Results from ${authservId} show neither dmarc=pass nor dkim=pass for ${domain} (${seen.join(", ") || "no dkim or dmarc result"})`;
}

/** The address in Return-Path, which the receiving server writes from MAIL FROM; undefined when the
 * mail has none (the webhook of a service that leaves it out). */
function returnPath(mail: ParsedMail): string | undefined {
  const line = mail.headerLines.find((l) => l.key === "return-path");
  if (!line) return undefined;
  const value = line.line.slice(line.line.indexOf(":") + 1).trim();
  return /^<([^>]*)>/.exec(value)?.[1] ?? value;
}

interface Result {
  method: string;
  result: string;
  props: Record<string, string>;
}

/** The results of the topmost Authentication-Results header from `authservId`: the receiving server
 * adds its own above everything the sender wrote, so a forged one further down never counts. */
function authenticationResults(mail: ParsedMail, authservId: string): Result[] | undefined {
  const id = authservId.toLowerCase();
  for (const h of mail.headerLines) {
    if (h.key !== "authentication-results") continue;
    const text = withoutComments(
      h.line.slice(h.line.indexOf(":") + 1).replace(/\r?\n[ \t]+/g, " "),
    );
    const [head = "", ...rest] = text.split(";");
    // authserv-id [version]
    if (head.trim().split(/\s+/)[0]?.toLowerCase() !== id) continue;
    return rest.map(parseResult).filter((r): r is Result => r !== undefined);
  }
  return undefined;
}

/** `dkim=pass header.d=example.com header.s=sel` → method, result and properties. */
function parseResult(text: string): Result | undefined {
  const [first, ...props] = text.trim().split(/\s+/);
  const m = /^([a-z0-9_-]+)=([a-z]+)$/i.exec(first ?? "");
  if (!m?.[1] || !m[2]) return undefined;
  const out: Result = { method: m[1].toLowerCase(), result: m[2].toLowerCase(), props: {} };
  for (const p of props) {
    const eq = p.indexOf("=");
    if (eq > 0)
      out.props[p.slice(0, eq).toLowerCase()] = p
        .slice(eq + 1)
        .replace(/^"|"$/g, "")
        .toLowerCase();
  }
  return out;
}

/** The domain that signed: header.d, else the domain of header.i. */
function signingDomain(props: Record<string, string>): string | undefined {
  const i = props["header.i"];
  return props["header.d"] ?? (i ? i.slice(i.lastIndexOf("@") + 1) : undefined);
}

/** Relaxed alignment, as DMARC takes it: the signing domain is the From domain or a parent of it. */
function aligned(signer: string | undefined, from: string): boolean {
  // A signer without a dot (a top-level domain) aligns with nothing.
  return signer?.includes(".") === true && (from === signer || from.endsWith(`.${signer}`));
}

/** RFC 5322 comments (`(…)`, nested) removed. */
function withoutComments(s: string): string {
  let out = "";
  let depth = 0;
  for (const c of s) {
    if (c === "(") depth++;
    else if (c === ")" && depth > 0) depth--;
    else if (depth === 0) out += c;
  }
  return out;
}

function clipped(s: string): string {
  return s.length > 254 ? `${s.slice(0, 254)}…` : s;
}
