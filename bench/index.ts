// `npm run bench`: prints one JSON line per figure, {"name", "value", "unit"}. Every loop is bounded
// in count and time; everything runs on this machine (files in a temp folder, loopback only).
import { existsSync } from "node:fs";
import { emit, type Figure } from "./figures.js";
import { benchSqlite } from "./sqlite.js";

type Bench = () => Promise<Figure[]>;

/** Optional suites live in their own files; each exports one function. */
const optional: { file: string; fn: string }[] = [
  { file: "./hitltool.ts", fn: "benchHitlTool" },
  { file: "./http.ts", fn: "benchHttp" },
  { file: "./postgres.ts", fn: "benchPostgres" },
  { file: "./langgraph.ts", fn: "benchLangGraph" },
  { file: "./peer.ts", fn: "benchPeer" },
  { file: "./mcp.ts", fn: "benchMcp" },
  { file: "./outbox.ts", fn: "benchOutbox" },
  { file: "./audit.ts", fn: "benchAudit" },
  { file: "./quota.ts", fn: "benchQuota" },
  // Last: it writes a 14 GB database (AIRLOCK_BENCH_SCALE=0.1 for a tenth).
  { file: "./backlog.ts", fn: "benchBacklog" },
];

async function main() {
  const only = process.argv[2];
  const suites: { name: string; run: Bench }[] = [{ name: "sqlite", run: benchSqlite }];
  for (const o of optional) {
    if (!existsSync(new URL(o.file, import.meta.url))) continue;
    const mod = (await import(o.file)) as Record<string, Bench | undefined>;
    const run = mod[o.fn];
    if (run) suites.push({ name: o.file.replace(/^\.\/|\.ts$/g, ""), run });
  }
  let failed = false;
  for (const s of suites) {
    if (only && s.name !== only) continue;
    try {
      for (const f of await s.run()) emit(f);
    } catch (err) {
      failed = true;
      process.stderr.write(
        `bench ${s.name} failed: ${err instanceof Error ? err.message : String(err)}\n`,
      );
    }
  }
  process.exitCode = failed ? 1 : 0;
}

await main();
