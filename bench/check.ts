// The guard against sliding back (issue 35): each guarded ratio of a `--check` run against
// bench/baseline.json, with its direction (higher or lower is better); more than THRESHOLD worse
// fails. Pure: no file, no clock, no benchmark (bench/baseline.ts reads and writes the file).

export type Better = "higher" | "lower";

export interface Guarded {
  /** A figure a suite prints; the part before the first dot names the suite. */
  name: string;
  better: Better;
}

/** More than this fraction worse than the baseline fails. */
export const THRESHOLD = 0.15;

/** The ratios the guard compares. Each is measured on both sides in the same run, so the machine's
 * speed mostly cancels out. */
export const GUARDED: readonly Guarded[] = [
  // Airlock's SQLite round trip over LangGraph.js's own on its SQLite checkpointer, interleaved.
  { name: "peer.langgraph_ratio", better: "higher" },
  // The engine's round trip over its own SQL replayed without the engine.
  { name: "sqlite.engine_to_sql_replay_ratio", better: "higher" },
  // A count, not a time: pages each round trip writes to the WAL.
  { name: "sqlite.wal_pages_per_roundtrip", better: "lower" },
  // 64 gates in flight over one at a time, on the same engine.
  { name: "sqlite.concurrent64_to_sequential_ratio", better: "higher" },
  { name: "postgres.engine_to_bare_ratio", better: "higher" },
  { name: "postgres.concurrent64_to_bare_ratio", better: "higher" },
  { name: "http.ops_to_bare_ratio_64_clients", better: "higher" },
  // Decide → long-poll answered at p99 under 64 clients, over the bare server's p99.
  { name: "http.resume_p99_to_bare_ratio_64_clients", better: "lower" },
  // Time of an airlockGate-gated LangGraph round trip over a bare interrupt()'s, interleaved.
  { name: "langgraph.gate_to_interrupt_time_ratio", better: "lower" },
  // A call through `airlock mcp-proxy` over the same call made directly, p50, interleaved.
  { name: "mcp.proxy_to_direct_p50_ratio", better: "lower" },
];

export type Status = "ok" | "worse" | "not measured" | "no baseline";

export interface Verdict {
  name: string;
  better: Better;
  status: Status;
  baseline?: number;
  measured?: number;
  /** How much worse than the baseline, as a fraction (negative: better). */
  worse?: number;
}

/** How much worse `measured` is than `baseline`, as a fraction of the baseline (negative when
 * better), for a figure where `better` is the good direction. */
export function worseBy(better: Better, baseline: number, measured: number): number {
  const change = (measured - baseline) / baseline;
  return better === "higher" ? -change : change;
}

/** Whether `measured` stays within `threshold` of `baseline` in the figure's bad direction. Written
 * as a bound on the measured value (not on worseBy's quotient) so that exactly at the limit passes. */
export function withinLimit(
  better: Better,
  baseline: number,
  measured: number,
  threshold = THRESHOLD,
): boolean {
  if (!Number.isFinite(measured)) return false;
  return better === "higher"
    ? measured >= baseline * (1 - threshold)
    : measured <= baseline * (1 + threshold);
}

/** Each guarded figure of `suites` (all when undefined) judged against the baseline. A figure the
 * run did not print, or the baseline does not hold (or holds as no positive number), fails. */
export function compare(
  baseline: Readonly<Record<string, number>>,
  measured: Readonly<Record<string, number>>,
  options: { suites?: readonly string[]; threshold?: number; guarded?: readonly Guarded[] } = {},
): Verdict[] {
  const threshold = options.threshold ?? THRESHOLD;
  const guarded = options.guarded ?? GUARDED;
  return guarded
    .filter((g) => !options.suites || options.suites.includes(suiteOf(g.name)))
    .map((g): Verdict => {
      const base = baseline[g.name];
      const value = measured[g.name];
      if (base === undefined || !Number.isFinite(base) || base <= 0) {
        return { ...g, status: "no baseline", measured: value };
      }
      if (value === undefined || !Number.isFinite(value)) {
        return { ...g, status: "not measured", baseline: base };
      }
      return {
        ...g,
        status: withinLimit(g.better, base, value, threshold) ? "ok" : "worse",
        baseline: base,
        measured: value,
        worse: worseBy(g.better, base, value),
      };
    });
}

export function passed(verdicts: readonly Verdict[]): boolean {
  return verdicts.every((v) => v.status === "ok");
}

/** The suite a figure comes from: the part of its name before the first dot. */
export function suiteOf(name: string): string {
  return name.split(".", 1)[0] ?? name;
}

/** One line per verdict: the figure, the measured value, the baseline and the direction. */
export function describe(v: Verdict, threshold = THRESHOLD): string {
  const limit = `${Math.round(threshold * 100)} %`;
  const dir = `${v.better} is better`;
  switch (v.status) {
    case "no baseline":
      return `guard FAIL ${v.name}: no baseline in bench/baseline.json (measured ${fmt(v.measured)}, ${dir}); write one on purpose with --write-baseline`;
    case "not measured":
      return `guard FAIL ${v.name}: not measured in this run (baseline ${fmt(v.baseline)}, ${dir})`;
    case "worse":
      return `guard FAIL ${v.name}: ${fmt(v.measured)} against baseline ${fmt(v.baseline)}, ${pct(v.worse)} worse (${dir}; more than ${limit} fails)`;
    case "ok":
      return `guard ok   ${v.name}: ${fmt(v.measured)} against baseline ${fmt(v.baseline)}, ${(v.worse ?? 0) > 0 ? `${pct(v.worse)} worse` : `${pct(-(v.worse ?? 0))} better`} (${dir})`;
  }
}

/** The median of `values` (the mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const upper = sorted[mid] as number;
  return sorted.length % 2 === 1 ? upper : ((sorted[mid - 1] as number) + upper) / 2;
}

function fmt(x: number | undefined): string {
  return x === undefined ? "none" : String(Math.round(x * 1000) / 1000);
}

function pct(fraction: number | undefined): string {
  return `${(Math.round((fraction ?? 0) * 1000) / 10).toFixed(1)} %`;
}

/** The baseline's figures from several runs: the median of each guarded figure. A guarded figure
 * missing from any run is an error naming the run, so that a baseline never rests on fewer runs
 * than it says. */
export function medianFigures(
  runs: readonly Readonly<Record<string, number>>[],
  guarded: readonly Guarded[] = GUARDED,
): Record<string, number> {
  if (runs.length === 0) throw new Error("no run to take a baseline from");
  const out: Record<string, number> = {};
  for (const g of guarded) {
    const values = runs.map((r, i) => {
      const v = r[g.name];
      if (v === undefined || !Number.isFinite(v)) {
        throw new Error(`run ${i + 1} did not measure ${g.name}`);
      }
      return v;
    });
    out[g.name] = median(values);
  }
  return out;
}

/** The figures among `text`'s lines (the bench's JSON lines; any other line is skipped). */
export function parseFigures(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const f = JSON.parse(line) as { name?: unknown; value?: unknown };
      if (typeof f.name === "string" && typeof f.value === "number") out[f.name] = f.value;
    } catch {
      // not a figure
    }
  }
  return out;
}

/** The machine's load during a run, as its `guard:` line says it. */
export interface RunLoad {
  before: number;
  after: number;
  cores: number;
}

/** The line a --check run prints about its time and load. */
export function loadLine(suites: string, seconds: number, load: RunLoad): string {
  return `guard: ${suites} took ${seconds} s; load average ${load.before.toFixed(2)} before, ${load.after.toFixed(2)} after (${load.cores} cores)`;
}

/** The load a run's output says it had (loadLine's line), if it says. */
export function parseLoad(text: string): RunLoad | undefined {
  const m = /load average ([\d.]+) before, ([\d.]+) after \((\d+) cores\)/.exec(text);
  if (!m) return undefined;
  return { before: Number(m[1]), after: Number(m[2]), cores: Number(m[3]) };
}
