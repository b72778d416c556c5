// `npm run bench`: prints one JSON line per figure, {"name", "value", "unit"}. Every loop is bounded
// in count and time; everything runs on this machine (files in a temp folder, loopback only).
// `npm run bench -- --check`: the suites with guarded ratios in their short mode, then each ratio
// against bench/baseline.json (check.ts); see docs/reference/performance.md, "The guard".
import { existsSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { type BenchArgs, parseArgs } from "./args.js";
import { readBaseline, writeBaseline } from "./baseline.js";
import {
  compare,
  describe,
  GUARDED,
  loadLine,
  medianFigures,
  parseFigures,
  parseLoad,
  passed,
  type RunLoad,
  THRESHOLD,
} from "./check.js";
import { type Bench, emit } from "./figures.js";

interface Suite {
  name: string;
  file: string;
  fn: string;
  /** Whether it has a short mode (`--quick`); the guard runs only those. */
  short: boolean;
}

/** Each suite lives in its own file and exports one function; a missing file is skipped. */
const SUITES: Suite[] = [
  { name: "sqlite", file: "./sqlite.ts", fn: "benchSqlite", short: true },
  { name: "hitltool", file: "./hitltool.ts", fn: "benchHitlTool", short: false },
  { name: "http", file: "./http.ts", fn: "benchHttp", short: true },
  { name: "postgres", file: "./postgres.ts", fn: "benchPostgres", short: true },
  { name: "langgraph", file: "./langgraph.ts", fn: "benchLangGraph", short: true },
  { name: "peer", file: "./peer.ts", fn: "benchPeer", short: true },
  { name: "mcp", file: "./mcp.ts", fn: "benchMcp", short: true },
  { name: "outbox", file: "./outbox.ts", fn: "benchOutbox", short: false },
  { name: "audit", file: "./audit.ts", fn: "benchAudit", short: false },
  { name: "quota", file: "./quota.ts", fn: "benchQuota", short: false },
  // Last: it writes a 14 GB database (AIRLOCK_BENCH_SCALE=0.1 for a tenth).
  { name: "backlog", file: "./backlog.ts", fn: "benchBacklog", short: false },
];

function chosen(args: BenchArgs): Suite[] {
  const unknown = args.suites.filter((n) => !SUITES.some((s) => s.name === n));
  if (unknown.length > 0) {
    throw new Error(
      `no suite ${unknown.join(", ")}; the suites: ${SUITES.map((s) => s.name).join(", ")}`,
    );
  }
  if (args.suites.length > 0) {
    const named = SUITES.filter((s) => args.suites.includes(s.name));
    for (const s of named) {
      if (args.quick && !s.short) {
        process.stderr.write(`bench ${s.name} has no short mode; it runs in full\n`);
      }
    }
    return named;
  }
  return SUITES.filter((s) => s.short || !args.quick);
}

/** Runs the suites, printing each figure; returns the figures by name and whether a suite failed. */
async function runSuites(
  suites: Suite[],
  quick: boolean,
): Promise<{ figures: Record<string, number>; failed: boolean }> {
  const figures: Record<string, number> = {};
  let failed = false;
  for (const s of suites) {
    if (!existsSync(new URL(s.file, import.meta.url))) continue;
    try {
      const mod = (await import(s.file)) as Record<string, Bench | undefined>;
      const run = mod[s.fn];
      if (!run) throw new Error(`${s.file} exports no ${s.fn}`);
      for (const f of await run({ quick })) {
        emit(f);
        figures[f.name] = f.value;
      }
    } catch (err) {
      failed = true;
      process.stderr.write(
        `bench ${s.name} failed: ${err instanceof Error ? err.message : String(err)}\n`,
      );
    }
  }
  return { figures, failed };
}

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

const load = () => loadavg()[0] ?? 0;

/** The guard's lines (one per guarded figure of the suites run) and whether it passed. */
function check(args: BenchArgs, figures: Record<string, number>): boolean {
  const baseline = readBaseline();
  if (!baseline) {
    say("guard FAIL: no bench/baseline.json; write one on purpose with --write-baseline");
    return false;
  }
  const suites = args.suites.length > 0 ? args.suites : undefined;
  // The threshold is check.ts's; the file's copy is for its reader.
  const verdicts = compare(baseline.figures, figures, { suites });
  for (const v of verdicts) say(describe(v));
  const loads = baseline.loads?.filter((l) => l !== null) ?? [];
  if (loads.length > 0) {
    const all = loads.flatMap((l) => [l.before, l.after]);
    say(
      `guard: the baseline's ${baseline.runs} runs had load averages ${Math.min(...all).toFixed(2)}–${Math.max(...all).toFixed(2)} on ${loads[0]?.cores} cores`,
    );
  }
  const ok = passed(verdicts);
  say(
    ok
      ? `guard passed: ${verdicts.length} ratios within ${Math.round(THRESHOLD * 100)} % of the baseline of ${baseline.written}`
      : `guard failed: ${verdicts.filter((v) => v.status !== "ok").length} of ${verdicts.length} ratios`,
  );
  return ok;
}

function write(runs: Record<string, number>[], loads: (RunLoad | undefined)[]): void {
  const b = writeBaseline(medianFigures(runs), loads);
  say(`guard: wrote bench/baseline.json from ${b.runs} run(s), on purpose`);
  for (const [name, value] of Object.entries(b.figures)) say(`guard baseline ${name}: ${value}`);
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.from.length > 0) {
    const texts = args.from.map((file) => readFileSync(file, "utf8"));
    write(texts.map(parseFigures), texts.map(parseLoad));
    return 0;
  }
  const suites = chosen(args);
  const start = performance.now();
  const loadBefore = load();
  const { figures, failed } = await runSuites(suites, args.quick);
  let runLoad: RunLoad | undefined;
  if (args.check || args.writeBaseline) {
    const seconds = Math.round((performance.now() - start) / 1000);
    runLoad = { before: loadBefore, after: load(), cores: cpus().length };
    const { before, after, cores } = runLoad;
    say(loadLine(suites.map((s) => s.name).join(", "), seconds, runLoad));
    if (Math.max(before, after) > cores) {
      say(
        `guard: the load average was above the ${cores} cores: other processes took turns inside the measured loops, and the ratios of such a run are not comparable with a baseline taken on a quieter machine; run again when it is quieter`,
      );
    }
  }
  let ok = !failed;
  if (args.check) ok = check(args, figures) && ok;
  if (args.writeBaseline) {
    const missing = GUARDED.filter((g) => !(g.name in figures)).map((g) => g.name);
    if (args.suites.length > 0 || missing.length > 0 || failed) {
      say(
        `guard: no baseline written: it takes every suite's guarded ratio from one full --check run (missing: ${missing.join(", ") || "none"}${failed ? "; a suite failed" : ""})`,
      );
      return 1;
    }
    write([figures], [runLoad]);
    return 0;
  }
  return ok ? 0 : 1;
}

try {
  process.exitCode = await main();
} catch (err) {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 2;
}
