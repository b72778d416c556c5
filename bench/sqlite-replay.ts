// What the SQLite round trip's own SQL costs, without the engine: the statements (with their
// values, in their transactions) the store ran for a series of round trips are recorded, then
// replayed on a copy of the database as it stood before them, under the bare loop's settings. The
// replay's rate is about the most any work on the engine's JavaScript could reach with this schema
// and these statements (about: the replay runs on a younger copy, under the bare loop's checkpoint
// settings); the bare loop (one table, its key only) bounds what SQLite itself can do.
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { type Airlock, createAirlock } from "../src/engine/engine.js";
import { sqliteStore } from "../src/store/sqlite.js";
import { bounded, perSecond, type Tally } from "./figures.js";
import { gateRoundTrip, roundTripsInFlight } from "./round-trip.js";

/** The recording's bound in time (the replay has its own). */
const RECORD_MAX_MS = 30_000;

type Method = "run" | "get" | "all";
const METHODS: readonly Method[] = ["run", "get", "all"];

interface Call {
  sql: string;
  method: Method;
  args: unknown[];
  /** Rows a `run` changed, which the replay must change too. */
  changes?: number;
}

/** The statements of `recorded` round trips, and a copy of the database as it stood before them. */
export interface Recording {
  calls: Call[];
  recorded: number;
  /** The copy; every replay works on a copy of its own, so the snapshot is never changed. */
  snapshot: string;
}

/** Records about `rounds` round trips on a store in `dir`, `inFlight` at a time (so with 64, the
 * store's group commits are recorded as they were), after a warm-up whose state is the snapshot. */
export async function recordRoundTrips(
  dir: string,
  rounds: number,
  inFlight: number,
): Promise<Recording> {
  const snapshot = join(dir, `replay-${inFlight}.db`);
  const { calls, recorded } = await record(
    join(dir, `recorded-${inFlight}.db`),
    snapshot,
    rounds,
    inFlight,
  );
  if (recorded === 0) throw new Error("bench: no round trip was recorded to replay");
  return { calls, recorded, snapshot };
}

/** A replay in steps: `run` goes on from where the last one stopped, so that blocks of it can be
 * interleaved with the engine's own round trips. */
export interface Replayer {
  /** Replays on until `share` (0–1) of the recorded statements are done, or `maxMs` passed; returns
   * the round trips it replayed (a fraction of the recorded ones, in proportion to the statements)
   * and the time it took. */
  run(share: number, maxMs: number): Tally;
  /** Round trips per second over every run so far. */
  perS(): number;
  statementsPerRoundTrip: number;
  close(): void;
}

let copies = 0;

/** A replay of `rec` on a fresh copy of its snapshot, under the bare loop's settings; with
 * `stripped`, on a copy without triggers (those of the title search and of the approver index) and
 * without the indexes that are neither keys nor unique (the queues', the audit's by request): about
 * what the same writes would cost with the leanest schema they run on. */
export function openReplay(rec: Recording, options: { stripped?: boolean } = {}): Replayer {
  const path = `${rec.snapshot.replace(/\.db$/, "")}-copy${copies++}.db`;
  copyFileSync(rec.snapshot, path);
  // A statement naming an index the copy no longer has (INDEXED BY) takes SQLite's choice.
  const calls = options.stripped
    ? rec.calls.map((c) => ({ ...c, sql: c.sql.replace(/\bINDEXED BY \w+/gi, "") }))
    : rec.calls;
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("wal_autocheckpoint = 10000");
  if (options.stripped) strip(db);
  const prepared = new Map<string, Database.Statement>();
  const steps = calls.map((c) => {
    let st = prepared.get(c.sql);
    if (!st) {
      st = db.prepare(c.sql);
      prepared.set(c.sql, st);
    }
    return { ...c, statement: st };
  });
  // Replayed once, as recorded (its writes cannot repeat).
  let next = 0;
  const total = { n: 0, ms: 0 };
  const roundTrips = (statements: number) => (statements / steps.length) * rec.recorded;
  return {
    run(share, maxMs) {
      const until = Math.min(steps.length, Math.round(share * steps.length));
      const from = next;
      const start = performance.now();
      while (next < until) {
        if ((next - from) % 100 === 0 && performance.now() - start > maxMs) break;
        const s = steps[next] as (typeof steps)[number];
        if (s.method === "run") {
          const changes = s.statement.run(...s.args).changes;
          if (changes !== s.changes) {
            throw new Error(
              `bench: the replay of \`${s.sql}\` changed ${changes} rows, not ${s.changes}`,
            );
          }
        } else if (s.method === "get") s.statement.get(...s.args);
        else s.statement.all(...s.args);
        next++;
      }
      const r = { n: roundTrips(next - from), ms: performance.now() - start };
      total.n += r.n;
      total.ms += r.ms;
      return r;
    },
    perS: () => perSecond(total),
    statementsPerRoundTrip: steps.length / rec.recorded,
    close: () => db.close(),
  };
}

/** Round trips per second of `rec` replayed in one go, for up to `maxMs`. */
export function replayRate(
  rec: Recording,
  maxMs: number,
  options: { stripped?: boolean } = {},
): number {
  const replayer = openReplay(rec, options);
  try {
    replayer.run(1, maxMs);
    return replayer.perS();
  } finally {
    replayer.close();
  }
}

/** Drops every trigger and every index but the keys' and the unique ones (which are constraints
 * the statements rely on, not read paths). */
export function strip(db: Database.Database): void {
  const objects = db
    .prepare<[], { type: string; name: string }>(
      `SELECT type, name FROM sqlite_schema WHERE sql IS NOT NULL
         AND (type = 'trigger' OR (type = 'index' AND sql NOT LIKE 'CREATE UNIQUE%'))`,
    )
    .all();
  for (const o of objects) db.exec(`DROP ${o.type.toUpperCase()} IF EXISTS "${o.name}"`);
}

/** The store's statements over about `rounds` round trips (and how many), after a warm-up whose
 * state is copied to `copy`. */
async function record(
  path: string,
  copy: string,
  rounds: number,
  inFlight: number,
): Promise<{ calls: Call[]; recorded: number }> {
  // No checkpoint thread: every statement of the store runs on this thread, where it is seen.
  const { engine, db } = await engineOnDatabase(path);
  const calls: Call[] = [];
  let done = 0;
  try {
    await bounded(300, 10_000, () => gateRoundTrip(engine).then(() => undefined));
    db.prepare("VACUUM INTO ?").run(copy);
    const stop = recordStatements(db, calls);
    try {
      done = (await roundTripsInFlight(engine, inFlight, rounds, RECORD_MAX_MS)).n;
    } finally {
      stop();
    }
  } finally {
    await engine.close();
  }
  return { calls, recorded: done };
}

/** Wraps the driver's statement methods to note each call made on `db`; returns the undo. */
function recordStatements(db: Database.Database, calls: Call[]): () => void {
  const proto = Object.getPrototypeOf(db.prepare("SELECT 1")) as Record<
    Method,
    (...args: unknown[]) => unknown
  >;
  const originals = METHODS.map((m) => [m, proto[m]] as const);
  for (const [method, original] of originals) {
    proto[method] = function (this: Database.Statement, ...args: unknown[]) {
      const result = original.apply(this, args);
      if (this.database === db) {
        calls.push({
          sql: this.source,
          method,
          args: args.map((a) => (a && typeof a === "object" && !Buffer.isBuffer(a) ? { ...a } : a)),
          changes: method === "run" ? (result as Database.RunResult).changes : undefined,
        });
      }
      return result;
    };
  }
  return () => {
    for (const [method, original] of originals) proto[method] = original;
  };
}

/** An engine on a SQLite store at `path` without the checkpoint thread (no sweeper either), and the
 * store's database, set up by `configure` before the migrations. */
export async function engineOnDatabase(
  path: string,
  configure?: (db: Database.Database) => void,
): Promise<{ engine: Airlock; db: Database.Database }> {
  let db: Database.Database | undefined;
  const engine = await createAirlock({
    store: sqliteStore(path, {
      checkpointThread: false,
      configure: (d) => {
        db = d;
        configure?.(d);
      },
    }),
    sweeper: false,
  });
  if (!db) {
    await engine.close();
    throw new Error("bench: the store did not hand over its database");
  }
  return { engine, db };
}
