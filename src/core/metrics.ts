// Review metrics computed from the store (not from process memory), so every process reports the same
// figures: outcomes, approval / revision / timeout rates, and how long people took to decide.
import type { Method } from "./schemas.js";
import { AUTOMATIC_METHODS } from "./state.js";
import type { OutcomeRow } from "./store.js";

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
}

export interface MetricsBucket {
  total: number;
  byOutcome: Record<string, number>;
  /** Approved / decided, in 0..1 (0 when nothing was decided); like every rate here, over the
   * requests that ended other than cancelled. */
  approvalRate: number;
  revisionRate: number;
  timeoutRate: number;
  /** Answered with a response (`responded`) / decided: neither an approval nor a rejection. */
  responseRate: number;
  /** Milliseconds from creation to a human decision (automatic and timed-out gates excluded). */
  reviewDurationMs: Percentiles | undefined;
}

export interface Metrics extends MetricsBucket {
  pending: number;
  /** Approved actions not known to have run: claimed, and no outcome before the lease ended. */
  executionUnknown: number;
  byAction: Record<string, MetricsBucket>;
}

export function computeMetrics(rows: OutcomeRow[], pending: number, executionUnknown = 0): Metrics {
  const byAction: Record<string, OutcomeRow[]> = {};
  for (const r of rows) {
    const list = byAction[r.action] ?? [];
    list.push(r);
    byAction[r.action] = list;
  }
  return {
    ...bucket(rows),
    pending,
    executionUnknown,
    byAction: Object.fromEntries(Object.entries(byAction).map(([a, list]) => [a, bucket(list)])),
  };
}

function bucket(rows: OutcomeRow[]): MetricsBucket {
  const byOutcome: Record<string, number> = {};
  for (const r of rows) byOutcome[r.status] = (byOutcome[r.status] ?? 0) + 1;
  const total = rows.length;
  const durations = rows
    .filter((r) => r.method === undefined || !AUTOMATIC_METHODS.has(r.method as Method))
    .map((r) => r.decidedAt - r.createdAt)
    .sort((a, b) => a - b);
  return {
    ...outcomeFigures(total, byOutcome),
    reviewDurationMs: durations.length
      ? { p50: pct(durations, 0.5), p90: pct(durations, 0.9), p99: pct(durations, 0.99) }
      : undefined,
  };
}

/** Nearest-rank percentile of sorted values. */
export function pct(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[i] ?? 0;
}

/** The counts and rates of a bucket, from its total and its count per outcome (shared with the
 * pre-aggregated counters of outcome-stats.ts). */
export function outcomeFigures(
  total: number,
  byOutcome: Record<string, number>,
): Pick<
  MetricsBucket,
  "total" | "byOutcome" | "approvalRate" | "revisionRate" | "timeoutRate" | "responseRate"
> {
  // Over the requests someone or something decided: a cancelled request was withdrawn (by its
  // agent, an admin, or a demo restart), not decided, so it would only dilute every rate.
  const decided = total - (byOutcome.cancelled ?? 0);
  const rate = (n: number | undefined) => (decided <= 0 ? 0 : (n ?? 0) / decided);
  return {
    total,
    byOutcome,
    approvalRate: rate(byOutcome.approved),
    revisionRate: rate(byOutcome.revise),
    timeoutRate: rate(byOutcome.timed_out),
    responseRate: rate(byOutcome.responded),
  };
}
