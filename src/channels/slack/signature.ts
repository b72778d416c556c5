// Slack's request signing: `X-Slack-Signature: v0=<hex>` is the HMAC-SHA256, keyed with the app's
// signing secret, of `v0:<X-Slack-Request-Timestamp>:<raw body>`. A timestamp more than five minutes
// from now is refused, so a captured request cannot be replayed later.
import { createHmac, timingSafeEqual } from "node:crypto";

/** How far a request's timestamp may be from this server's clock. */
export const MAX_SIGNATURE_AGE_MS = 5 * 60 * 1000;

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

export function slackSignature(secret: string, timestamp: string, rawBody: string): string {
  const mac = createHmac("sha256", secret).update(`v0:${timestamp}:${rawBody}`).digest("hex");
  return `v0=${mac}`;
}

export function verifySlackSignature(
  secret: string,
  headers: { signature: string | undefined; timestamp: string | undefined },
  rawBody: string,
  nowMs: number,
): SignatureCheck {
  const { signature, timestamp } = headers;
  if (!signature || !timestamp) {
    return {
      ok: false,
      reason: "the X-Slack-Signature or X-Slack-Request-Timestamp header is missing",
    };
  }
  if (!/^\d{1,12}$/.test(timestamp)) {
    return { ok: false, reason: "X-Slack-Request-Timestamp is not a number of seconds" };
  }
  if (Math.abs(nowMs - Number(timestamp) * 1000) > MAX_SIGNATURE_AGE_MS) {
    return {
      ok: false,
      reason:
        "X-Slack-Request-Timestamp is more than 5 minutes from now (a replay, or a clock off)",
    };
  }
  const expected = Buffer.from(slackSignature(secret, timestamp, rawBody));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return {
      ok: false,
      reason: "X-Slack-Signature does not match the body (wrong signing secret?)",
    };
  }
  return { ok: true };
}
