// Composition of policies. Two ways, because they answer different questions:
// - `firstVerdict`: an ordered list of rules, the first with an opinion decides (like a firewall).
//   Use it when a specific rule should override a general one: put `smallFileWrites` before
//   `confidencePolicy()`.
// - `strictestVerdict`: every policy is asked and the strictest level wins (full > quick > auto), so
//   any one policy can demand a human. Use it when policies are independent safety checks.
// Both return undefined (no opinion) when no policy has one; the engine then uses the request's own
// `level`, or `full`.

import type { Policy, PolicyContext, PolicyVerdict } from "../core/policy.js";
import type { Level } from "../core/schemas.js";

const STRICTNESS: Record<Level, number> = { auto: 0, quick: 1, full: 2 };

/** Asks the policies in order; the first verdict wins and the rest are not asked. */
export function firstVerdict(...policies: Policy[]): Policy {
  return async (ctx: PolicyContext) => {
    for (const policy of policies) {
      const verdict = await policy(ctx);
      if (verdict) return verdict;
    }
    return undefined;
  };
}

/** Asks every policy; the strictest level wins, with the lowest confidence given, and the reason of
 * the first policy that gave the winning level. */
export function strictestVerdict(...policies: Policy[]): Policy {
  return async (ctx: PolicyContext) => {
    const verdicts = (await Promise.all(policies.map((p) => p(ctx)))).filter(
      (v): v is PolicyVerdict => v !== undefined,
    );
    let winner: PolicyVerdict | undefined;
    for (const v of verdicts) {
      if (!winner || STRICTNESS[v.level] > STRICTNESS[winner.level]) winner = v;
    }
    if (!winner) return undefined;
    const result: PolicyVerdict = { level: winner.level };
    if (winner.reason !== undefined) result.reason = winner.reason;
    const confidences = verdicts.flatMap((v) => (v.confidence === undefined ? [] : [v.confidence]));
    if (confidences.length) result.confidence = Math.min(...confidences);
    return result;
  };
}
