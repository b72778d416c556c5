// The audit log at scale on SQLite: ~2,000,000 events (250,000 requests, 8 events each, HMAC-keyed)
// written in bulk, then `verifyAuditLog` in full (chain and stored statuses), its peak RSS sampled
// while it runs, a resumed run after 10,000 more events, the same log copied to PostgreSQL and
// verified there (audit-postgres.ts), and prune of the oldest 90 %.
// Generation is bounded in time: fewer events when the machine is slow (the figures say how many).
import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defaultWorkers } from "../src/audit/verify.js";
import { sqliteStore } from "../src/store/sqlite.js";
import { tempDir } from "../test/helpers.js";
import { KEY, moreEvents } from "./audit-generate.js";
import { verifyOnPostgres } from "./audit-postgres.js";
import type { Figure } from "./figures.js";

/** A module of the built package (`npm run bench` builds first): `airlock audit verify` as shipped
 * hashes on worker threads, which it finds beside it in dist/ (from the sources, on one thread). */
async function built<M>(module: string): Promise<M> {
  return (await import(new URL(`../dist/src/${module}`, import.meta.url).href)) as M;
}

export async function benchAudit(): Promise<Figure[]> {
  const { verifyAuditLog } =
    await built<typeof import("../src/audit/verify.js")>("audit/verify.js");
  const t = tempDir("airlock-bench-audit-");
  try {
    const path = join(t.dir, "audit.db");
    // The store creates the schema and keys the chain from its first event.
    const setup = sqliteStore(path, { auditKey: KEY });
    await setup.close();
    // In a child process, so that what generating leaves in memory does not count against verify.
    const child = spawnSync(
      process.execPath,
      [...process.execArgv, fileURLToPath(new URL("./audit-generate.ts", import.meta.url)), path],
      { encoding: "utf8", timeout: 300_000 },
    );
    if (child.status !== 0) throw new Error(`generating failed: ${child.stderr}`);
    const gen = JSON.parse(child.stdout) as { events: number; ms: number; pruneBefore: number };

    const store = sqliteStore(path, { auditKey: KEY });
    try {
      const baseline = process.memoryUsage.rss() / (1024 * 1024);
      const rss = sampleRss();
      const start = performance.now();
      const cpu = process.cpuUsage();
      const full = await verifyAuditLog(store, { key: KEY, recordMark: true });
      const cpuUsed = process.cpuUsage(cpu);
      const ms = performance.now() - start;
      // CPU time too: on a shared machine the wall clock also counts other processes' turns.
      const cpuMs = (cpuUsed.user + cpuUsed.system) / 1000;
      const peak = rss.stop();
      if (!full.ok) throw new Error(`verify failed at #${full.badSeq}: ${full.reason}`);

      // The same on one thread (workers: 0), for the ratio.
      const aloneStart = performance.now();
      const alone = await verifyAuditLog(store, { key: KEY, workers: 0 });
      const aloneMs = performance.now() - aloneStart;
      if (!alone.ok) throw new Error(`verify failed: ${alone.reason}`);

      const chainStart = performance.now();
      const chainOnly = await verifyAuditLog(store, { key: KEY, checkStatuses: false });
      const chainMs = performance.now() - chainStart;
      if (!chainOnly.ok) throw new Error(`verify failed: ${chainOnly.reason}`);

      for (let i = 0; i < 10; i++) await store.appendAudit(moreEvents(1000));
      const resumeStart = performance.now();
      const resumed = await verifyAuditLog(store, { key: KEY, resume: true, recordMark: true });
      const resumeMs = performance.now() - resumeStart;
      if (!resumed.ok || resumed.count !== 10_000)
        throw new Error("resumed verify did not check 10,000 events");

      // The same log on PostgreSQL (before prune deletes most of it). Its failure is told and
      // leaves the SQLite figures standing.
      const onPostgres = await verifyOnPostgres(
        path,
        KEY,
        gen.pruneBefore,
        {
          verifyAuditLog,
          postgresStore: (
            await built<typeof import("../src/store/postgres.js")>("store/postgres.js")
          ).postgresStore,
        },
        sampleRss,
      ).catch((err: unknown) => {
        process.stderr.write(
          `bench audit: the PostgreSQL part failed: ${err instanceof Error ? err.message : String(err)}\n`,
        );
        return [];
      });

      const sizeBefore = fileMb(path);
      const pruneStart = performance.now();
      const pruned = await store.prune?.({ before: gen.pruneBefore });
      const pruneMs = performance.now() - pruneStart;
      const after = await verifyAuditLog(store, { key: KEY });
      if (!after.ok) throw new Error(`verify after prune failed: ${after.reason}`);

      return [
        { name: "audit.events", value: gen.events, unit: "events" },
        { name: "audit.generate_s", value: gen.ms / 1000, unit: "s" },
        { name: "audit.verify_events_per_s", value: (full.count / ms) * 1000, unit: "1/s" },
        { name: "audit.verify_events_per_cpu_s", value: (full.count / cpuMs) * 1000, unit: "1/s" },
        {
          name: "audit.verify_threads",
          value: defaultWorkers(full.count),
          unit: "threads",
        },
        {
          name: "audit.verify_one_thread_events_per_s",
          value: (alone.count / aloneMs) * 1000,
          unit: "1/s",
        },
        { name: "audit.verify_rss_mb", value: peak, unit: "MB" },
        { name: "audit.rss_before_verify_mb", value: baseline, unit: "MB" },
        {
          name: "audit.verify_chain_only_events_per_s",
          value: (chainOnly.count / chainMs) * 1000,
          unit: "1/s",
        },
        { name: "audit.verify_resume_10k_ms", value: resumeMs, unit: "ms" },
        {
          name: "audit.prune_events_per_s",
          value: ((pruned?.events ?? 0) / pruneMs) * 1000,
          unit: "1/s",
        },
        { name: "audit.pruned_events", value: pruned?.events ?? 0, unit: "events" },
        { name: "audit.db_mb_before_prune", value: sizeBefore, unit: "MB" },
        { name: "audit.verify_after_prune_events", value: after.count, unit: "events" },
        ...onPostgres,
      ];
    } finally {
      await store.close();
    }
  } finally {
    t.cleanup();
  }
}

function fileMb(path: string): number {
  return statSync(path).size / (1024 * 1024);
}

/** Samples the resident set size every 20 ms (verify yields between pages); returns the peak, MB. */
function sampleRss(): { stop(): number } {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 20);
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage.rss());
      return peak / (1024 * 1024);
    },
  };
}
