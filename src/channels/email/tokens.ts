// Signed tokens of the email channel. Both are HMAC-SHA256 with the channel's `linkSecret`, each
// under its own label so one kind can never pass for the other:
// - a link token (in `/l/<token>`) carries what one click decides, for whom, until when, and a nonce
//   shared by the links of one mail (the decision's idempotency key: the mail's links work once);
// - a reply token (in `<local>+<token>@<domain>`) binds a request to the one address it was sent
//   to, until an expiry (the mail's links' own), and to the review view the mail showed (its
//   digest is under the MAC, not in the token: a reply to a mail of a view that has changed since
//   does not verify). Mail software may change the case of an address, so it is lower-case base32
//   of fixed length.
// A link token carries the digest of the view its mail showed (`v`) too: the decision is bound to
// it. Tokens signed before views were bound carry none, and approve nothing.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export type LinkOutcome = "approved" | "rejected";
export type LinkMethod = "approve_all" | "skip" | "reject";

export interface LinkClaims {
  /** Request id. */
  r: string;
  /** The recipient's address (lower case). */
  to: string;
  o: LinkOutcome;
  m: LinkMethod;
  /** Expiry, epoch seconds. */
  exp: number;
  /** Shared by the links of one mail. */
  n: string;
  /** The digest of the review view the mail showed (core/review-view.ts); absent from links sent
   * before decisions were bound to views. */
  v?: string;
}

export type LinkCheck =
  | { ok: true; claims: LinkClaims }
  | { ok: false; reason: "malformed" | "forged" | "expired"; claims?: LinkClaims };

export function newNonce(): string {
  return randomBytes(12).toString("base64url");
}

export function signLink(secret: string, claims: LinkClaims): string {
  const body = Buffer.from(JSON.stringify(claims)).toString("base64url");
  return `${body}.${mac(secret, "link", body).toString("base64url")}`;
}

/** Checks the signature first (timing-safe), then the shape, then the expiry. */
export function verifyLink(secret: string, token: string, nowMs: number): LinkCheck {
  if (token.length > 2000) return { ok: false, reason: "malformed" };
  const dot = token.indexOf(".");
  if (dot <= 0 || dot !== token.lastIndexOf(".")) return { ok: false, reason: "malformed" };
  const body = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1), "base64url");
  if (!sameBytes(given, mac(secret, "link", body))) return { ok: false, reason: "forged" };
  const claims = parseClaims(body);
  if (!claims) return { ok: false, reason: "malformed" };
  if (claims.exp * 1000 <= nowMs) return { ok: false, reason: "expired", claims };
  return { ok: true, claims };
}

function parseClaims(body: string): LinkClaims | undefined {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null) return undefined;
  const c = v as Record<string, unknown>;
  const outcomeOk = c.o === "approved" || c.o === "rejected";
  const methodOk = c.m === "approve_all" || c.m === "skip" || c.m === "reject";
  if (
    typeof c.r !== "string" ||
    typeof c.to !== "string" ||
    !outcomeOk ||
    !methodOk ||
    typeof c.exp !== "number" ||
    typeof c.n !== "string" ||
    (c.v !== undefined && (typeof c.v !== "string" || !/^[0-9a-f]{64}$/.test(c.v)))
  ) {
    return undefined;
  }
  return c as unknown as LinkClaims;
}

// Request ids are `req_` and a lower-case ULID (26 characters); the reply token keeps the ULID,
// then the expiry in minutes since the epoch (6 base32 characters: 30 bits, past the year 3900),
// then the MAC. 46 characters in all, so that `<local part ≤ 17>+<token>` fits the 64 of RFC 5321.
const ID_PREFIX = "req_";
const ULID = /^[0-9a-z]{26}$/;
const EXPIRY_CHARS = 6;
const EXPIRY = /^[a-z2-7]{6}$/;
const MAC_CHARS = 14; // 70 bits: each guess costs the forger a mail
export const REPLY_TOKEN_LENGTH = 26 + EXPIRY_CHARS + MAC_CHARS;
/** The MAC of reply tokens sent before they expired: the ULID and this, the same length. */
const LEGACY_MAC_CHARS = 20;

export type ReplyCheck =
  /** `viewDigest`: the digest of the view the mail showed; undefined for a reply address sent
   * before reply addresses were bound to views (it approves nothing). */
  | { ok: true; requestId: string; viewDigest?: string }
  /** Not issued to this sender, altered, or issued for a view of the request that has changed
   * since (these cannot be told apart: the view's digest is under the MAC). */
  | { ok: false; reason: "forged" }
  | { ok: false; reason: "expired"; requestId: string };

/** The reply token for (request, recipient, the digest of the view the mail shows) that works
 * until `expiresMs` (rounded down to the minute: never past the time the mail states), or
 * undefined for an id that is not a request id or an expiry that is not a time. */
export function replyToken(
  secret: string,
  requestId: string,
  recipient: string,
  expiresMs: number,
  viewDigest: string,
): string | undefined {
  const ulid = requestId.startsWith(ID_PREFIX) ? requestId.slice(ID_PREFIX.length) : "";
  if (!ULID.test(ulid) || !Number.isFinite(expiresMs)) return undefined;
  const expiry = base32Number(Math.floor(expiresMs / 60_000), EXPIRY_CHARS);
  return ulid + expiry + replyMac(secret, requestId, expiry, recipient, viewDigest);
}

/** The request a reply token names, read before it is verified (to find the view it must be bound
 * to); undefined when it is not shaped as one. */
export function replyTokenRequest(token: string): string | undefined {
  const t = token.toLowerCase();
  const ulid = t.slice(0, 26);
  return t.length === REPLY_TOKEN_LENGTH && ULID.test(ulid) ? ID_PREFIX + ulid : undefined;
}

/** Whether a reply token was issued to `sender` for the view whose digest is `viewDigest` (the
 * request's current one; a forged token, one sent to someone else and one for a view that has
 * changed are alike "forged") and has not expired at `nowMs`. */
export function verifyReplyToken(
  secret: string,
  token: string,
  sender: string,
  nowMs: number,
  viewDigest: string | undefined,
): ReplyCheck {
  const t = token.toLowerCase();
  if (t.length !== REPLY_TOKEN_LENGTH) return { ok: false, reason: "forged" };
  const ulid = t.slice(0, 26);
  const expiry = t.slice(26, 26 + EXPIRY_CHARS);
  if (!ULID.test(ulid) || !EXPIRY.test(expiry)) return { ok: false, reason: "forged" };
  const requestId = ID_PREFIX + ulid;
  const given = Buffer.from(t.slice(26 + EXPIRY_CHARS));
  const bound =
    viewDigest !== undefined &&
    sameBytes(given, Buffer.from(replyMac(secret, requestId, expiry, sender, viewDigest)));
  // A reply address sent before addresses were bound to views: genuine, bound to no view.
  const unbound =
    !bound && sameBytes(given, Buffer.from(replyMac(secret, requestId, expiry, sender)));
  if (!bound && !unbound) {
    // A reply address sent before they expired (ULID and a 20-character MAC, no expiry) is
    // genuine but has no end: taken as expired, so its owner hears where to decide now.
    const legacy = Buffer.from(legacyReplyMac(secret, requestId, sender));
    return sameBytes(Buffer.from(t.slice(26)), legacy)
      ? { ok: false, reason: "expired", requestId }
      : { ok: false, reason: "forged" };
  }
  if (numberOfBase32(expiry) * 60_000 <= nowMs) return { ok: false, reason: "expired", requestId };
  return bound && viewDigest !== undefined
    ? { ok: true, requestId, viewDigest }
    : { ok: true, requestId };
}

function replyMac(
  secret: string,
  requestId: string,
  expiry: string,
  recipient: string,
  viewDigest?: string,
): string {
  const fields = [requestId, expiry, recipient.trim().toLowerCase()];
  if (viewDigest !== undefined) fields.push(viewDigest);
  return base32(mac(secret, "reply", fields.join("\n"))).slice(0, MAC_CHARS);
}

function legacyReplyMac(secret: string, requestId: string, recipient: string): string {
  const data = `${requestId}\n${recipient.trim().toLowerCase()}`;
  return base32(mac(secret, "reply", data)).slice(0, LEGACY_MAC_CHARS);
}

function mac(secret: string, label: string, data: string): Buffer {
  return createHmac("sha256", secret).update(`airlock-email-${label}\n${data}`).digest();
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

function base32(bytes: Buffer): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** `n` (0 ≤ n < 32^chars) as `chars` base32 digits, most significant first. */
function base32Number(n: number, chars: number): string {
  let out = "";
  let v = Math.max(0, Math.min(n, 32 ** chars - 1));
  for (let i = 0; i < chars; i++) {
    out = (ALPHABET[v % 32] as string) + out;
    v = Math.floor(v / 32);
  }
  return out;
}

function numberOfBase32(digits: string): number {
  let v = 0;
  for (const d of digits) v = v * 32 + ALPHABET.indexOf(d);
  return v;
}
