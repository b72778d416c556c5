// Refused inbound attempts (forged signatures or links, spoofed replies, unknown users) are audited,
// but anyone can send them: per channel, at most `perMinute` a minute reach the audit log, the rest
// are only counted in the log, so a flood of forged requests cannot flood the audit log (or
// crowd out another channel's refusals).
import type { Logger } from "pino";
import type { InboundDeps } from "./types.js";
import { windowLimit } from "./window-limit.js";

/** @default 60 */
export const AUDITED_REFUSALS_PER_MINUTE = 60;

type Refuse = InboundDeps["refuse"];

export function limitRefusals(
  refuse: Refuse,
  now: () => number,
  logger: Logger,
  perMinute = AUDITED_REFUSALS_PER_MINUTE,
): Refuse {
  const audited = windowLimit({
    limit: perMinute,
    windowMs: 60_000,
    onDropped: (target, dropped) =>
      logger.warn({ target, dropped }, "refusals not audited in the last minute (too many)"),
  });
  return async (refusal) => {
    if (audited.take(refusal.target, now())) await refuse(refusal);
  };
}
