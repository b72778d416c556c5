// Shared helpers for the benchmarks: every figure is one JSON line on stdout.
export interface Figure {
  name: string;
  value: number;
  unit: string;
}

/** How a suite runs: `quick` (`--quick`, and `--check`) asks for its short mode: fewer iterations,
 * still both sides of each ratio in the same run. */
export interface BenchOptions {
  quick?: boolean;
}

export type Bench = (options?: BenchOptions) => Promise<Figure[]>;

export function emit(f: Figure): void {
  process.stdout.write(`${JSON.stringify({ ...f, value: Math.round(f.value * 1000) / 1000 })}\n`);
}

export function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[i] ?? 0;
}

/** Runs `step` until `count` iterations or `maxMs` elapsed, whichever first; returns iterations and ms. */
export async function bounded(
  count: number,
  maxMs: number,
  step: (i: number) => Promise<void> | void,
): Promise<{ n: number; ms: number }> {
  const start = performance.now();
  let n = 0;
  while (n < count && performance.now() - start < maxMs) {
    await step(n);
    n++;
  }
  return { n, ms: performance.now() - start };
}

/** What a bounded loop made: steps (round trips, operations) and the ms they took. */
export interface Tally {
  n: number;
  ms: number;
}

/** Steps per second of a tally. */
export function perSecond(t: Tally): number {
  return (t.n / t.ms) * 1000;
}

/** Runs each side's block in turn, `blocks` times over (A B C A B C …), so that every side meets the
 * same machine — on a shared machine its load moves within seconds — and adds up each side's
 * steps and time. A ratio of two sides' rates is then a ratio of the same moments. */
export async function interleaved<K extends string>(
  blocks: number,
  sides: Record<K, (block: number) => Promise<Tally> | Tally>,
): Promise<Record<K, Tally>> {
  const names = Object.keys(sides) as K[];
  const totals = Object.fromEntries(names.map((k) => [k, { n: 0, ms: 0 }])) as Record<K, Tally>;
  for (let b = 0; b < blocks; b++) {
    for (const k of names) {
      const r = await sides[k](b);
      totals[k].n += r.n;
      totals[k].ms += r.ms;
    }
  }
  return totals;
}
