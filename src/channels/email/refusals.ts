// Refused inbound attempts (forged or expired links, spoofed replies) are audited, but anyone can
// send them: at most `perMinute` a minute reach the audit log, the rest are only logged, so a flood
// of forged links cannot flood the audit log.
import type { Logger } from "pino";
import type { InboundDeps } from "../types.js";

/** @default 60 */
export const AUDITED_REFUSALS_PER_MINUTE = 60;

export function limitRefusals(
  deps: InboundDeps,
  logger: Logger,
  perMinute = AUDITED_REFUSALS_PER_MINUTE,
): InboundDeps["refuse"] {
  let windowStart = Number.NEGATIVE_INFINITY;
  let count = 0;
  let dropped = 0;
  return async (refusal) => {
    const now = deps.now();
    if (now - windowStart >= 60_000) {
      if (dropped > 0)
        logger.warn({ dropped }, "refusals not audited in the last minute (too many)");
      windowStart = now;
      count = 0;
      dropped = 0;
    }
    if (count >= perMinute) {
      dropped += 1;
      return;
    }
    count += 1;
    await deps.refuse(refusal);
  };
}
