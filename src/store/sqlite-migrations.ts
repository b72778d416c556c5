// Versioned schema changes for the SQLite store, applied in order, each once (see migrateSync).
import type { Migration } from "./sqlite-migrate.js";

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE requests (
        id TEXT PRIMARY KEY,
        key TEXT,
        action TEXT NOT NULL,
        status TEXT NOT NULL,
        requester TEXT NOT NULL,
        approvers TEXT NOT NULL,
        deadline INTEGER,
        created_at INTEGER NOT NULL,
        decided_at INTEGER,
        version INTEGER NOT NULL,
        doc TEXT NOT NULL
      );
      -- Few indexes on purpose: each one is another page written by every transition. Filters by
      -- action or requester scan within a status; metrics scan the terminal rows.
      CREATE UNIQUE INDEX requests_key ON requests (key) WHERE key IS NOT NULL;
      CREATE INDEX requests_status_id ON requests (status, id);
      CREATE INDEX requests_pending_deadline ON requests (deadline) WHERE status = 'pending' AND deadline IS NOT NULL;
      CREATE TABLE audit (
        seq INTEGER PRIMARY KEY,
        request_id TEXT,
        type TEXT NOT NULL,
        actor TEXT NOT NULL,
        at INTEGER NOT NULL,
        data TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL
      );
      CREATE INDEX audit_request_seq ON audit (request_id, seq);
      -- The chain head: the last event's seq and hash, updated in the same transaction as each append,
      -- so deleting the newest rows is detected too.
      CREATE TABLE audit_head (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        seq INTEGER NOT NULL,
        hash TEXT NOT NULL
      );
    `,
  },
];
