// The email channel's pure parts: link and reply tokens, quoted-text stripping, auto-reply detection.
import { createHmac } from "node:crypto";
import { simpleParser } from "mailparser";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { automaticReason } from "../../src/channels/email/inbound.js";
import { stripQuoted } from "../../src/channels/email/quoted.js";
import {
  replyToken,
  signLink,
  verifyLink,
  verifyReplyToken,
} from "../../src/channels/email/tokens.js";
import { limitRefusals } from "../../src/channels/refusals.js";

const SECRET = "0123456789abcdef0123456789abcdef";
const ID = "req_01jabcdefghjkmnpqrstvwxyz0";
/** The digest of the view a mail showed, and of another view. */
const V = "ab".repeat(32);
const W = "cd".repeat(32);

describe("link tokens", () => {
  const claims = {
    r: ID,
    to: "a@example.com",
    o: "approved",
    m: "approve_all",
    exp: 2000,
    n: "nonce",
  } as const;
  it("verify with the secret until they expire", () => {
    const token = signLink(SECRET, claims);
    expect(verifyLink(SECRET, token, 1_999_000)).toEqual({ ok: true, claims });
    expect(verifyLink(SECRET, token, 2_000_000)).toMatchObject({ ok: false, reason: "expired" });
    expect(verifyLink(`${SECRET}x`, token, 0)).toMatchObject({ ok: false, reason: "forged" });
    expect(verifyLink(SECRET, "nodot", 0)).toMatchObject({ ok: false, reason: "malformed" });
  });
  it("carry the digest of the view their mail showed, signed; a malformed one is refused", () => {
    const bound = signLink(SECRET, { ...claims, v: V });
    expect(verifyLink(SECRET, bound, 0)).toEqual({ ok: true, claims: { ...claims, v: V } });
    // Another view written into the token breaks its signature.
    const [body, mac] = bound.split(".");
    const swapped = Buffer.from(
      Buffer.from(body ?? "", "base64url")
        .toString()
        .replace(V, W),
    ).toString("base64url");
    expect(verifyLink(SECRET, `${swapped}.${mac}`, 0)).toMatchObject({ reason: "forged" });
    const odd = signLink(SECRET, { ...claims, v: "not-a-digest" });
    expect(verifyLink(SECRET, odd, 0)).toMatchObject({ ok: false, reason: "malformed" });
  });
});

/** The first `chars` base32 characters of the reply MAC of `data`, as tokens.ts computes it. */
function base32Mac(data: string, chars: number): string {
  const digest = createHmac("sha256", SECRET).update(`airlock-email-reply\n${data}`).digest();
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
  let bits = "";
  for (const byte of digest) bits += byte.toString(2).padStart(8, "0");
  let mac = "";
  for (let i = 0; i < chars; i++) mac += alphabet[Number.parseInt(bits.slice(i * 5, i * 5 + 5), 2)];
  return mac;
}

describe("reply tokens", () => {
  const NOW = Date.UTC(2026, 10, 27, 9, 0, 0);
  const HOUR = 3_600_000;

  it("bind a request to one address, whatever its case, until they expire", () => {
    const token = replyToken(SECRET, ID, "Alice@Example.com", NOW + HOUR, V) as string;
    expect(token).toMatch(/^[a-z0-9]{46}$/);
    expect(verifyReplyToken(SECRET, token.toUpperCase(), "alice@example.com", NOW, V)).toEqual({
      ok: true,
      requestId: ID,
      viewDigest: V,
    });
    expect(verifyReplyToken(SECRET, token, "alice@example.com", NOW + HOUR - 1, V).ok).toBe(true);
    expect(verifyReplyToken(SECRET, token, "alice@example.com", NOW + HOUR, V)).toEqual({
      ok: false,
      reason: "expired",
      requestId: ID,
    });
    expect(verifyReplyToken(SECRET, token, "bob@example.com", NOW, V)).toEqual({
      ok: false,
      reason: "forged",
    });
    expect(verifyReplyToken(`${SECRET}x`, token, "alice@example.com", NOW, V).ok).toBe(false);
    // Checked for whom and by whom before when: an expired token of someone else is forged.
    for (const [secret, sender] of [
      [`${SECRET}x`, "alice@example.com"],
      [SECRET, "bob@example.com"],
    ]) {
      expect(
        verifyReplyToken(secret as string, token, sender as string, NOW + 2 * HOUR, V),
      ).toEqual({
        ok: false,
        reason: "forged",
      });
    }
    expect(replyToken(SECRET, "not-a-request-id", "a@example.com", NOW, V)).toBeUndefined();
  });

  it("round a partial minute down, and sign the expiry: a later one written in is forged", () => {
    const token = replyToken(SECRET, ID, "alice@example.com", NOW + 59_999, V) as string;
    expect(verifyReplyToken(SECRET, token, "alice@example.com", NOW - 1, V).ok).toBe(true);
    expect(verifyReplyToken(SECRET, token, "alice@example.com", NOW, V)).toMatchObject({
      reason: "expired",
    });
    expect(replyToken(SECRET, ID, "alice@example.com", Number.NaN, V)).toBeUndefined();
    const later = replyToken(SECRET, ID, "alice@example.com", NOW + 1000 * HOUR, V) as string;
    const spliced = token.slice(0, 26) + later.slice(26, 32) + token.slice(32);
    expect(spliced).not.toBe(token);
    expect(verifyReplyToken(SECRET, spliced, "alice@example.com", NOW, V)).toEqual({
      ok: false,
      reason: "forged",
    });
    // Not base32 where the expiry goes.
    const bad = `${token.slice(0, 26)}000000${token.slice(32)}`;
    expect(verifyReplyToken(SECRET, bad, "alice@example.com", NOW, V)).toEqual({
      ok: false,
      reason: "forged",
    });
  });
  it("bind the view the mail showed: a view that changed since does not verify", () => {
    const token = replyToken(SECRET, ID, "alice@example.com", NOW + HOUR, V) as string;
    expect(verifyReplyToken(SECRET, token, "alice@example.com", NOW, V)).toMatchObject({
      ok: true,
      viewDigest: V,
    });
    for (const other of [W, undefined]) {
      expect(verifyReplyToken(SECRET, token, "alice@example.com", NOW, other)).toEqual({
        ok: false,
        reason: "forged",
      });
    }
    // A reply address sent before addresses were bound to views (the MAC of id, expiry and
    // address only) is genuine, bound to no view: it verifies without a digest.
    const expiry = token.slice(26, 32);
    const unbound = ID.slice(4) + expiry + base32Mac(`${ID}\n${expiry}\nalice@example.com`, 14);
    expect(verifyReplyToken(SECRET, unbound, "alice@example.com", NOW, V)).toEqual({
      ok: true,
      requestId: ID,
    });
    expect(verifyReplyToken(SECRET, unbound, "bob@example.com", NOW, V)).toMatchObject({
      reason: "forged",
    });
  });

  it("take a reply address sent before they expired (no expiry in it) as expired, not forged", () => {
    // That format: the ULID, then the first 20 base32 characters of the HMAC of id and address.
    const digest = createHmac("sha256", SECRET)
      .update(`airlock-email-reply\n${ID}\nalice@example.com`)
      .digest();
    const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
    let bits = "";
    for (const byte of digest) bits += byte.toString(2).padStart(8, "0");
    let mac = "";
    for (let i = 0; i < 20; i++) mac += alphabet[Number.parseInt(bits.slice(i * 5, i * 5 + 5), 2)];
    const legacy = ID.slice(4) + mac;
    expect(verifyReplyToken(SECRET, legacy, "alice@example.com", NOW, V)).toEqual({
      ok: false,
      reason: "expired",
      requestId: ID,
    });
    expect(verifyReplyToken(SECRET, legacy, "bob@example.com", NOW, V)).toEqual({
      ok: false,
      reason: "forged",
    });
  });
});

describe("stripQuoted", () => {
  it("keeps what was written above the quoted mail", () => {
    expect(
      stripQuoted(
        "SELECT 1,3\n\nOn Mon, Nov 23, 2026 at 9:00 AM Airlock <\nairlock@x> wrote:\n> APPROVE ALL",
      ),
    ).toBe("SELECT 1,3");
    expect(stripQuoted("REVISE shorter\nplease\n-----Original Message-----\nFrom: x")).toBe(
      "REVISE shorter\nplease",
    );
    expect(stripQuoted("> APPROVE ALL\nSKIP")).toBe("SKIP");
    expect(stripQuoted("APPROVE\n-- \nAlice")).toBe("APPROVE");
  });
});

describe("automaticReason", () => {
  const parse = (headers: string) =>
    simpleParser(`${headers}\r\nFrom: a@example.com\r\n\r\nAPPROVE ALL`);
  it("flags RFC 3834 auto-replies, bulk mail and autoresponders, not people", async () => {
    expect(automaticReason(await parse("Auto-Submitted: auto-replied"))).toContain(
      "Auto-Submitted",
    );
    expect(automaticReason(await parse("Auto-Submitted: no"))).toBeUndefined();
    expect(automaticReason(await parse("Precedence: junk"))).toContain("Precedence");
    expect(automaticReason(await parse("X-Autoreply: yes"))).toBe("X-Autoreply");
    expect(automaticReason(await parse("X-Autorespond: yes"))).toBe("X-Autorespond");
    expect(automaticReason(await parse("Subject: hi"))).toBeUndefined();
    expect(automaticReason(await parse("Subject: hi"), { mailFrom: "" })).toContain("bounce");
  });
});

describe("limitRefusals", () => {
  it("audits at most the given number of refusals a minute, counted per channel", async () => {
    let now = 0;
    const audited: string[] = [];
    const refuse = limitRefusals(
      async (r) => {
        audited.push(`${r.target}:${r.reason}`);
      },
      () => now,
      pino({ level: "silent" }),
      2,
    );
    for (const reason of ["a", "b", "c"])
      await refuse({ channel: "email", target: "mail", reason });
    // Another channel's flood does not use up this one's share.
    await refuse({ channel: "slack", target: "ops", reason: "x" });
    now = 60_000;
    await refuse({ channel: "email", target: "mail", reason: "d" });
    expect(audited).toEqual(["mail:a", "mail:b", "ops:x", "mail:d"]);
  });
});
