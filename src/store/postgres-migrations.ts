// Versioned schema changes for the PostgreSQL store, applied in order, each once, inside one
// transaction that holds an advisory lock (see `migrate` in postgres.ts). Each migration is a function
// of the quoted schema name, so one database can hold several isolated Airlock schemas.
import type { ClientBase } from "pg";
import { GENESIS_HASH } from "../audit/chain.js";
import { durationBucketSql, HOUR_MS } from "../core/outcome-stats.js";
import { postgresApproverIndexSql } from "./postgres-approver-index.js";
import { titleLower } from "./postgres-sql.js";
import { postgresTicketsSql } from "./postgres-tickets.js";
import { postgresTrustRulesSql, postgresTrustScopeSql } from "./postgres-trust.js";

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
  {
    version: 2,
    sql: (s) => `
      -- What a list shows, in columns of its own, so listing never reads the documents; and each
      -- document's size, for per-agent quotas. (json, not jsonb: a document may hold \\u0000.)
      ALTER TABLE ${s}.requests
        ADD COLUMN title text NOT NULL DEFAULT '',
        ADD COLUMN risk text,
        ADD COLUMN confidence double precision,
        ADD COLUMN level text NOT NULL DEFAULT 'full',
        ADD COLUMN quorum integer NOT NULL DEFAULT 1,
        ADD COLUMN updated_at double precision NOT NULL DEFAULT 0,
        ADD COLUMN correlation_id text NOT NULL DEFAULT '',
        ADD COLUMN revision_of text,
        ADD COLUMN item_count integer NOT NULL DEFAULT 0,
        ADD COLUMN outcome text,
        ADD COLUMN reviewer text,
        ADD COLUMN doc_bytes bigint NOT NULL DEFAULT 0;
      UPDATE ${s}.requests AS r SET
        title = COALESCE(j.doc->>'title', ''),
        risk = j.doc->>'risk',
        confidence = (j.doc->>'confidence')::double precision,
        level = COALESCE(j.doc->>'level', 'full'),
        quorum = COALESCE((j.doc->>'quorum')::integer, 1),
        updated_at = COALESCE((j.doc->>'updatedAt')::double precision, r.created_at),
        correlation_id = COALESCE(j.doc->>'correlationId', ''),
        revision_of = j.doc->>'revisionOf',
        item_count = COALESCE(json_array_length(j.doc->'items'), 0),
        outcome = CASE WHEN r.status = 'pending' THEN NULL ELSE j.doc->'decision'->>'outcome' END,
        reviewer = CASE WHEN r.status = 'pending' THEN NULL ELSE j.doc->'decision'->>'reviewer' END,
        doc_bytes = octet_length(r.doc)
      FROM (SELECT id, doc::json AS doc FROM ${s}.requests) AS j
      WHERE j.id = r.id;
      -- Idempotency keys are scoped per requester: another agent's key is not in the way.
      ALTER TABLE ${s}.requests DROP CONSTRAINT requests_key_key;
      CREATE UNIQUE INDEX requests_requester_key ON ${s}.requests (requester, key);
      -- Listing in deadline order (an inbox's queue): the earliest live deadline first, then the
      -- requests without one (9e15 sorts after every date), by id.
      CREATE INDEX requests_status_deadline_id
        ON ${s}.requests (status, (COALESCE(deadline, 9e15::double precision)), id);
      -- Per-agent quotas of pending requests.
      CREATE INDEX requests_pending_requester ON ${s}.requests (requester) WHERE status = 'pending';
      -- A keyed chain records from which event it is keyed, and a fingerprint of its key.
      ALTER TABLE ${s}.audit_head ADD COLUMN keyed_from bigint, ADD COLUMN key_id text;
    `,
  },
  {
    version: 3,
    sql: (s) => `
      -- The durable outbox: one row per message to one target, written in the same transaction as
      -- the change that caused it, then claimed with a lease (FOR UPDATE SKIP LOCKED), delivered and
      -- settled. n is the insertion order the claim and the log go by. Payload and receipt are JSON
      -- text, not jsonb, which would refuse \\u0000 (as for the request documents).
      CREATE TABLE ${s}.outbox (
        id text COLLATE "C" PRIMARY KEY,
        n bigserial NOT NULL UNIQUE,
        target text NOT NULL,
        topic text NOT NULL,
        request_id text,
        payload text NOT NULL,
        status text NOT NULL DEFAULT 'pending',
        attempts integer NOT NULL DEFAULT 0,
        available_at double precision NOT NULL,
        created_at double precision NOT NULL,
        updated_at double precision NOT NULL,
        lease_owner text,
        lease_until double precision,
        last_error text,
        receipt text,
        delivered_at double precision
      );
      -- The claim: due pending rows, oldest first.
      CREATE INDEX outbox_status_available ON ${s}.outbox (status, available_at, n);
      -- The delivery log of one request, and of one target by status.
      CREATE INDEX outbox_request ON ${s}.outbox (request_id, n);
      CREATE INDEX outbox_target_status ON ${s}.outbox (target, status, n);
    `,
  },
  {
    version: 4,
    sql: (s) => `
      -- Fails the statement (and so its transaction) when a condition does not hold. The one-round-trip
      -- write sends BEGIN, its writes, the chain append and COMMIT together; a write that lost its
      -- compare-and-set, or an append whose expected chain head moved, must then undo them all.
      CREATE FUNCTION ${s}.airlock_require(ok boolean, what text) RETURNS void
        LANGUAGE plpgsql AS $body$
        BEGIN
          IF NOT ok THEN
            RAISE EXCEPTION USING ERRCODE = 'AL001', MESSAGE = 'airlock: ' || what;
          END IF;
        END
        $body$;
    `,
  },
  {
    version: 5,
    sql: (s) => `
      -- Title search (ListFilter.q): each title lower-cased by Airlock itself (JavaScript's Unicode
      -- lower case, the reference), so a substring match in SQL answers exactly what the other
      -- stores answer. ASCII titles are filled here; others are filled by the store right after
      -- this migration (see fillTitleLower).
      ALTER TABLE ${s}.requests ADD COLUMN title_lower text COLLATE "C";
      UPDATE ${s}.requests SET title_lower = translate(title,
          'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
        WHERE octet_length(title) = char_length(title);
      -- A trigram index makes "contains" fast on millions of rows. pg_trgm ships with PostgreSQL
      -- (trusted since 13); where it cannot be created the search scans, and the store says so.
      DO $body$
      DECLARE ext_schema name;
      BEGIN
        BEGIN
          CREATE EXTENSION IF NOT EXISTS pg_trgm;
        EXCEPTION WHEN OTHERS THEN
          RAISE NOTICE 'airlock: pg_trgm unavailable (%), title search will scan', SQLERRM;
        END;
        SELECT n.nspname INTO ext_schema FROM pg_extension e
          JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
        IF ext_schema IS NOT NULL THEN
          EXECUTE format('CREATE INDEX requests_title_trgm ON %s.requests USING gin (title_lower %I.gin_trgm_ops)',
            ${literal(s)}, ext_schema);
        END IF;
      END
      $body$;
    `,
  },
  // Learned trust rules (src/store/postgres-trust.ts).
  { version: 6, sql: postgresTrustRulesSql },
  {
    version: 7,
    sql: (s) => `
      -- Review metrics, pre-aggregated (src/core/outcome-stats.ts): bumped by the write that settles
      -- a request, so the dashboard sums a window's counters instead of reading its requests.
      CREATE TABLE ${s}.outcome_stats (
        hour bigint NOT NULL,
        action text NOT NULL,
        status text NOT NULL,
        method text NOT NULL,
        bucket integer NOT NULL,
        n bigint NOT NULL,
        PRIMARY KEY (hour, action, status, method, bucket)
      );
      ${postgresFillOutcomeStats(s)}
    `,
  },
  {
    version: 8,
    sql: (s) => `
      -- Title search walks a listing's order in the index that gives it, checking the titles there
      -- without reading the table (src/store/postgres-search.ts): the three order indexes include
      -- title_lower (and the deadline one the deadline). No more index entries are written than
      -- before: status and title changes already moved every entry (they are indexed).
      DROP INDEX ${s}.requests_status_id;
      CREATE INDEX requests_status_id ON ${s}.requests (status, id) INCLUDE (title_lower);
      DROP INDEX ${s}.requests_status_deadline_id;
      CREATE INDEX requests_status_deadline_id
        ON ${s}.requests (status, (COALESCE(deadline, 9e15::double precision)), id)
        INCLUDE (title_lower, deadline);
      ALTER TABLE ${s}.requests DROP CONSTRAINT requests_pkey,
        ADD CONSTRAINT requests_pkey PRIMARY KEY (id) INCLUDE (title_lower);
    `,
  },
  // A reviewer's requests, indexed by approver (src/store/approver-index.ts).
  { version: 9, sql: postgresApproverIndexSql },
  // Not here: the request sizes in requests_pending_requester (SQLite's migration 10, so quotas
  // count from the index alone). An update that changes a column any index holds cannot be a HOT
  // update, and every document change changes doc_bytes: claims would write every index of the
  // table. Of 1,000 updates in 500 gate round trips, 496 were HOT without it and none with it.
  // Each learned trust rule's scope (src/store/postgres-trust.ts).
  { version: 11, sql: postgresTrustScopeSql },
  // Execution states: claimed and unknown executions found by column, in a small partial index.
  {
    version: 12,
    sql: (s: string) => `
      ALTER TABLE ${s}.requests ADD COLUMN execution text, ADD COLUMN lease_until double precision;
      CREATE INDEX requests_claim_lease ON ${s}.requests (lease_until, id)
        WHERE lease_until IS NOT NULL;
      CREATE INDEX requests_unknown_execution ON ${s}.requests (id) WHERE execution = 'unknown';
    `,
  },
  // Resume tickets, which are not requests (src/store/postgres-tickets.ts).
  { version: 13, sql: postgresTicketsSql },
];

/** Counts the requests already settled into outcome_stats (migration 7; bulk loads call it too). */
export function postgresFillOutcomeStats(s: string): string {
  return `
    INSERT INTO ${s}.outcome_stats (hour, action, status, method, bucket, n)
      SELECT floor(decided_at / ${HOUR_MS})::bigint, action, status, COALESCE(method, ''),
        ${durationBucketSql("(decided_at - created_at)")}, COUNT(*)
      FROM ${s}.requests WHERE status <> 'pending' AND decided_at IS NOT NULL
      GROUP BY 1, 2, 3, 4, 5
    ON CONFLICT (hour, action, status, method, bucket)
      DO UPDATE SET n = ${s}.outcome_stats.n + excluded.n;`;
}

/** The migration that added `title_lower`, filled there for ASCII titles only. */
export const TITLE_LOWER_MIGRATION = 5;

/** Fills `title_lower` of the rows the migration left empty (titles beyond ASCII), lower-cased as
 * `titleMatches` does, a page at a time. `schema` is quoted. */
export async function fillTitleLower(c: ClientBase, schema: string): Promise<number> {
  let filled = 0;
  for (;;) {
    const { rows } = await c.query<{ id: string; title: string }>(
      `SELECT id, title FROM ${schema}.requests WHERE title_lower IS NULL ORDER BY id LIMIT 1000`,
    );
    if (rows.length === 0) return filled;
    await c.query(
      `UPDATE ${schema}.requests AS r SET title_lower = v.lower
        FROM unnest($1::text[], $2::text[]) AS v(id, lower) WHERE r.id = v.id`,
      [rows.map((r) => r.id), rows.map((r) => titleLower(r.title))],
    );
    filled += rows.length;
  }
}

/** A SQL string literal. */
function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
