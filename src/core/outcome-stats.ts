// Review metrics kept pre-aggregated by the SQL stores: one counter per (hour decided, action, status,
// method, review-duration bucket), bumped in the same transaction as the transition that settles a
// request. The dashboard then sums a window's counters instead of reading every decided request, so
// its cost depends on the window's hours and the kinds of gates, not on how many were decided.
// Counts and rates are exact; review-duration percentiles are read from the buckets (see below).
import { type Metrics, type MetricsBucket, outcomeFigures, type Percentiles } from "./metrics.js";
import type { ApprovalRequest, AuditDraft, Method } from "./schemas.js";
import { AUTOMATIC_METHODS, TERMINAL_EVENT_TYPES } from "./state.js";

export const HOUR_MS = 3600_000;

/** Upper bounds (exclusive) of the review-duration buckets, in ms; the last bucket is open. A
 * percentile is interpolated inside its bucket, so it is off by at most the bucket's width: under a
 * second up to 1 s, then at most 60 % of the value (e.g. a true 3 min reads between 2 and 5 min). */
export const DURATION_BOUNDS_MS: readonly number[] = [
  1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000,
  1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000, 43_200_000, 86_400_000, 172_800_000,
  259_200_000, 604_800_000,
];

/** One counter: how many requests settled in that hour with that action, status and method, whose
 * review took a time in that bucket. */
export interface OutcomeStat {
  hour: number;
  action: string;
  status: string;
  /** "" when the request settled without a method. */
  method: string;
  bucket: number;
  n: number;
}

export function durationBucket(ms: number): number {
  for (let i = 0; i < DURATION_BOUNDS_MS.length; i++) {
    if (ms < (DURATION_BOUNDS_MS[i] as number)) return i;
  }
  return DURATION_BOUNDS_MS.length;
}

/** The same bucketing in SQL, for filling the counters from stored requests: `ms` is an expression. */
export function durationBucketSql(ms: string): string {
  const cases = DURATION_BOUNDS_MS.map((b, i) => `WHEN ${ms} < ${b} THEN ${i}`).join(" ");
  return `CASE ${cases} ELSE ${DURATION_BOUNDS_MS.length} END`;
}

/** The counter a write bumps when it settles `next` (status leaves pending only once, by a decision,
 * a timeout or a cancellation, which each append their event in the same write), or undefined. */
export function settledStat(
  next: ApprovalRequest,
  drafts: readonly AuditDraft[],
): Omit<OutcomeStat, "n"> | undefined {
  if (next.status === "pending") return undefined;
  if (!drafts.some((d) => TERMINAL_EVENT_TYPES.has(d.type))) return undefined;
  const decidedAt = next.decision?.decidedAt ?? next.updatedAt;
  return {
    hour: Math.floor(decidedAt / HOUR_MS),
    action: next.action,
    status: next.status,
    method: next.decision?.method ?? "",
    bucket: durationBucket(decidedAt - next.createdAt),
  };
}

/** The dashboard's figures from the counters of a window (see computeMetrics for the same figures
 * from one row per request). */
export function metricsFromStats(
  stats: readonly OutcomeStat[],
  pending: number,
  executionUnknown = 0,
): Metrics {
  const byAction = new Map<string, OutcomeStat[]>();
  for (const s of stats) {
    const list = byAction.get(s.action) ?? [];
    list.push(s);
    byAction.set(s.action, list);
  }
  return {
    ...bucketOf(stats),
    pending,
    executionUnknown,
    byAction: Object.fromEntries([...byAction].map(([a, list]) => [a, bucketOf(list)])),
  };
}

function bucketOf(stats: readonly OutcomeStat[]): MetricsBucket {
  const byOutcome: Record<string, number> = {};
  const histogram = new Array<number>(DURATION_BOUNDS_MS.length + 1).fill(0);
  let total = 0;
  for (const s of stats) {
    total += s.n;
    byOutcome[s.status] = (byOutcome[s.status] ?? 0) + s.n;
    // Review time is a person's: automatic settlements and timeouts are left out, as computeMetrics does.
    if (s.method === "" || !AUTOMATIC_METHODS.has(s.method as Method)) {
      histogram[s.bucket] = (histogram[s.bucket] ?? 0) + s.n;
    }
  }
  return {
    ...outcomeFigures(total, byOutcome),
    reviewDurationMs: percentiles(histogram),
  };
}

/** Nearest-rank percentiles, each interpolated linearly inside the bucket holding its rank. */
function percentiles(histogram: number[]): Percentiles | undefined {
  const count = histogram.reduce((a, b) => a + b, 0);
  if (count === 0) return undefined;
  const at = (p: number) => {
    const rank = Math.min(count, Math.max(1, Math.ceil(p * count)));
    let seen = 0;
    for (let i = 0; i < histogram.length; i++) {
      const n = histogram[i] as number;
      if (seen + n >= rank) {
        const low = i === 0 ? 0 : (DURATION_BOUNDS_MS[i - 1] as number);
        const high = DURATION_BOUNDS_MS[i];
        if (high === undefined) return low;
        return Math.round(low + ((high - low) * (rank - seen)) / n);
      }
      seen += n;
    }
    return 0;
  };
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99) };
}
