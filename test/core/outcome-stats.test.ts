// The dashboard from pre-aggregated counters says what it says from one row per request: the same
// counts and rates, and review-time percentiles inside the bucket that holds the exact one.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { computeMetrics, outcomeFigures } from "../../src/core/metrics.js";
import {
  DURATION_BOUNDS_MS,
  durationBucket,
  HOUR_MS,
  metricsFromStats,
  type OutcomeStat,
} from "../../src/core/outcome-stats.js";
import type { OutcomeRow } from "../../src/core/store.js";

const T0 = 1_800_000_000_000;
const row = fc.record({
  action: fc.constantFrom("deploy", "refund", "files.delete"),
  status: fc.constantFrom("approved", "rejected", "revise", "timed_out", "cancelled"),
  method: fc.constantFrom("approve_all", "reject", "select", "timeout", "auto", undefined),
  createdAt: fc.integer({ min: T0, max: T0 + 7 * 24 * HOUR_MS }),
  took: fc.integer({ min: 0, max: 10 * 24 * HOUR_MS }),
});

function statsOf(rows: OutcomeRow[]): OutcomeStat[] {
  const m = new Map<string, OutcomeStat>();
  for (const r of rows) {
    const s = {
      hour: Math.floor(r.decidedAt / HOUR_MS),
      action: r.action,
      status: r.status,
      method: r.method ?? "",
      bucket: durationBucket(r.decidedAt - r.createdAt),
    };
    const k = JSON.stringify(s);
    const known = m.get(k);
    if (known) known.n++;
    else m.set(k, { ...s, n: 1 });
  }
  return [...m.values()];
}

/** The bounds of the bucket holding `ms`. */
function bucketRange(ms: number): [number, number] {
  const b = durationBucket(ms);
  return [b === 0 ? 0 : (DURATION_BOUNDS_MS[b - 1] as number), DURATION_BOUNDS_MS[b] ?? Infinity];
}

describe("metrics from the counters", () => {
  it("have the exact counts and rates, and each percentile in the exact one's bucket", () => {
    fc.assert(
      fc.property(fc.array(row, { minLength: 0, maxLength: 300 }), fc.nat(50), (raw, pending) => {
        const rows: OutcomeRow[] = raw.map((r) => ({
          action: r.action,
          status: r.status as OutcomeRow["status"],
          method: r.method,
          createdAt: r.createdAt,
          decidedAt: r.createdAt + r.took,
        }));
        const exact = computeMetrics(rows, pending);
        const approx = metricsFromStats(statsOf(rows), pending);
        expect(approx.total).toBe(exact.total);
        expect(approx.pending).toBe(pending);
        expect(approx.byOutcome).toEqual(exact.byOutcome);
        expect(approx.approvalRate).toBeCloseTo(exact.approvalRate, 12);
        expect(approx.revisionRate).toBeCloseTo(exact.revisionRate, 12);
        expect(approx.timeoutRate).toBeCloseTo(exact.timeoutRate, 12);
        expect(Object.keys(approx.byAction).sort()).toEqual(Object.keys(exact.byAction).sort());
        for (const [action, b] of Object.entries(exact.byAction)) {
          expect(approx.byAction[action]?.byOutcome).toEqual(b.byOutcome);
        }
        if (!exact.reviewDurationMs) {
          expect(approx.reviewDurationMs).toBeUndefined();
          return;
        }
        for (const p of ["p50", "p90", "p99"] as const) {
          const [low, high] = bucketRange(exact.reviewDurationMs[p]);
          const got = approx.reviewDurationMs?.[p] ?? Number.NaN;
          expect(got).toBeGreaterThanOrEqual(low);
          expect(got).toBeLessThanOrEqual(high);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("rates", () => {
  it("leave cancelled requests out: withdrawn, not decided (a demo restart cancels its gates)", () => {
    const f = outcomeFigures(6, { approved: 1, rejected: 1, cancelled: 4 });
    expect(f.total).toBe(6);
    expect(f.byOutcome.cancelled).toBe(4);
    expect(f.approvalRate).toBe(0.5);
    expect(outcomeFigures(3, { cancelled: 3 }).approvalRate).toBe(0);
  });
});
