// Gate round trips on the embedded SQLite store (file on disk), against the physical limit measured
// in the same run: a bare better-sqlite3 insert transaction plus a guarded-update transaction; and
// against the round trip's own SQL replayed without the engine (sqlite-replay.ts), which tells the
// schema's share of the gap from the JavaScript's. The round trips one at a time, 64 in flight and
// the replay run in interleaved blocks, so that their ratios compare the same moments of the machine.
import { statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { createAirlock } from "../src/engine/engine.js";
import { sqliteStore } from "../src/store/sqlite.js";
import { tempDir } from "../test/helpers.js";
import {
  type BenchOptions,
  bounded,
  type Figure,
  interleaved,
  percentile,
  perSecond,
} from "./figures.js";
import { concurrentRoundTrips, gateRoundTrip, roundTripsInFlight } from "./round-trip.js";
import {
  engineOnDatabase,
  openReplay,
  type Recording,
  recordRoundTrips,
  replayRate,
  strip,
} from "./sqlite-replay.js";

interface Sizes {
  /** Round trips per measured loop at most. */
  rounds: number;
  /** Each measured loop's bound in time. */
  maxMs: number;
  /** Round trips recorded for the replay of the store's SQL. */
  replayRounds: number;
  /** Whether the parts no guarded ratio needs run: the checkpoint thread A/B and the replay of 64
   * in flight. */
  all: boolean;
}
const FULL: Sizes = { rounds: 20_000, maxMs: 8_000, replayRounds: 3_000, all: true };
/** `--quick` (the guard's run): the same loops, shorter, without the parts no guarded ratio needs. */
const QUICK: Sizes = { rounds: 5_000, maxMs: 2_000, replayRounds: 1_000, all: false };

/** Blocks the measured loops are cut into, interleaved (sequential, 64 in flight, replay). */
const BLOCKS = 4;

export async function benchSqlite(options: BenchOptions = {}): Promise<Figure[]> {
  const s = options.quick ? QUICK : FULL;
  const t = tempDir("airlock-bench-");
  try {
    const bare = benchBare(join(t.dir, "bare.db"), s);
    const barePages = bareWalPages(join(t.dir, "bare-pages.db"));
    const enginePages = await engineWalPages(join(t.dir, "engine-pages.db"));
    const strippedPages = await engineWalPages(join(t.dir, "stripped-pages.db"), {
      stripped: true,
    });
    const recording = await recordRoundTrips(t.dir, s.replayRounds, 1);
    const m = await engineRoundTrips(join(t.dir, "engine.db"), recording, s);
    const checkpoints = s.all ? await checkpointThreadAB(t.dir, s) : [];
    const stripped = replayRate(recording, s.maxMs, { stripped: true });
    const replay64 = s.all
      ? replayRate(await recordRoundTrips(t.dir, s.replayRounds * 2, 64), s.maxMs)
      : undefined;
    const rate = m.sequentialPerS;
    const c64 = m.concurrent64PerS;
    return [
      { name: "sqlite.roundtrips_per_s", value: rate, unit: "1/s" },
      { name: "sqlite.resume_p50_ms", value: percentile(m.latencies, 0.5), unit: "ms" },
      { name: "sqlite.resume_p99_ms", value: percentile(m.latencies, 0.99), unit: "ms" },
      { name: "sqlite.concurrent8_roundtrips_per_s", value: m.concurrent8PerS, unit: "1/s" },
      { name: "sqlite.concurrent64_roundtrips_per_s", value: c64, unit: "1/s" },
      // What group commit gives 64 gates in flight over one at a time, on the same engine.
      { name: "sqlite.concurrent64_to_sequential_ratio", value: c64 / rate, unit: "ratio" },
      ...checkpoints,
      { name: "sqlite.bare_roundtrips_per_s", value: bare, unit: "1/s" },
      { name: "sqlite.engine_to_bare_ratio", value: rate / bare, unit: "ratio" },
      // The round trip's own SQL replayed without the engine: about the most the ratio above can reach
      // with this schema and these statements, and what the engine's JavaScript leaves of it.
      { name: "sqlite.sql_replay_roundtrips_per_s", value: m.replayPerS, unit: "1/s" },
      { name: "sqlite.sql_replay_to_bare_ratio", value: m.replayPerS / bare, unit: "ratio" },
      { name: "sqlite.engine_to_sql_replay_ratio", value: rate / m.replayPerS, unit: "ratio" },
      // Without the indexes and triggers the reads rely on: about the most a leaner schema could give.
      {
        name: "sqlite.sql_replay_stripped_to_bare_ratio",
        value: stripped / bare,
        unit: "ratio",
      },
      // The same with 64 in flight: the group commits as the store made them, without the engine.
      ...(replay64 === undefined
        ? []
        : [
            {
              name: "sqlite.sql_replay_concurrent64_roundtrips_per_s",
              value: replay64,
              unit: "1/s",
            },
            {
              name: "sqlite.sql_replay_concurrent64_to_bare_ratio",
              value: replay64 / bare,
              unit: "ratio",
            },
          ]),
      {
        name: "sqlite.sql_statements_per_roundtrip",
        value: m.statementsPerRoundTrip,
        unit: "statements",
      },
      // What the ratio is made of: each page a commit changes is written whole to the WAL.
      { name: "sqlite.wal_pages_per_roundtrip", value: enginePages, unit: "pages" },
      { name: "sqlite.bare_wal_pages_per_roundtrip", value: barePages, unit: "pages" },
      // The same round trips on the schema without its read paths (the stripped replay's: no trigger,
      // no index that is neither a key nor unique): what the request row, its key, the audit row, the
      // chain head, the outcome counter and the file's growth write in three commits, whatever the
      // indexes; the floor for the figure above.
      {
        name: "sqlite.stripped_wal_pages_per_roundtrip",
        value: strippedPages,
        unit: "pages",
      },
    ];
  } finally {
    t.cleanup();
  }
}

interface EngineRoundTrips {
  sequentialPerS: number;
  /** decide → resume latencies of the sequential blocks, sorted, in ms. */
  latencies: number[];
  concurrent8PerS: number;
  concurrent64PerS: number;
  /** The recording's SQL replayed without the engine, in blocks between the engine's. */
  replayPerS: number;
  statementsPerRoundTrip: number;
}

/** The engine's round trips one at a time and 64 in flight, and the recorded round trips' SQL
 * replayed, in interleaved blocks so that the ratios between them are of the same moments of the
 * machine; then 8 in flight. */
async function engineRoundTrips(
  path: string,
  recording: Recording,
  s: Sizes,
): Promise<EngineRoundTrips> {
  const engine = await createAirlock({ store: sqliteStore(path) });
  const replayer = openReplay(recording);
  try {
    await bounded(Math.max(50, Math.floor(s.rounds / 20)), 2_000, async () => {
      await gateRoundTrip(engine);
    });
    const latencies: number[] = [];
    const totals = await interleaved(BLOCKS, {
      sequential: () =>
        bounded(s.rounds / BLOCKS, s.maxMs / BLOCKS, async () => {
          latencies.push(await gateRoundTrip(engine));
        }),
      concurrent64: () => roundTripsInFlight(engine, 64, s.rounds / BLOCKS, s.maxMs / BLOCKS),
      replay: (b) => replayer.run((b + 1) / BLOCKS, s.maxMs / BLOCKS),
    });
    latencies.sort((a, b) => a - b);
    return {
      sequentialPerS: perSecond(totals.sequential),
      latencies,
      concurrent8PerS: await concurrentRoundTrips(engine, 8, s.rounds, s.maxMs),
      concurrent64PerS: perSecond(totals.concurrent64),
      replayPerS: perSecond(totals.replay),
      statementsPerRoundTrip: replayer.statementsPerRoundTrip,
    };
  } finally {
    replayer.close();
    await engine.close();
  }
}

const AB_BLOCKS = 6;

/** The round trip with the checkpoint thread and with every checkpoint in the committing thread
 * (`checkpointThread: false`), in alternating blocks so both meet the same machine. */
async function checkpointThreadAB(dir: string, s: Sizes): Promise<Figure[]> {
  const withThread = await createAirlock({ store: sqliteStore(join(dir, "ab-thread.db")) });
  const inline = await createAirlock({
    store: sqliteStore(join(dir, "ab-inline.db"), { checkpointThread: false }),
  });
  try {
    const totals = { thread: { n: 0, ms: 0 }, inline: { n: 0, ms: 0 } };
    // Past the thread's start (200 commits) and warm.
    for (const engine of [withThread, inline]) {
      await bounded(300, 5_000, async () => {
        await gateRoundTrip(engine);
      });
    }
    for (let b = 0; b < AB_BLOCKS; b++) {
      for (const [name, engine] of [
        ["thread", withThread],
        ["inline", inline],
      ] as const) {
        const r = await bounded(s.rounds / AB_BLOCKS / 2, s.maxMs / AB_BLOCKS, async () => {
          await gateRoundTrip(engine);
        });
        totals[name].n += r.n;
        totals[name].ms += r.ms;
      }
    }
    const rate = (x: { n: number; ms: number }) => (x.n / x.ms) * 1000;
    return [
      {
        name: "sqlite.roundtrips_per_s_checkpoint_thread",
        value: rate(totals.thread),
        unit: "1/s",
      },
      {
        name: "sqlite.roundtrips_per_s_checkpoint_inline",
        value: rate(totals.inline),
        unit: "1/s",
      },
      {
        name: "sqlite.checkpoint_thread_speedup",
        value: rate(totals.thread) / rate(totals.inline),
        unit: "ratio",
      },
    ];
  } finally {
    await withThread.close();
    await inline.close();
  }
}

const PAGE_ROUNDS = 300;
/** A WAL frame: the page and its 24-byte header (the file's own 32-byte header is left out). */
const frameBytes = (db: Database.Database) =>
  (db.pragma("page_size", { simple: true }) as number) + 24;

/** WAL pages written per gate round trip: the WAL's growth over PAGE_ROUNDS round trips, with
 * automatic checkpoints off so the file only grows; `stripped`, on the schema without its read paths
 * (strip in sqlite-replay.ts; the round trip reads none of them but the sweeper's, which is off). */
async function engineWalPages(path: string, options: { stripped?: boolean } = {}): Promise<number> {
  // The WAL only grows: no checkpoint at all, on this thread or another.
  const { engine, db } = await engineOnDatabase(path, (d) => {
    d.pragma("wal_autocheckpoint = 0");
  });
  if (options.stripped) strip(db);
  try {
    for (let i = 0; i < 50; i++) await gateRoundTrip(engine);
    const before = statSync(`${path}-wal`).size;
    for (let i = 0; i < PAGE_ROUNDS; i++) await gateRoundTrip(engine);
    const grown = statSync(`${path}-wal`).size - before;
    return grown / frameBytes(db) / PAGE_ROUNDS;
  } finally {
    await engine.close();
  }
}

function bareWalPages(path: string): number {
  const { db, cycle } = bareDb(path);
  db.pragma("wal_autocheckpoint = 0");
  try {
    for (let i = 0; i < 50; i++) cycle(`w${i}`);
    const before = statSync(`${path}-wal`).size;
    for (let i = 0; i < PAGE_ROUNDS; i++) cycle(`r${i}`);
    return (statSync(`${path}-wal`).size - before) / frameBytes(db) / PAGE_ROUNDS;
  } finally {
    db.close();
  }
}

function benchBare(path: string, s: Sizes): number {
  const { db, cycle } = bareDb(path);
  let n = 0;
  const start = performance.now();
  while (n < s.rounds && performance.now() - start < s.maxMs) {
    cycle(`r${n}`);
    n++;
  }
  const ms = performance.now() - start;
  db.close();
  return (n / ms) * 1000;
}

/** The physical limit: an insert transaction and a guarded-update transaction per cycle. */
function bareDb(path: string) {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  db.pragma("wal_autocheckpoint = 10000");
  db.exec(
    "CREATE TABLE r (id TEXT PRIMARY KEY, status TEXT NOT NULL, version INTEGER NOT NULL, doc TEXT NOT NULL)",
  );
  const ins = db.prepare("INSERT INTO r (id, status, version, doc) VALUES (?, 'pending', 1, ?)");
  const upd = db.prepare(
    "UPDATE r SET status = 'approved', version = 2, doc = ? WHERE id = ? AND version = 1",
  );
  const insert = db.transaction((id: string, doc: string) => ins.run(id, doc));
  const update = db.transaction((id: string, doc: string) => upd.run(doc, id));
  const doc = JSON.stringify({ title: "bench", items: [{ id: "item-1", label: "a" }], args: {} });
  const cycle = (id: string) => {
    insert.immediate(id, doc);
    update.immediate(id, doc);
  };
  return { db, cycle };
}
