// The physical limit of the PostgreSQL round trip on this server, measured in the same run as the
// engine: the round trip writes three times (create, decide, claim), each a transaction that must
// be durable before it answers, so the bare cycle is three single-statement transactions on a
// one-table schema (an insert, then two updates guarded by the version), with nothing else: no
// indexes but the key, no audit, no JavaScript of ours. One at a time on one connection, and with
// 64 cycles in flight on a pool as large as the store's (10 connections: the transactions of the
// loops waiting for one queue, and commits arriving together share the server's WAL flush). Each
// loop is run by bench/postgres.ts in blocks interleaved with the engine's.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { DEFAULT_POOL_MAX } from "../src/store/postgres.js";
import { bounded, type Tally } from "./figures.js";
import { loopsInFlight } from "./round-trip.js";

/** The bare cycle on its own table and pool; each loop is bounded in count and time. */
export interface BarePostgres {
  /** Cycles one at a time on one connection. */
  sequential(rounds: number, maxMs: number): Promise<Tally>;
  /** Cycles with `inFlight` loops at once on the pool. */
  concurrent(inFlight: number, rounds: number, maxMs: number): Promise<Tally>;
  close(): Promise<void>;
}

/** Creates the bare table in `schema` and warms the cycle up. */
export async function openBarePostgres(url: string, schema: string): Promise<BarePostgres> {
  const pool = new pg.Pool({ connectionString: url, max: DEFAULT_POOL_MAX });
  pool.on("error", (err) => process.stderr.write(`bench postgres bare: ${err.message}\n`));
  const table = `"${schema}".bare_cycle`;
  const doc = JSON.stringify({ title: "bench", items: [{ id: "item-1", label: "a" }], args: {} });
  const prefix = randomBytes(4).toString("hex");
  let next = 0;
  const cycle = async (q: pg.Pool | pg.PoolClient) => {
    const id = `${prefix}-${next++}`;
    await q.query(`INSERT INTO ${table} (id, status, version, doc) VALUES ($1, 'pending', 1, $2)`, [
      id,
      doc,
    ]);
    await expectOne(
      q.query(
        `UPDATE ${table} SET status = 'approved', version = 2, doc = $2 WHERE id = $1 AND version = 1`,
        [id, doc],
      ),
    );
    await expectOne(
      q.query(
        `UPDATE ${table} SET version = 3, doc = $2 WHERE id = $1 AND status = 'approved' AND version = 2`,
        [id, doc],
      ),
    );
  };
  const oneAtATime = async (rounds: number, maxMs: number): Promise<Tally> => {
    const client = await pool.connect();
    try {
      return await bounded(rounds, maxMs, () => cycle(client));
    } finally {
      client.release();
    }
  };
  try {
    await pool.query(
      `CREATE TABLE ${table} (id text PRIMARY KEY, status text NOT NULL, version int NOT NULL, doc text NOT NULL)`,
    );
    await oneAtATime(100, 2_000);
  } catch (err) {
    await pool.end();
    throw err;
  }
  return {
    sequential: oneAtATime,
    concurrent: (inFlight, rounds, maxMs) =>
      loopsInFlight(inFlight, rounds, maxMs, () => cycle(pool)),
    close: () => pool.end(),
  };
}

async function expectOne(result: Promise<pg.QueryResult>): Promise<void> {
  if ((await result).rowCount !== 1) throw new Error("bench: a bare guarded update missed its row");
}
