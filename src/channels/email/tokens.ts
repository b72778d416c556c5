// Signed tokens of the email channel. Both are HMAC-SHA256 with the channel's `linkSecret`, each
// under its own label so one kind can never pass for the other:
// - a link token (in `/l/<token>`) carries what one click decides, for whom, until when, and a nonce
//   shared by the links of one mail (the decision's idempotency key: the mail's links work once);
// - a reply token (in `<local>+<token>@<domain>`) binds a request to the one address it was sent
//   to. Mail software may change the case of an address, so it is lower-case base32 of fixed length.
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
    typeof c.n !== "string"
  ) {
    return undefined;
  }
  return c as unknown as LinkClaims;
}

// Request ids are `req_` and a lower-case ULID (26 characters); the reply token keeps the ULID.
const ID_PREFIX = "req_";
const ULID = /^[0-9a-z]{26}$/;
const MAC_CHARS = 20; // 100 bits of base32
export const REPLY_TOKEN_LENGTH = 26 + MAC_CHARS;

/** The reply token for (request, recipient), or undefined for an id that is not a request id. */
export function replyToken(
  secret: string,
  requestId: string,
  recipient: string,
): string | undefined {
  const ulid = requestId.startsWith(ID_PREFIX) ? requestId.slice(ID_PREFIX.length) : "";
  if (!ULID.test(ulid)) return undefined;
  return ulid + replyMac(secret, requestId, recipient);
}

/** The request id in a reply token when the token was issued to `sender`; undefined otherwise (a
 * forged token, or one sent to someone else). */
export function verifyReplyToken(
  secret: string,
  token: string,
  sender: string,
): string | undefined {
  const t = token.toLowerCase();
  if (t.length !== REPLY_TOKEN_LENGTH) return undefined;
  const ulid = t.slice(0, 26);
  if (!ULID.test(ulid)) return undefined;
  const requestId = ID_PREFIX + ulid;
  const expected = Buffer.from(replyMac(secret, requestId, sender));
  return sameBytes(Buffer.from(t.slice(26)), expected) ? requestId : undefined;
}

function replyMac(secret: string, requestId: string, recipient: string): string {
  const digest = mac(secret, "reply", `${requestId}\n${recipient.trim().toLowerCase()}`);
  return base32(digest).slice(0, MAC_CHARS);
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
