// Versioned schema changes for the SQLite store, applied in order, each once (see migrateSync).

import type Database from "better-sqlite3";
import { GENESIS_HASH } from "../audit/chain.js";
import { durationBucketSql, HOUR_MS } from "../core/outcome-stats.js";
import { NO_DEADLINE } from "./paging.js";
import { approverIndexSql } from "./sqlite-approver-index.js";
import { SQLITE_EXECUTION_COLUMNS_SQL } from "./sqlite-executions.js";
import type { Migration } from "./sqlite-migrate.js";
import { SQLITE_TICKETS_SQL } from "./sqlite-tickets.js";
import { SQLITE_TITLE_INDEX_SQL } from "./sqlite-title-index.js";
import { SQLITE_TRUST_RULES_SQL, SQLITE_TRUST_SCOPE_SQL } from "./sqlite-trust.js";

/** Counts the requests already settled into outcome_stats (migration 7, which empties it first so a
 * second run counts nothing twice; bulk loads call it too). */
export const SQLITE_FILL_OUTCOME_STATS = `
  INSERT INTO outcome_stats (hour, action, status, method, bucket, n)
    SELECT decided_at / ${HOUR_MS}, action, status, COALESCE(method, ''),
      ${durationBucketSql("(decided_at - created_at)")}, COUNT(*)
    FROM requests WHERE status != 'pending' AND decided_at IS NOT NULL
    GROUP BY 1, 2, 3, 4, 5
    ON CONFLICT (hour, action, status, method, bucket) DO UPDATE SET n = n + excluded.n;`;

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
  {
    version: 2,
    sql: `
      -- What a list shows, in columns of its own, so listing never reads the documents; and each
      -- document's size, for per-agent quotas.
      ALTER TABLE requests ADD COLUMN title TEXT NOT NULL DEFAULT '';
      ALTER TABLE requests ADD COLUMN risk TEXT;
      ALTER TABLE requests ADD COLUMN confidence REAL;
      ALTER TABLE requests ADD COLUMN level TEXT NOT NULL DEFAULT 'full';
      ALTER TABLE requests ADD COLUMN quorum INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE requests ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE requests ADD COLUMN correlation_id TEXT NOT NULL DEFAULT '';
      ALTER TABLE requests ADD COLUMN revision_of TEXT;
      ALTER TABLE requests ADD COLUMN item_count INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE requests ADD COLUMN outcome TEXT;
      ALTER TABLE requests ADD COLUMN method TEXT;
      ALTER TABLE requests ADD COLUMN reviewer TEXT;
      ALTER TABLE requests ADD COLUMN doc_bytes INTEGER NOT NULL DEFAULT 0;
      UPDATE requests SET
        title = COALESCE(json_extract(doc, '$.title'), ''),
        risk = json_extract(doc, '$.risk'),
        confidence = json_extract(doc, '$.confidence'),
        level = COALESCE(json_extract(doc, '$.level'), 'full'),
        quorum = COALESCE(json_extract(doc, '$.quorum'), 1),
        updated_at = COALESCE(json_extract(doc, '$.updatedAt'), created_at),
        correlation_id = COALESCE(json_extract(doc, '$.correlationId'), ''),
        revision_of = json_extract(doc, '$.revisionOf'),
        item_count = COALESCE(json_array_length(doc, '$.items'), 0),
        outcome = CASE WHEN status = 'pending' THEN NULL ELSE json_extract(doc, '$.decision.outcome') END,
        method = CASE WHEN status = 'pending' THEN NULL ELSE json_extract(doc, '$.decision.method') END,
        reviewer = CASE WHEN status = 'pending' THEN NULL ELSE json_extract(doc, '$.decision.reviewer') END,
        doc_bytes = length(CAST(doc AS BLOB))
      WHERE json_valid(doc);
      -- Idempotency keys are scoped per requester: another agent's key is not in the way.
      DROP INDEX requests_key;
      CREATE UNIQUE INDEX requests_requester_key ON requests (requester, key) WHERE key IS NOT NULL;
      -- Listing in deadline order (an inbox's queue): the earliest live deadline first, then the
      -- requests without one (9e15 sorts after every date), by id.
      CREATE INDEX requests_status_deadline_id ON requests (status, COALESCE(deadline, 9e15), id);
      -- Per-agent quotas of pending requests.
      CREATE INDEX requests_pending_requester ON requests (requester) WHERE status = 'pending';
      -- A keyed chain records from which event it is keyed, and a fingerprint of its key.
      ALTER TABLE audit_head ADD COLUMN keyed_from INTEGER;
      ALTER TABLE audit_head ADD COLUMN key_id TEXT;
      -- The head row exists from the start (seq 0 = empty), so its absence always means deletion.
      INSERT INTO audit_head (id, seq, hash)
        SELECT 1, 0, '${GENESIS_HASH}'
        WHERE NOT EXISTS (SELECT 1 FROM audit_head) AND NOT EXISTS (SELECT 1 FROM audit);
    `,
  },
  {
    version: 3,
    sql: `
      -- The durable outbox: one row per message to one target, written in the same transaction as
      -- the change that caused it, then claimed with a lease, delivered and settled. The column n is the
      -- rowid (declared, so VACUUM keeps it; AUTOINCREMENT, so a pruned log never reuses one): the
      -- insertion order the claim and the log go by. The id stays unique: enqueueing it twice is a no-op.
      CREATE TABLE outbox (
        n INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        target TEXT NOT NULL,
        topic TEXT NOT NULL,
        request_id TEXT,
        payload TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        attempts INTEGER NOT NULL DEFAULT 0,
        available_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        lease_owner TEXT,
        lease_until INTEGER,
        last_error TEXT,
        receipt TEXT,
        delivered_at INTEGER
      );
      -- The claim: due pending rows, oldest first.
      CREATE INDEX outbox_status_available ON outbox (status, available_at, n);
      -- The delivery log of one request, and of one target by status.
      CREATE INDEX outbox_request ON outbox (request_id, n);
      CREATE INDEX outbox_target_status ON outbox (target, status, n);
    `,
  },
  // Learned trust rules (src/store/sqlite-trust.ts).
  { version: 4, sql: SQLITE_TRUST_RULES_SQL },
  {
    version: 5,
    sql: `
      -- Title search (ListFilter.q): the title lower-cased as JavaScript does it (the store writes it;
      -- SQLite's lower() knows ASCII only), and a trigram index of it kept by triggers, so a search
      -- for any text of three characters or more reads the index, not the table. The triggers skip
      -- the FTS work when a transition leaves the title as it was (every transition writes it).
      ALTER TABLE requests ADD COLUMN title_lower TEXT;
      -- detail=none and no column sizes: the fewest pages per write; a search asks for all the
      -- trigrams of its text and checks the candidates with instr() (see whereOf in sqlite.ts).
      CREATE VIRTUAL TABLE requests_title USING fts5(
        title_lower, content = 'requests', content_rowid = 'rowid',
        tokenize = 'trigram case_sensitive 1', detail = none, columnsize = 0
      );
      CREATE TRIGGER requests_title_insert AFTER INSERT ON requests
        WHEN new.title_lower IS NOT NULL BEGIN
        INSERT INTO requests_title (rowid, title_lower) VALUES (new.rowid, new.title_lower);
      END;
      CREATE TRIGGER requests_title_delete AFTER DELETE ON requests
        WHEN old.title_lower IS NOT NULL BEGIN
        INSERT INTO requests_title (requests_title, rowid, title_lower)
          VALUES ('delete', old.rowid, old.title_lower);
      END;
      CREATE TRIGGER requests_title_update AFTER UPDATE OF title_lower ON requests
        WHEN old.title_lower IS NOT new.title_lower BEGIN
        INSERT INTO requests_title (requests_title, rowid, title_lower)
          SELECT 'delete', old.rowid, old.title_lower WHERE old.title_lower IS NOT NULL;
        INSERT INTO requests_title (rowid, title_lower)
          SELECT new.rowid, new.title_lower WHERE new.title_lower IS NOT NULL;
      END;
    `,
    after: fillTitleLower,
  },
  {
    version: 6,
    sql: `
      -- One index fewer to write per create and decision: the sweeper finds the earliest deadline
      -- in requests_status_deadline_id (status, deadline key, id), which listing keeps anyway.
      DROP INDEX requests_pending_deadline;
    `,
  },
  {
    version: 7,
    sql: `
      -- Review metrics, pre-aggregated (src/core/outcome-stats.ts): bumped by the write that settles
      -- a request, so the dashboard sums a window's counters instead of reading its requests.
      CREATE TABLE IF NOT EXISTS outcome_stats (
        hour INTEGER NOT NULL,
        action TEXT NOT NULL,
        status TEXT NOT NULL,
        method TEXT NOT NULL,
        bucket INTEGER NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (hour, action, status, method, bucket)
      ) WITHOUT ROWID;
      DELETE FROM outcome_stats;
      ${SQLITE_FILL_OUTCOME_STATS}
    `,
  },
  // New rows join the title search index in batches (src/store/sqlite-title-index.ts).
  { version: 8, sql: SQLITE_TITLE_INDEX_SQL },
  // A reviewer's requests, indexed by approver (src/store/sqlite-approver-index.ts).
  {
    version: 9,
    sql: approverIndexSql(
      (row) => `COALESCE(${row}.deadline, ${NO_DEADLINE.toExponential().replace("+", "")})`,
    ),
  },
  {
    version: 10,
    sql: `
      -- Per-agent quotas read their count and bytes from the index alone: reading each pending
      -- row's size from the table made a create cost ~5 ms with 10,000 pending for its agent (0.3
      -- ms now). Creates and decisions write the same entries as before; a transition that leaves
      -- a request pending and changes its document (a vote, an escalation) now moves its entry.
      DROP INDEX requests_pending_requester;
      CREATE INDEX requests_pending_requester ON requests (requester, doc_bytes)
        WHERE status = 'pending';
    `,
  },
  // 11 is left to the quotas' change being written beside this one.
  // Each learned trust rule's scope (src/store/sqlite-trust.ts).
  { version: 11, sql: SQLITE_TRUST_SCOPE_SQL },
  // Execution states: claimed and unknown executions found by column (src/store/sqlite-executions.ts).
  { version: 12, sql: SQLITE_EXECUTION_COLUMNS_SQL },
  // Resume tickets, which are not requests (src/store/sqlite-tickets.ts).
  { version: 13, sql: SQLITE_TICKETS_SQL },
  {
    version: 14,
    sql: `
      -- Deadline order on pending requests only (the inbox queue, the sweeper): a decided request has
      -- no live deadline, so its entry only repeated (status, id), which requests_status_id holds.
      -- A decision now deletes its pending entry and writes none at the tail of its new status: one
      -- index page fewer per decision once the pending entries lie apart from the decided ones.
      -- Listing a decided status in deadline order walks requests_status_id (whereOf in sqlite.ts).
      -- The status stays first in the key, constant as it is: the planner then sees the index answer
      -- both the listing's status = 'pending' and its order, as it did with the full index.
      -- Re-runnable (a test rolls migrations back by hand).
      DROP INDEX IF EXISTS requests_status_deadline_id;
      CREATE INDEX IF NOT EXISTS requests_pending_deadline_id
        ON requests (status, COALESCE(deadline, 9e15), id) WHERE status = 'pending';
    `,
  },
];

/** Lower-cases the titles of the rows written before migration 5 (the trigger indexes each). */
function fillTitleLower(db: Database.Database): void {
  const page = db.prepare<[number], { rowid: number; title: string }>(
    "SELECT rowid, title FROM requests WHERE rowid > ? ORDER BY rowid LIMIT 1000",
  );
  const set = db.prepare("UPDATE requests SET title_lower = ? WHERE rowid = ?");
  for (let after = 0; ; ) {
    const rows = page.all(after);
    for (const r of rows) set.run(r.title.toLowerCase(), r.rowid);
    const last = rows[rows.length - 1];
    if (!last) return;
    after = last.rowid;
  }
}
