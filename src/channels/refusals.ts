// Refused inbound attempts (forged signatures or links, spoofed replies, unknown users) are audited,
// but anyone can send them: per channel, at most `perMinute` a minute reach the audit log, the rest
// are only counted in the log, so a flood of forged requests cannot flood the audit log (or
// crowd out another channel's refusals).
import type { Logger } from "pino";
import type { InboundDeps } from "./types.js";

/** @default 60 */
export const AUDITED_REFUSALS_PER_MINUTE = 60;

type Refuse = InboundDeps["refuse"];

export function limitRefusals(
  refuse: Refuse,
  now: () => number,
  logger: Logger,
  perMinute = AUDITED_REFUSALS_PER_MINUTE,
): Refuse {
  const windows = new Map<string, { start: number; count: number; dropped: number }>();
  return async (refusal) => {
    const at = now();
    let w = windows.get(refusal.target);
    if (!w || at - w.start >= 60_000) {
      if (w && w.dropped > 0) {
        logger.warn(
          { target: refusal.target, dropped: w.dropped },
          "refusals not audited in the last minute (too many)",
        );
      }
      w = { start: at, count: 0, dropped: 0 };
      windows.set(refusal.target, w);
    }
    if (w.count >= perMinute) {
      w.dropped += 1;
      return;
    }
    w.count += 1;
    await refuse(refusal);
  };
}
