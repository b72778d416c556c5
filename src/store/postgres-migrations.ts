// Versioned schema changes for the PostgreSQL store, applied in order, each once, inside one
// transaction that holds an advisory lock (see `migrate` in postgres.ts). Each migration is a function
// of the quoted schema name, so one database can hold several isolated Airlock schemas.
import { GENESIS_HASH } from "../audit/chain.js";

export interface PostgresMigration {
  version: number;
  sql: (schema: string) => string;
}

export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    sql: (s) => `
      -- Ids are ULIDs compared byte by byte (COLLATE "C"), as in the other stores, so "newest first"
      -- and cursors do not depend on the database's locale. Times are epoch milliseconds stored as
      -- double precision: exactly a JS number, so a clock with fractions round-trips unchanged (the
      -- audit hash covers "at" as written).
      CREATE TABLE ${s}.requests (
        id text COLLATE "C" PRIMARY KEY,
        key text UNIQUE,
        action text NOT NULL,
        status text NOT NULL,
        requester text NOT NULL,
        approvers text[] NOT NULL,
        deadline double precision,
        created_at double precision NOT NULL,
        decided_at double precision,
        method text,
        version integer NOT NULL,
        -- A sweeper's lease on a due request (see dueRequests): other processes leave it alone
        -- until claimed_until, so several sweepers don't all time out the same rows.
        claimed_by text,
        claimed_until double precision,
        -- The request as JSON text, byte for byte as written (jsonb would reject \\u0000).
        doc text NOT NULL
      );
      CREATE INDEX requests_status_id ON ${s}.requests (status, id);
      CREATE INDEX requests_action_id ON ${s}.requests (action, id);
      CREATE INDEX requests_pending_deadline ON ${s}.requests (deadline)
        WHERE status = 'pending' AND deadline IS NOT NULL;
      CREATE INDEX requests_claimed ON ${s}.requests (claimed_until)
        WHERE claimed_until IS NOT NULL;
      CREATE INDEX requests_decided_at ON ${s}.requests (decided_at) WHERE decided_at IS NOT NULL;

      CREATE TABLE ${s}.audit (
        seq bigint PRIMARY KEY,
        request_id text,
        type text NOT NULL,
        actor text NOT NULL,
        at double precision NOT NULL,
        data text NOT NULL,
        prev_hash text NOT NULL,
        hash text NOT NULL
      );
      CREATE INDEX audit_request_seq ON ${s}.audit (request_id, seq);

      -- The chain head: the last event's seq and hash. Every append locks this one row FOR UPDATE,
      -- which serializes appends across processes, and updates it in the same transaction, so
      -- deleting the newest events is detected too. Seq 0 with the genesis hash means "empty".
      CREATE TABLE ${s}.audit_head (
        id integer PRIMARY KEY CHECK (id = 1),
        seq bigint NOT NULL,
        hash text NOT NULL
      );
      INSERT INTO ${s}.audit_head (id, seq, hash) VALUES (1, 0, '${GENESIS_HASH}');
    `,
  },
];
