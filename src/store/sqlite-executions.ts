// The SQLite statements behind execution leases (core/execution.ts): the claims whose lease ran out,
// and the next lease to end, both read from a partial index on the lease (migration 12), which holds
// live claims only; a second one holds the executions not known to have run (listings, metrics).
// Both hold a handful of rows however many requests exist.
import type Database from "better-sqlite3";
import type { DocRow } from "./rows.js";

/** Migration 12: the execution's state and a claim's lease end, as columns of their own. */
export const SQLITE_EXECUTION_COLUMNS_SQL = `
  ALTER TABLE requests ADD COLUMN execution TEXT;
  ALTER TABLE requests ADD COLUMN lease_until INTEGER;
  CREATE INDEX requests_claim_lease ON requests (lease_until, id) WHERE lease_until IS NOT NULL;
  CREATE INDEX requests_unknown_execution ON requests (id) WHERE execution = 'unknown';
`;

export interface SqliteExecutionStatements {
  staleExecutions: Database.Statement<[number, number], DocRow>;
  nextLeaseEnd: Database.Statement<[], { d: number | null }>;
}

export function sqliteExecutionStatements(db: Database.Database): SqliteExecutionStatements {
  return {
    staleExecutions: db.prepare<[number, number], DocRow>(
      `SELECT doc FROM requests INDEXED BY requests_claim_lease
       WHERE lease_until <= ? ORDER BY lease_until, id LIMIT ?`,
    ),
    nextLeaseEnd: db.prepare<[], { d: number | null }>(
      `SELECT lease_until AS d FROM requests INDEXED BY requests_claim_lease
       WHERE lease_until IS NOT NULL ORDER BY lease_until LIMIT 1`,
    ),
  };
}
