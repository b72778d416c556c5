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
import { bounded } from "./figures.js";
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

export interface SqlReplay {
  /** Round trips per second, replayed. */
  perS: number;
  /** The same on a copy without triggers and without indexes that are neither keys nor unique
   * (with `stripped`). */
  strippedPerS?: number;
  statementsPerRoundTrip: number;
}

/** Records `rounds` round trips on a store in `dir`, `inFlight` at a time (so with 64, the store's
 * group commits are recorded as they were), then replays them for up to `maxMs`; with `stripped`,
 * once more on a copy without triggers (those of the title search and of the approver index) and
 * without the indexes that are neither keys nor unique (the queues', the audit's by request):
 * about what the same writes would cost with the leanest schema they run on. */
export async function sqlReplay(
  dir: string,
  rounds: number,
  inFlight: number,
  maxMs: number,
  options: { stripped?: boolean } = {},
): Promise<SqlReplay> {
  const copy = join(dir, `replay-${inFlight}.db`);
  const { calls, recorded } = await record(
    join(dir, `recorded-${inFlight}.db`),
    copy,
    rounds,
    inFlight,
  );
  if (recorded === 0) throw new Error("bench: no round trip was recorded to replay");
  let strippedPerS: number | undefined;
  if (options.stripped) {
    const bare = join(dir, `replay-${inFlight}-stripped.db`);
    copyFileSync(copy, bare);
    // A statement naming an index the copy no longer has (INDEXED BY) takes SQLite's choice.
    const unpinned = calls.map((c) => ({ ...c, sql: c.sql.replace(/\bINDEXED BY \w+/gi, "") }));
    strippedPerS = replay(bare, unpinned, recorded, maxMs, strip);
  }
  return {
    perS: replay(copy, calls, recorded, maxMs),
    strippedPerS,
    statementsPerRoundTrip: calls.length / recorded,
  };
}

/** Drops every trigger and every index but the keys' and the unique ones (which are constraints
 * the statements rely on, not read paths). */
function strip(db: Database.Database): void {
  const objects = db
    .prepare<[], { type: string; name: string }>(
      `SELECT type, name FROM sqlite_schema WHERE sql IS NOT NULL
         AND (type = 'trigger' OR (type = 'index' AND sql NOT LIKE 'CREATE UNIQUE%'))`,
    )
    .all();
  for (const o of objects) db.exec(`DROP ${o.type.toUpperCase()} IF EXISTS "${o.name}"`);
}

/** Round trips per second of `calls` (`recorded` round trips) replayed on the database at `path`. */
function replay(
  path: string,
  calls: Call[],
  recorded: number,
  maxMs: number,
  prepare?: (db: Database.Database) => void,
): number {
  const db = new Database(path);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("wal_autocheckpoint = 10000");
    prepare?.(db);
    const prepared = new Map<string, Database.Statement>();
    const steps = calls.map((c) => {
      let s = prepared.get(c.sql);
      if (!s) {
        s = db.prepare(c.sql);
        prepared.set(c.sql, s);
      }
      return { ...c, statement: s };
    });
    // Replayed once, as recorded (its writes cannot repeat), or until `maxMs`.
    let replayed = 0;
    const start = performance.now();
    for (const s of steps) {
      if (replayed % 1000 === 0 && performance.now() - start > maxMs) break;
      if (s.method === "run") {
        const changes = s.statement.run(...s.args).changes;
        if (changes !== s.changes) {
          throw new Error(
            `bench: the replay of \`${s.sql}\` changed ${changes} rows, not ${s.changes}`,
          );
        }
      } else if (s.method === "get") s.statement.get(...s.args);
      else s.statement.all(...s.args);
      replayed++;
    }
    const ms = performance.now() - start;
    return (((replayed / steps.length) * recorded) / ms) * 1000;
  } finally {
    db.close();
  }
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
