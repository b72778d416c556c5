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
