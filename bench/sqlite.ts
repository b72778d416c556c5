// Gate round trips on the embedded SQLite store (file on disk), against the physical limit measured
// in the same run: a bare better-sqlite3 insert transaction plus a guarded-update transaction.
import { join } from "node:path";
import Database from "better-sqlite3";
import { createAirlock } from "../src/engine/engine.js";
import { sqliteStore } from "../src/store/sqlite.js";
import { tempDir } from "../test/helpers.js";
import { type Figure, percentile } from "./figures.js";
import { concurrentRoundTrips, measureRoundTrips } from "./round-trip.js";

const ROUNDS = 20_000;
const MAX_MS = 8_000;

export async function benchSqlite(): Promise<Figure[]> {
  const t = tempDir("airlock-bench-");
  try {
    const bare = benchBare(join(t.dir, "bare.db"));
    const engine = await createAirlock({ store: sqliteStore(join(t.dir, "engine.db")) });
    const m = await measureRoundTrips(engine, ROUNDS, MAX_MS);
    const c64 = await concurrentRoundTrips(engine, 64, ROUNDS, MAX_MS);
    await engine.close();

    const rate = m.sequentialPerS;
    return [
      { name: "sqlite.roundtrips_per_s", value: rate, unit: "1/s" },
      { name: "sqlite.resume_p50_ms", value: percentile(m.latencies, 0.5), unit: "ms" },
      { name: "sqlite.resume_p99_ms", value: percentile(m.latencies, 0.99), unit: "ms" },
      { name: "sqlite.concurrent8_roundtrips_per_s", value: m.concurrent8PerS, unit: "1/s" },
      { name: "sqlite.concurrent64_roundtrips_per_s", value: c64, unit: "1/s" },
      { name: "sqlite.bare_roundtrips_per_s", value: bare, unit: "1/s" },
      { name: "sqlite.engine_to_bare_ratio", value: rate / bare, unit: "ratio" },
    ];
  } finally {
    t.cleanup();
  }
}

function benchBare(path: string): number {
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
  let n = 0;
  const start = performance.now();
  while (n < ROUNDS && performance.now() - start < MAX_MS) {
    const id = `r${n}`;
    insert.immediate(id, doc);
    update.immediate(id, doc);
    n++;
  }
  const ms = performance.now() - start;
  db.close();
  return (n / ms) * 1000;
}
