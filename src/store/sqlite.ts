// The embedded default store: one SQLite file (better-sqlite3, WAL). Several processes may share the
// file; writes take the write lock up front (BEGIN IMMEDIATE) and other processes' commits are noticed
// by polling `PRAGMA data_version`, which changes only when another connection commits.
//
// better-sqlite3 is synchronous: while SQLite waits for another process's lock, the event loop waits
// too. So each attempt waits only briefly (`busyTimeoutMs`), and a write that finds the file locked
// tries again after a timer, for up to `lockWaitMs`, before failing with `store_unavailable`.
// Storage faults (locked, disk full, read-only, I/O errors) are `store_unavailable` too.
import { accessSync, constants } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { GENESIS_HASH, keyForAppend, placeEvent } from "../audit/chain.js";
import {
  type AuditKeyOptions,
  checkpointWriterFor,
  type OwnAuditKey,
  ownAuditKey,
  recordCheckpointsStart,
} from "../audit/checkpoint.js";
import { AirlockError, InvalidInputError } from "../core/errors.js";
import type { OutboxClaim, OutboxDraft, OutboxFilter, OutboxSettlement } from "../core/outbox.js";
import { HOUR_MS, type OutcomeStat, settledStat } from "../core/outcome-stats.js";
import { checkPendingQuota, quotaRefusal } from "../core/quota.js";
import {
  type ApprovalRequest,
  type AuditDraft,
  type AuditEvent,
  STATUSES,
} from "../core/schemas.js";
import type {
  InsertResult,
  ListFilter,
  PendingQuota,
  Store,
  TransitionResult,
} from "../core/store.js";
import {
  type ApproverIndexUse,
  approverIndexUse,
  type Estimate,
  indexChoice,
  NARROW_MAX_AGE_MS,
  narrowSql,
} from "./approver-index.js";
import {
  byDueOrder,
  checkClaim,
  checkOutboxDrafts,
  checkOutboxFilter,
  checkSettlement,
  draftColumns,
  type OutboxRow,
  outboxLimit,
  outboxOf,
  settlementColumns,
} from "./outbox-rows.js";
import {
  clampLimit,
  countCap,
  executionCondition,
  listedExecutions,
  listedStatuses,
  listOrder,
  NO_DEADLINE,
  type Positioned,
  pageOf,
  parseCursor,
  position,
  SAMPLE_MAX_AGE_MS,
  SAMPLE_TITLES,
} from "./paging.js";
import {
  type AuditRow,
  auditOf,
  columnsOf,
  type DocRow,
  type OutcomeSqlRow,
  outcomeOf,
  parseDoc,
  SUMMARY_COLUMNS,
  type SummaryRow,
  summaryFromRow,
} from "./rows.js";
import { SQLITE_APPROVER_DIALECT } from "./sqlite-approver-index.js";
import { groupCommit } from "./sqlite-batch.js";
import { type Checkpointer, startCheckpointer } from "./sqlite-checkpointer.js";
import { sqliteExecutionStatements } from "./sqlite-executions.js";
import { isLocked, sqliteFault, whileLocked } from "./sqlite-faults.js";
import { applySqliteMigrations } from "./sqlite-migrate.js";
import { SQLITE_MIGRATIONS } from "./sqlite-migrations.js";
import { DOC_STATUS_COLUMNS, docStatusOfRow, sqlitePruning } from "./sqlite-prune.js";
import { rowKeys, type UpdateKind, updateKind } from "./sqlite-row-keys.js";
import {
  matchQuery,
  planCount,
  planSearch,
  type TitleSample,
  type TitleSearch,
  trigrams,
} from "./sqlite-search.js";
import { sqliteTickets } from "./sqlite-tickets.js";
import {
  indexTitlesLeftBehind,
  TITLE_INDEX_BATCH,
  titleIndexer,
  UNINDEXED_ROWIDS,
} from "./sqlite-title-index.js";
import { sqliteTrustRules } from "./sqlite-trust.js";
import { checkColumns, checkDrafts, idTaken } from "./storable.js";
import { timedCache } from "./timed-cache.js";

/** With the audit options (`auditKey`, `checkpointFile`, `checkpointIntervalMs`). */
export interface SqliteStoreOptions extends AuditKeyOptions {
  /** How often to look for other processes' commits while someone is listening. @default 10 */
  pollMs?: number;
  /** How long one attempt waits for another process's lock (SQLite's busy_timeout). The event loop
   * is blocked meanwhile, so keep it short. @default 25 */
  busyTimeoutMs?: number;
  /** How long an operation keeps trying, between attempts, while another process holds the lock,
   * before it fails with `store_unavailable`. @default 2000 */
  lockWaitMs?: number;
  /** Background problems, for logging: a checkpoint that could not be written, a WAL checkpoint
   * thread that stopped. */
  onError?: (err: Error) => void;
  /** Copy the WAL into the database on a worker thread (sqlite-checkpointer.ts), started once this
   * store has committed a few hundred writes; `false` leaves it all to SQLite's automatic checkpoint
   * in the committing thread. @default true */
  checkpointThread?: boolean;
  /** Extra configuration of the connection (pragmas), run before the schema is migrated. */
  configure?: (db: Database.Database) => void;
  /** When a reviewer's listing is read from the approver index (src/store/approver-index.ts):
   * "auto" by its share and count, "always", or "never". @default "auto" */
  approverIndex?: ApproverIndexUse;
}

/** An agent's pending requests and their bytes, for its quotas: read from the index alone, whose
 * entries hold each pending request's size (migration 10). */
export const SQLITE_PENDING_USAGE_SQL = `SELECT COUNT(*) AS n, SUM(doc_bytes) AS bytes
  FROM requests INDEXED BY requests_pending_requester WHERE requester = ? AND status = 'pending'`;

/** WAL pages after which SQLite checkpoints (its default: about 4 MB). */
const WAL_AUTOCHECKPOINT_PAGES = 1000;
/** Commits after which the checkpoint thread starts: a store that writes little never needs one. */
const CHECKPOINT_THREAD_AFTER = 200;
/** The WAL file is cut back to this size after each checkpoint, so it cannot stay large. */
const JOURNAL_SIZE_LIMIT = 8 * 1024 * 1024;
const HEAD_SQL = "SELECT seq, hash, keyed_from, key_id FROM audit_head WHERE id = 1";
const NO_DEADLINE_SQL = NO_DEADLINE.toExponential().replace("+", "");
const DEADLINE_KEY = `COALESCE(deadline, ${NO_DEADLINE_SQL})`;

interface HeadRow {
  seq: number;
  hash: string;
  keyed_from: number | null;
  key_id: string | null;
}

export function sqliteStore(path: string, options: SqliteStoreOptions = {}): Store {
  const where =
    path === ":memory:" || path === ""
      ? "the in-memory SQLite database"
      : `the SQLite database at ${path}`;
  const busyTimeoutMs = positive(options.busyTimeoutMs ?? 25, "busyTimeoutMs");
  const lockWaitMs = positive(options.lockWaitMs ?? 2000, "lockWaitMs");
  const indexUse = approverIndexUse(options.approverIndex);
  const own = ownAuditKey(options);
  checkWritable(path, where);
  // Before the database opens: a checkpoint file that cannot be written is refused at once.
  const checkpoints = checkpointWriterFor(options, own, options.onError);
  let db: Database.Database;
  try {
    db = new Database(path);
  } catch (err) {
    throw new AirlockError("store_unavailable", `cannot open ${where}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  let background: ReturnType<typeof checkpointThreadFor>;
  try {
    // The busy timeout first: the pragmas below and the migration may meet another process opening
    // the same new file at the same moment.
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    enableWal(db, lockWaitMs);
    // NORMAL in WAL mode survives any process crash; only a power loss may drop the last commits.
    db.pragma("synchronous = NORMAL");
    // Bounded WAL: checkpoint every ~4 MB, and cut the file back after each checkpoint (a full
    // volume filled from the WAL alone otherwise).
    db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
    options.configure?.(db);
    retrySync(() => migrateSync(db, own), lockWaitMs);
    background = checkpointThreadFor(db, path, options, busyTimeoutMs);
  } catch (err) {
    db.close();
    throw sqliteFault(err, where, "opening");
  }

  const stmt = {
    insert: db.prepare(
      `INSERT INTO requests (id, key, action, title, title_lower, status, risk, confidence, level, requester, approvers, quorum, deadline, created_at, updated_at, correlation_id, revision_of, item_count, outcome, method, reviewer, decided_at, execution, lease_until, version, doc_bytes, doc)
       VALUES (@id, @key, @action, @title, @title_lower, @status, @risk, @confidence, @level, @requester, @approvers, @quorum, @deadline, @created_at, @updated_at, @correlation_id, @revision_of, @item_count, @outcome, @method, @reviewer, @decided_at, @execution, @lease_until, @version, @doc_bytes, @doc)
       ON CONFLICT(requester, key) WHERE key IS NOT NULL DO NOTHING`,
    ),
    byId: db.prepare<[string], DocRow>("SELECT doc FROM requests WHERE id = ?"),
    byKey: db.prepare<[string, string], DocRow>(
      "SELECT doc FROM requests WHERE requester = ? AND key = ?",
    ),
    update: db.prepare(
      `UPDATE requests SET action = @action, title = @title, title_lower = @title_lower, status = @status, risk = @risk,
         confidence = @confidence, level = @level, approvers = @approvers, quorum = @quorum,
         deadline = @deadline, updated_at = @updated_at, correlation_id = @correlation_id,
         revision_of = @revision_of, item_count = @item_count, outcome = @outcome, method = @method,
         reviewer = @reviewer, decided_at = @decided_at, execution = @execution,
         lease_until = @lease_until, version = @version, doc_bytes = @doc_bytes, doc = @doc
       WHERE id = @id AND version = @expected`,
    ),
    // A transition that keeps the indexed columns as they are (status, deadline, title): an UPDATE
    // that does not name them leaves their index entries (and their pages) alone, but for the
    // pending-requester index, whose entries hold doc_bytes: a pending request's entry moves when
    // its document's size changes. The full update above follows when this one finds the row
    // changed in one of them, or not at this version.
    updateUnindexed: db.prepare(
      `UPDATE requests SET action = @action, title = @title, risk = @risk, confidence = @confidence,
         level = @level, approvers = @approvers, quorum = @quorum, updated_at = @updated_at,
         correlation_id = @correlation_id, revision_of = @revision_of, item_count = @item_count,
         outcome = @outcome, method = @method, reviewer = @reviewer, decided_at = @decided_at,
         version = @version, doc_bytes = @doc_bytes, doc = @doc
       WHERE id = @id AND version = @expected AND status = @status AND deadline IS @deadline
         AND title_lower IS @title_lower AND execution IS @execution
         AND lease_until IS @lease_until`,
    ),
    // A transition that changes the execution state or lease but keeps status, deadline and title (a
    // claim, an execution's outcome): the status, deadline and approver indexes stay as they are;
    // only the partial indexes on the execution columns move (sqlite-row-keys.ts).
    updateExecution: db.prepare(
      `UPDATE requests SET action = @action, title = @title, risk = @risk, confidence = @confidence,
         level = @level, approvers = @approvers, quorum = @quorum, updated_at = @updated_at,
         correlation_id = @correlation_id, revision_of = @revision_of, item_count = @item_count,
         outcome = @outcome, method = @method, reviewer = @reviewer, decided_at = @decided_at,
         execution = @execution, lease_until = @lease_until, version = @version,
         doc_bytes = @doc_bytes, doc = @doc
       WHERE id = @id AND version = @expected AND status = @status AND deadline IS @deadline
         AND title_lower IS @title_lower`,
    ),
    head: db.prepare<[], HeadRow>(HEAD_SQL),
    setHead: db.prepare(
      "UPDATE audit_head SET seq = @seq, hash = @hash, keyed_from = COALESCE(keyed_from, @keyed_from), key_id = COALESCE(key_id, @key_id) WHERE id = 1",
    ),
    appendAudit: db.prepare(
      `INSERT INTO audit (seq, request_id, type, actor, at, data, prev_hash, hash)
       VALUES (@seq, @request_id, @type, @actor, @at, @data, @prev_hash, @hash)`,
    ),
    // The pending requests' (deadline key, id) index answers both from its first entry on; a request
    // without a deadline has the key NO_DEADLINE, past every date. INDEXED BY: without statistics
    // the planner might prefer the (status, id) index and read every pending row.
    nextDeadline: db.prepare<[], { d: number | null }>(
      `SELECT deadline AS d FROM requests INDEXED BY requests_pending_deadline_id
       WHERE status = 'pending' AND ${DEADLINE_KEY} < ${NO_DEADLINE_SQL}
       ORDER BY ${DEADLINE_KEY} LIMIT 1`,
    ),
    due: db.prepare<[number, number], DocRow>(
      `SELECT doc FROM requests INDEXED BY requests_pending_deadline_id
       WHERE status = 'pending' AND ${DEADLINE_KEY} <= ? AND ${DEADLINE_KEY} < ${NO_DEADLINE_SQL}
       ORDER BY ${DEADLINE_KEY}, id LIMIT ?`,
    ),
    ...sqliteExecutionStatements(db),
    outcomes: db.prepare<[number], OutcomeSqlRow>(
      `SELECT action, status, method, created_at, decided_at
       FROM requests WHERE status != 'pending' AND decided_at >= ?`,
    ),
    countPending: db.prepare<[], { n: number }>(
      "SELECT COUNT(*) AS n FROM requests WHERE status = 'pending'",
    ),
    pendingUsage: db.prepare<[string], { n: number; bytes: number | null }>(
      SQLITE_PENDING_USAGE_SQL,
    ),
    statuses: db.prepare<
      [string, number],
      { id: string; status: string; doc_status: unknown; doc: unknown }
    >(
      // The document's status as the store reads it (JSON.parse: the last of duplicate keys), not
      // as json_extract alone would (the first): verification must see what getRequest returns.
      `SELECT id, status, ${DOC_STATUS_COLUMNS("doc")} FROM requests WHERE id > ? ORDER BY id LIMIT ?`,
    ),
    anyAudit: db.prepare<[], { one: number }>("SELECT 1 AS one FROM audit LIMIT 1"),
    outboxInsert: db.prepare(
      `INSERT INTO outbox (id, target, topic, request_id, payload, available_at, created_at, updated_at)
       VALUES (@id, @target, @topic, @request_id, @payload, @available_at, @created_at, @created_at)
       ON CONFLICT(id) DO NOTHING`,
    ),
    // Due pending rows whose lease is free or past, oldest first, leased in the same statement (the
    // IMMEDIATE transaction around it keeps every other connection out meanwhile).
    outboxClaim: db.prepare<
      [{ now: number; until: number; owner: string; limit: number }],
      OutboxRow
    >(
      `UPDATE outbox SET lease_owner = @owner, lease_until = @until, attempts = attempts + 1, updated_at = @now
       WHERE n IN (
         SELECT n FROM outbox INDEXED BY outbox_status_available
         WHERE status = 'pending' AND available_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
         ORDER BY available_at, n LIMIT @limit)
       RETURNING *`,
    ),
    // Only the lease holder settles; a NULL keeps the column as it was.
    outboxSettle: db.prepare(
      `UPDATE outbox SET status = @status, available_at = COALESCE(@available_at, available_at),
         last_error = COALESCE(@last_error, last_error), receipt = @receipt, delivered_at = @delivered_at,
         lease_owner = NULL, lease_until = NULL, updated_at = @now,
         attempts = MAX(attempts - @attempts_back, 0)
       WHERE id = @id AND lease_owner = @owner AND status = 'pending'`,
    ),
    dataVersion: db.prepare<[], { data_version: number }>("PRAGMA data_version"),
    bumpStat: db.prepare<[number, string, string, string, number]>(
      `INSERT INTO outcome_stats (hour, action, status, method, bucket, n) VALUES (?, ?, ?, ?, ?, 1)
       ON CONFLICT (hour, action, status, method, bucket) DO UPDATE SET n = n + 1`,
    ),
    outcomeStats: db.prepare<[number], OutcomeStat>(
      "SELECT hour, action, status, method, bucket, n FROM outcome_stats WHERE hour >= ?",
    ),
  };

  /** Counts a request that this write settles (outcome-stats.ts). */
  function countSettled(next: ApprovalRequest, drafts: AuditDraft[]): void {
    const s = settledStat(next, drafts);
    if (s) stmt.bumpStat.run(s.hour, s.action, s.status, s.method, s.bucket);
  }

  // Listing builds its SQL from the filter; each distinct shape is prepared once.
  const prepared = new Map<string, Database.Statement<unknown[], unknown>>();
  function cached<R>(sql: string): Database.Statement<unknown[], R> {
    let st = prepared.get(sql);
    if (!st) {
      st = db.prepare<unknown[], unknown>(sql);
      prepared.set(sql, st);
    }
    return st as Database.Statement<unknown[], R>;
  }

  // The indexed columns of the rows this store wrote last, which pick each transition's UPDATE.
  const keys = rowKeys();
  const updates: Record<UpdateKind, Database.Statement> = {
    unindexed: stmt.updateUnindexed,
    execution: stmt.updateExecution,
    full: stmt.update,
  };

  // This process's creates since the title index last took the new rows (sqlite-title-index.ts).
  let unindexedTitles = 0;
  const indexTitles = titleIndexer(db);

  // Within a group commit the chain head is read once, kept here, and written once at the end of
  // the batch (the lock is held throughout, so nobody else appends meanwhile). Outside a batch
  // (undefined) each append reads and writes the head row itself.
  let batchHead: { head: HeadRow | undefined; dirty: boolean } | undefined;

  function appendChain(drafts: AuditDraft[]): AuditEvent[] {
    if (drafts.length === 0) return [];
    const head = batchHead?.head ?? stmt.head.get();
    if (!head) throw headMissing(where, stmt.anyAudit.get() !== undefined);
    const { key, startsKeying } = keyForAppend(own, {
      keyedFrom: head.keyed_from,
      keyId: head.key_id,
    });
    let prev: { seq: number; hash: string } = head;
    const out: AuditEvent[] = [];
    for (const draft of drafts) {
      // The data is kept as the canonical JSON its hash covers, so verification hashes it as read.
      const { event: e, dataJson } = placeEvent(draft, prev.seq === 0 ? undefined : prev, key);
      stmt.appendAudit.run({
        seq: e.seq,
        request_id: e.requestId ?? null,
        type: e.type,
        actor: e.actor,
        at: e.at,
        data: dataJson,
        prev_hash: e.prevHash,
        hash: e.hash,
      });
      out.push(e);
      prev = e;
    }
    const next: HeadRow = {
      seq: prev.seq,
      hash: prev.hash,
      keyed_from: startsKeying ? head.seq + 1 : head.keyed_from,
      key_id: startsKeying ? (own?.id ?? null) : head.key_id,
    };
    if (batchHead) batchHead = { head: next, dirty: true };
    else stmt.setHead.run(next);
    return out;
  }

  /** Runs a write of a batch; a write that fails leaves the kept head as it found it. */
  function inBatch<T>(work: () => T): () => T {
    return () => {
      const before = batchHead;
      try {
        return work();
      } catch (err) {
        batchHead = before;
        throw err;
      }
    };
  }

  /** Writes the messages not already there (by id), in their order; returns how many. */
  function writeOutbox(messages: OutboxDraft[], now: number): number {
    let written = 0;
    for (const m of messages) written += stmt.outboxInsert.run(draftColumns(m, now)).changes;
    return written;
  }

  // The two writes of the hot path, run by the group commit inside a savepoint each.
  function insertTx(
    request: ApprovalRequest,
    drafts: AuditDraft[],
    messages: OutboxDraft[],
    quota: PendingQuota | undefined,
  ): InsertResult {
    let info: Database.RunResult;
    const row = rowOf(request);
    try {
      info = stmt.insert.run(row);
    } catch (err) {
      if ((err as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
        throw idTaken(request.id, err);
      }
      throw err;
    }
    if (info.changes === 0) {
      const existing =
        request.key !== undefined ? stmt.byKey.get(request.requester, request.key) : undefined;
      if (!existing) throw idTaken(request.id);
      return { request: parseDoc(existing), created: false, events: [] };
    }
    if (quota && request.status === "pending") {
      // Counted with the new row, under the write lock (BEGIN IMMEDIATE) that every create of every
      // process takes: no other create can come in between. A refusal throws, and the savepoint
      // (or the transaction of a lone write) takes the row back.
      const used = stmt.pendingUsage.get(request.requester);
      const before = { count: (used?.n ?? 1) - 1, bytes: (used?.bytes ?? 0) - row.doc_bytes };
      const refused = quotaRefusal(request.requester, before, row.doc_bytes, quota);
      if (refused) throw refused;
    }
    writeOutbox(messages, request.updatedAt);
    countSettled(request, drafts);
    unindexedTitles++;
    keys.set(request.id, request.version, row);
    return { request, created: true, events: appendChain(drafts), docJson: row.doc };
  }

  function transitionTx(
    next: ApprovalRequest,
    expected: number,
    drafts: AuditDraft[],
    messages: OutboxDraft[],
  ): TransitionResult {
    const row = { ...rowOf(next), expected };
    // The narrowest UPDATE for what changes, when this store knows the row at `expected`; else the
    // one that leaves every index alone, tried first. Either is followed by the full one when it
    // finds the row otherwise (sqlite-row-keys.ts).
    const known = keys.get(next.id, expected);
    const first = known ? updates[updateKind(known, row)] : stmt.updateUnindexed;
    if (
      first.run(row).changes === 0 &&
      (first === stmt.update || stmt.update.run(row).changes === 0)
    ) {
      keys.forget(next.id);
      const current = stmt.byId.get(next.id);
      return { ok: false, request: current ? parseDoc(current) : undefined, events: [] };
    }
    keys.set(next.id, next.version, row);
    writeOutbox(messages, next.updatedAt);
    countSettled(next, drafts);
    return { ok: true, request: next, events: appendChain(drafts), docJson: row.doc };
  }

  const appendTx = db.transaction((drafts: AuditDraft[]) => appendChain(drafts));
  const pruning = sqlitePruning(db, own);
  const enqueueTx = db.transaction((messages: OutboxDraft[], now: number) =>
    writeOutbox(messages, now),
  );
  const claimTx = db.transaction((c: OutboxClaim) =>
    stmt.outboxClaim
      .all({ now: c.now, until: c.now + c.leaseMs, owner: c.owner, limit: c.limit })
      .sort(byDueOrder),
  );
  const settleTx = db.transaction(
    (id: string, owner: string, s: OutboxSettlement, drafts: AuditDraft[], now: number) => {
      const info = stmt.outboxSettle.run({ ...settlementColumns(s, now), id, owner, now });
      if (info.changes === 0) return { settled: false, events: [] };
      return { settled: true, events: appendChain(drafts) };
    },
  );

  /** A listing's rows, with the SQL that read them. A title search first reads the listing's first
   * SCAN_ROWS rows in order: a common text fills the page from them (its first matches are the
   * page), cheaper than any use of the index. Otherwise the index is asked (planSearch). */
  function listed<R>(filter: ListFilter, columns: string): { rows: R[]; list: ListSql } {
    if (readsIndex(filter)) {
      // A reviewer of few requests: read from its rows in the approver index.
      const n = narrowSql(SQLITE_APPROVER_DIALECT, filter, columns);
      const list = { sql: n.sql, params: n.values, order: n.order, limit: n.limit };
      return { rows: cached<R>(list.sql).all(...list.params), list };
    }
    const q = filter.q?.toLowerCase() ?? "";
    const first = trigrams(q).length > 0 ? scanFirstSql(filter, columns) : undefined;
    let seen = 0;
    if (first) {
      const rows = cached<R>(first.sql).all(...first.params);
      if (rows.length > first.limit) return { rows, list: first };
      seen = rows.length;
    }
    const list = listSql(filter, columns, first ? planSearch(q, titleSample(), seen) : undefined);
    return { rows: cached<R>(list.sql).all(...list.params), list };
  }

  /** Whether a listing is read from the approver index (approver-index.ts); its estimates are kept
   * ten minutes (they cost up to tens of ms). */
  const reviewerFigures = timedCache<number>(NARROW_MAX_AGE_MS);
  function readsIndex(filter: ListFilter): boolean {
    const choice = indexChoice(SQLITE_APPROVER_DIALECT, filter, indexUse);
    if (typeof choice === "boolean") return choice;
    const figure = (e: Estimate) =>
      reviewerFigures.get(
        e.key,
        Date.now(),
        () => cached<{ n: number }>(e.sql).get(...e.values)?.n ?? 0,
      );
    return choice.every((e) => figure(e) < e.below);
  }

  /** The newest titles, read again when older than SAMPLE_MAX_AGE_MS (sqlite-search.ts). */
  const samples = timedCache<TitleSample>(SAMPLE_MAX_AGE_MS);
  const titleSample = (): TitleSample =>
    samples.get("", Date.now(), () => ({
      titles: cached<{ t: string }>(
        "SELECT title_lower AS t FROM requests ORDER BY id DESC LIMIT ?",
      )
        .all(SAMPLE_TITLES)
        .map((r) => r.t),
    }));

  // Cross-process change detection: one timer for all listeners, running only while there are any.
  const listeners = new Set<() => void>();
  let pollTimer: NodeJS.Timeout | undefined;
  let lastDataVersion = 0;
  const pollMs = options.pollMs ?? 10;
  function poll() {
    if (closed) return;
    let v: number;
    try {
      v = stmt.dataVersion.get()?.data_version ?? 0;
    } catch {
      return; // a busy or closing database: try again on the next tick
    }
    if (v !== lastDataVersion) {
      lastDataVersion = v;
      for (const l of [...listeners]) l();
    }
  }

  let closed = false;
  function guard() {
    if (closed) throw new AirlockError("closed", "the SQLite store is closed");
  }

  /** Runs `fn`, waiting on timers while another process holds the lock; see `whileLocked`. */
  function attempt<T>(what: string, fn: () => T): Promise<T> {
    guard();
    return whileLocked(fn, { where, what, waitMs: lockWaitMs, guard });
  }

  // Requests inserted and transitioned together are committed together (sqlite-batch.ts).
  const batch = groupCommit(
    db,
    // A batch that failed as a whole (its transaction rolled back) leaves no kept head behind.
    async (fn) => {
      await attempt("commit", () => {
        try {
          fn();
        } finally {
          batchHead = undefined;
        }
      });
      background?.committed();
    },
    {
      begin() {
        batchHead = { head: undefined, dirty: false };
      },
      end() {
        const kept = batchHead;
        batchHead = undefined;
        if (kept?.dirty && kept.head) stmt.setHead.run(kept.head);
        if (unindexedTitles >= TITLE_INDEX_BATCH) {
          indexTitles();
          unindexedTitles = 0;
        }
      },
    },
  );

  /** A write that appended events: the new head goes to the checkpoint file. */
  /** Appends the record that checkpoints start (recordCheckpointsStart). */
  async function appendRecord(drafts: AuditDraft[]): Promise<AuditEvent[]> {
    return noted({ events: await attempt("appendAudit", () => appendTx.immediate(drafts)) }).events;
  }

  function noted<T extends { events: AuditEvent[] }>(result: T): T {
    const last = result.events[result.events.length - 1];
    if (last && checkpoints) checkpoints.note(last);
    return result;
  }

  return {
    kind: "sqlite",
    async migrate() {
      await attempt("migrate", () => migrateSync(db, own));
      await recordCheckpointsStart(checkpoints, own, appendRecord);
    },
    async insertRequest(request, events, messages = [], options = {}) {
      checkColumns(request);
      checkDrafts(events);
      checkOutboxDrafts(messages);
      const { quota } = options;
      if (quota) checkPendingQuota(quota);
      guard();
      return noted(await batch.run(inBatch(() => insertTx(request, events, messages, quota))));
    },
    async getRequest(id) {
      return attempt("getRequest", () => {
        const row = stmt.byId.get(id);
        return row ? parseDoc(row) : undefined;
      });
    },
    async getRequestByKey(requester, key) {
      return attempt("getRequestByKey", () => {
        const row = stmt.byKey.get(requester, key);
        return row ? parseDoc(row) : undefined;
      });
    },
    async listRequests(filter) {
      return attempt("listRequests", () => {
        const { rows, list } = listed<DocRow & Positioned>(filter, "id, doc");
        const page = pageOf(list.order, rows, list.limit, position);
        return { ...page, items: page.items.map(parseDoc) };
      });
    },
    async listSummaries(filter) {
      return attempt("listSummaries", () => {
        const { rows, list } = listed<SummaryRow & Positioned>(filter, SUMMARY_COLUMNS);
        const page = pageOf(list.order, rows, list.limit, position);
        return { ...page, items: page.items.map(summaryFromRow) };
      });
    },
    async countRequests(filter, options = {}) {
      const upTo = countCap(options);
      return attempt("countRequests", () => {
        const q = filter.q?.toLowerCase() ?? "";
        const search = trigrams(q).length === 0 ? undefined : planCount(q, titleSample(), upTo);
        const w = whereOf(filter, search);
        const where = w.where.length ? `WHERE ${w.where.join(" AND ")}` : "";
        // Capped: the index is walked for `upTo` rows at most.
        const sql =
          upTo === undefined
            ? `SELECT COUNT(*) AS n FROM requests ${where}`
            : `SELECT COUNT(*) AS n FROM (SELECT 1 FROM requests ${where} LIMIT ${upTo})`;
        return cached<{ n: number }>(sql).get(...w.params)?.n ?? 0;
      });
    },
    async pendingUsage(requester) {
      return attempt("pendingUsage", () => {
        const row = stmt.pendingUsage.get(requester);
        return { count: row?.n ?? 0, bytes: row?.bytes ?? 0 };
      });
    },
    async listStatuses(after, limit) {
      return attempt("listStatuses", () =>
        stmt.statuses.all(after ?? "", Math.max(1, Math.trunc(limit))).map((r) => ({
          id: r.id,
          status: r.status as ApprovalRequest["status"],
          docStatus: docStatusOfRow(r),
        })),
      );
    },
    async transition(next, expectedVersion, events, messages = []) {
      guard();
      if (next.version !== expectedVersion + 1) {
        throw new AirlockError(
          "invalid_input",
          "transition: next.version must be expectedVersion + 1",
        );
      }
      checkColumns(next);
      checkDrafts(events);
      checkOutboxDrafts(messages);
      return noted(
        await batch.run(inBatch(() => transitionTx(next, expectedVersion, events, messages))),
      );
    },
    async enqueueOutbox(messages) {
      checkOutboxDrafts(messages);
      if (messages.length === 0) return 0;
      const now = Date.now();
      return attempt("enqueueOutbox", () => enqueueTx.immediate(messages, now));
    },
    async claimOutbox(claim) {
      checkClaim(claim);
      const rows = await attempt("claimOutbox", () => claimTx.immediate(claim));
      return rows.map(outboxOf);
    },
    async settleOutbox(id, owner, settlement, events = []) {
      checkSettlement(id, owner, settlement);
      checkDrafts(events);
      const now = Date.now();
      const out = await attempt("settleOutbox", () =>
        settleTx.immediate(id, owner, settlement, events, now),
      );
      noted(out);
      return out.settled;
    },
    async listOutbox(filter) {
      checkOutboxFilter(filter);
      const q = outboxListSql(filter);
      return attempt("listOutbox", () =>
        cached<OutboxRow>(q.sql)
          .all(...q.params)
          .map(outboxOf),
      );
    },
    async appendAudit(events) {
      checkDrafts(events);
      const appended = await attempt("appendAudit", () => appendTx.immediate(events));
      return noted({ events: appended }).events;
    },
    async listAudit(filter) {
      const where: string[] = [];
      const params: unknown[] = [];
      if (filter.requestId !== undefined) {
        where.push("request_id = ?");
        params.push(filter.requestId);
      }
      if (filter.after !== undefined) {
        where.push("seq > ?");
        params.push(filter.after);
      }
      const limit = Math.min(Math.max(filter.limit ?? 1000, 1), 10_000);
      const sql = `SELECT * FROM audit ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY seq LIMIT ?`;
      return attempt("listAudit", () =>
        cached<AuditRow>(sql)
          .all(...params, limit)
          .map(auditOf),
      );
    },
    async auditHead() {
      return attempt("auditHead", () => {
        const h = stmt.head.get();
        return h && h.seq > 0 ? { seq: h.seq, hash: h.hash } : undefined;
      });
    },
    auditVerification() {
      return {
        ...(own ? { key: own.key } : {}),
        ...(options.checkpointFile !== undefined ? { checkpointFile: options.checkpointFile } : {}),
      };
    },
    async prune(o) {
      const pruned = await pruning.prune(o, attempt);
      // The prune may have deleted the record that checkpoints are written: record it again.
      if (pruned.events > 0)
        await recordCheckpointsStart(checkpoints, own, appendRecord, { always: true });
      return pruned;
    },
    auditMarks: () => attempt("auditMarks", () => pruning.marks()),
    saveVerifiedMark: (m) => attempt("saveVerifiedMark", () => pruning.saveVerified(m)),
    readAuditPage: (after, limit) => attempt("readAuditPage", () => pruning.page(after, limit)),
    listStatusEvidence: (after, limit) =>
      attempt("listStatusEvidence", () => pruning.evidence(after, limit)),
    async auditChainState() {
      return attempt("auditChainState", () => {
        const h = stmt.head.get();
        return {
          head: h && h.seq > 0 ? { seq: h.seq, hash: h.hash } : undefined,
          headRowMissing: h === undefined,
          ...(h?.keyed_from != null ? { keyedFrom: h.keyed_from } : {}),
          ...(h?.key_id != null ? { keyId: h.key_id } : {}),
        };
      });
    },
    async nextDeadline() {
      return attempt("nextDeadline", () => stmt.nextDeadline.get()?.d ?? undefined);
    },
    async staleExecutions(now, limit) {
      return attempt("staleExecutions", () => stmt.staleExecutions.all(now, limit).map(parseDoc));
    },
    async nextLeaseEnd() {
      return attempt("nextLeaseEnd", () => stmt.nextLeaseEnd.get()?.d ?? undefined);
    },
    async dueRequests(now, limit) {
      return attempt("dueRequests", () => stmt.due.all(now, limit).map(parseDoc));
    },
    async outcomes(since) {
      return attempt("outcomes", () => stmt.outcomes.all(since).map(outcomeOf));
    },
    async outcomeStats(since) {
      return attempt("outcomeStats", () => stmt.outcomeStats.all(Math.floor(since / HOUR_MS)));
    },
    async countPending() {
      return attempt("countPending", () => stmt.countPending.get()?.n ?? 0);
    },
    ...sqliteTrustRules({ db, appendChain, attempt, noted }),
    ...sqliteTickets({ db, attempt }),
    onExternalChange(listener) {
      listeners.add(listener);
      if (!pollTimer && !closed) {
        try {
          lastDataVersion = stmt.dataVersion.get()?.data_version ?? 0;
        } catch {
          lastDataVersion = 0;
        }
        pollTimer = setInterval(poll, pollMs);
      }
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && pollTimer) {
          clearInterval(pollTimer);
          pollTimer = undefined;
        }
      };
    },
    async close() {
      if (closed) return;
      // Writes already queued are committed (or fail) before the connection closes.
      await batch.drain();
      if (closed) return;
      closed = true;
      if (pollTimer) clearInterval(pollTimer);
      pollTimer = undefined;
      listeners.clear();
      await checkpoints?.flush();
      await background?.stop();
      try {
        // Leave a small file behind: fold the WAL into the database and truncate it.
        db.pragma("wal_checkpoint(TRUNCATE)");
      } catch {
        // another process is reading or writing: it will checkpoint
      }
      db.close();
    },
  };
}

/** Commits (group-commit batches) counted until CHECKPOINT_THREAD_AFTER, then the thread: for a
 * file in WAL mode only. Nothing here may throw into a commit, which has already landed. */
function checkpointThreadFor(
  db: Database.Database,
  path: string,
  options: SqliteStoreOptions,
  busyTimeoutMs: number,
): Checkpointer | undefined {
  if (options.checkpointThread === false || path.startsWith("file:")) return undefined;
  if (db.pragma("journal_mode", { simple: true }) !== "wal") return undefined;
  const synchronous = db.pragma("synchronous", { simple: true }) as number;
  // Resolved now: the working directory may change before the thread starts.
  const file = resolve(path);
  let commits = 0;
  let thread: Checkpointer | undefined;
  let stopped = false;
  return {
    committed() {
      if (thread) return thread.committed();
      if (stopped || ++commits < CHECKPOINT_THREAD_AFTER) return;
      try {
        thread = startCheckpointer({
          path: file,
          synchronous,
          busyTimeoutMs,
          onError: options.onError,
        });
        thread.committed();
      } catch (err) {
        // No thread (a bundle without the driver's file, no threads at all): commits go on without.
        stopped = true;
        try {
          options.onError?.(
            new Error(`the SQLite checkpoint thread could not start: ${(err as Error).message}`, {
              cause: err,
            }),
          );
        } catch {
          // a logger that throws must not fail the commit either
        }
      }
    },
    async stop() {
      stopped = true;
      await thread?.stop();
    },
  };
}

/** SQLite opens a file it cannot write read-only without a word, and the first write fails much
 * later: say so at once. The folder must be writable too (SQLite creates the -wal and -shm files). */
function checkWritable(path: string, where: string): void {
  if (path === ":memory:" || path === "" || path.startsWith("file:")) return;
  const check = (target: string, what: string) => {
    try {
      accessSync(target, constants.W_OK);
    } catch (err) {
      const code = (err as { code?: string }).code ?? "";
      if (code === "ENOENT") return;
      if (code === "EACCES" || code === "EPERM" || code === "EROFS") {
        throw new AirlockError(
          "store_unavailable",
          `${where} is read-only: ${what} cannot be written by this process (${code}); make it writable, or open a copy`,
          { cause: err },
        );
      }
    }
  };
  check(path, "the file");
  check(dirname(resolve(path)), `its folder ${dirname(resolve(path))}`);
}

function positive(v: number, name: string): number {
  if (!Number.isInteger(v) || v < 1) {
    throw new InvalidInputError(
      `Expected \`${name}\` to be an integer from 1 and up, got \`${String(v)}\``,
      name,
    );
  }
  return v;
}

function headMissing(where: string, hasEvents: boolean): AirlockError {
  return new AirlockError(
    "store_unavailable",
    `the audit chain head row (table audit_head) is missing from ${where}${hasEvents ? " while the audit table holds events" : ""}: events may have been deleted, and without the head a truncation cannot be detected. Restore the database from a backup; or, after checking the log with \`airlock audit verify\`, recreate the head from the last event: INSERT INTO audit_head (id, seq, hash) SELECT 1, seq, hash FROM audit ORDER BY seq DESC LIMIT 1 (on a keyed chain also set keyed_from and key_id as they were)`,
  );
}

/** Retries a synchronous step that met another process's lock, pausing synchronously; for opening
 * only (two processes creating one file at once). */
function retrySync<T>(fn: () => T, waitMs: number): T {
  const until = Date.now() + waitMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return fn();
    } catch (err) {
      if (!isLocked(err) || Date.now() >= until) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.min(5 * (attempt + 1), 50));
    }
  }
}

/** Switches a file to WAL. Changing the journal mode does not wait for the busy timeout, so when
 * another process holds the file (both creating it at once), try again for up to `waitMs`. */
function enableWal(db: Database.Database, waitMs: number): void {
  const until = Date.now() + waitMs;
  for (let attempt = 0; ; attempt++) {
    try {
      db.pragma("journal_mode = WAL");
      return;
    } catch (err) {
      const code = (err as { code?: string }).code ?? "";
      if (!code.startsWith("SQLITE_BUSY") && !code.startsWith("SQLITE_LOCKED")) throw err;
      if (Date.now() >= until) {
        throw new AirlockError(
          "store_unavailable",
          `the SQLite database stayed locked by another process for ${waitMs} ms`,
          { cause: err },
        );
      }
      // A short synchronous pause: this runs once, while the store opens.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.min(5 * (attempt + 1), 50));
    }
  }
}

/** Applies the migrations, then checks the chain head: a missing head row with events in the log
 * means events may have been deleted (refuse); a keyed chain needs its key (refuse without it). */
function migrateSync(db: Database.Database, own: OwnAuditKey | undefined): void {
  applySqliteMigrations(db, "airlock_migrations", SQLITE_MIGRATIONS);
  const where = `the SQLite database at ${db.name}`;
  let head = db.prepare<[], HeadRow>(HEAD_SQL).get();
  if (!head) {
    const ensure = db.transaction(() => {
      if (db.prepare("SELECT 1 FROM audit LIMIT 1").get() !== undefined) {
        throw headMissing(where, true);
      }
      db.prepare("INSERT OR IGNORE INTO audit_head (id, seq, hash) VALUES (1, 0, ?)").run(
        GENESIS_HASH,
      );
      return db.prepare<[], HeadRow>(HEAD_SQL).get();
    });
    head = ensure.immediate();
  }
  if (head) keyForAppend(own, { keyedFrom: head.keyed_from, keyId: head.key_id });
  indexTitlesLeftBehind(db);
}

interface ListSql {
  sql: string;
  params: unknown[];
  order: ReturnType<typeof listOrder>;
  limit: number;
}

/** The conditions of a filter, without its cursor. A title search (filter.q) is written as `search`
 * plans it; without a plan, with all the text's trigrams; `false` leaves it out. */
function whereOf(
  filter: ListFilter,
  search?: TitleSearch | false,
): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const statuses = listedStatuses(filter);
  if (statuses.length) where.push(statusCondition(statuses, params));
  if (filter.action !== undefined) {
    where.push("action = ?");
    params.push(filter.action);
  }
  if (filter.requester !== undefined) {
    where.push("requester = ?");
    params.push(filter.requester);
  }
  const executions = listedExecutions(filter);
  if (executions.length) where.push(executionCondition(executions));
  if (filter.approver !== undefined) {
    where.push(approverCheck("requests.approvers", filter.approver, params));
  }
  if (search !== false && filter.q !== undefined && filter.q !== "") {
    // Exactly titleMatches (paging.ts): the lower-cased title contains the lower-cased text.
    const q = filter.q.toLowerCase();
    const plan = search ?? { q, grams: trigrams(q), mode: "index" };
    if (plan.mode !== "scan" && plan.grams.length > 0) {
      // The titles holding the chosen trigrams (the index keeps no positions), then instr() keeps
      // exactly those containing the text itself. `+rowid` keeps SQLite from reading rows by the
      // candidates' rowids, so it walks the listing's order index instead (sqlite-search.ts).
      const rowid = plan.mode === "walk" ? "+requests.rowid" : "requests.rowid";
      where.push(
        // The rows the index does not hold yet are candidates too (sqlite-title-index.ts).
        `${rowid} IN (SELECT rowid FROM requests_title WHERE requests_title MATCH ? UNION ALL ${UNINDEXED_ROWIDS}) AND instr(title_lower, ?) > 0`,
      );
      params.push(matchQuery(plan.grams), q);
    } else {
      // Too short for a trigram, or planned so: a scan in the listing's order, which stops once the
      // page is full.
      where.push("instr(title_lower, ?) > 0");
      params.push(q);
    }
  }
  return { where, params };
}

/** The listing's condition on statuses. A known status is written as a literal, so that the planner
 * sees `status = 'pending'` and may use the pending requests' partial index;
 * anything else stays a parameter (it matches no row). */
function statusCondition(statuses: readonly string[], params: unknown[]): string {
  const values = statuses.map((s) => {
    if ((STATUSES as readonly string[]).includes(s)) return `'${s}'`;
    params.push(s);
    return "?";
  });
  return values.length === 1 ? `status = ${values[0]}` : `status IN (${values.join(",")})`;
}

/** Whether a filter lists decided statuses only: their rows have no live deadline, so their deadline
 * order is their id order. */
function decidedOnly(filter: ListFilter): boolean {
  const statuses = listedStatuses(filter);
  return statuses.length > 0 && !statuses.includes("pending");
}

/** A page of a listing in its order (one row more than the page, to know whether one follows),
 * each row with its deadline key for the cursor. Newest and oldest walk the id (primary key, or
 * (status, id)); deadline order walks the pending requests' (deadline key, id), and for decided
 * statuses only, whose deadline key is NO_DEADLINE on every row, (status, id). */
function listSql(filter: ListFilter, columns: string, search?: TitleSearch | false): ListSql {
  const order = listOrder(filter);
  const cursor = parseCursor(order, filter.cursor);
  const { where, params } = whereOf(filter, search);
  const byId = order === "deadline" && decidedOnly(filter);
  if (cursor?.order === "deadline" && byId) {
    // Every row's key is NO_DEADLINE: after a cursor below it every row follows, after one at it
    // the ids past its id, after one above it none.
    if (cursor.key === NO_DEADLINE) {
      where.push("id > ?");
      params.push(cursor.id);
    } else if (cursor.key > NO_DEADLINE) where.push("0");
  } else if (cursor?.order === "deadline") {
    // Not a row value: this form lets the index range start at the cursor's deadline.
    where.push(`${DEADLINE_KEY} >= ? AND (${DEADLINE_KEY} > ? OR id > ?)`);
    params.push(cursor.key, cursor.key, cursor.id);
  } else if (cursor) {
    where.push(order === "newest" ? "id < ?" : "id > ?");
    params.push(cursor.id);
  }
  const limit = clampLimit(filter.limit);
  const orderBy = byId
    ? "id"
    : order === "deadline"
      ? `${DEADLINE_KEY}, id`
      : order === "newest"
        ? "id DESC"
        : "id";
  const sql = `SELECT ${columns}, ${DEADLINE_KEY} AS dkey FROM requests ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY ${orderBy} LIMIT ?`;
  return { sql, params: [...params, limit + 1], order, limit };
}

/** How many rows in listing order a title search reads before it asks the index. */
const SCAN_ROWS = 2000;

/** Open to everyone (no approvers), or shares a name or group with the caller: `column` holds the
 * approvers as JSON. */
function approverCheck(column: string, approver: string | string[], params: unknown[]): string {
  const names = Array.isArray(approver) ? approver : [approver];
  params.push(...names);
  const inList = names.map(() => "?").join(",") || "NULL";
  return `(${column} = '[]' OR EXISTS (SELECT 1 FROM json_each(${column}) WHERE value IN (${inList})))`;
}

/** The listing's first SCAN_ROWS rows in its order (by its order index, without the search and the
 * approver filter), of which those the search and the approver filter keep; the answer is the page
 * when it holds more rows than the page. A common text, or a reviewer of many of the requests,
 * fills its page there. */
function scanFirstSql(filter: ListFilter, columns: string): ListSql {
  const inner = listSql(
    { ...filter, approver: undefined },
    `${columns}, title_lower AS search_title, approvers AS search_approvers`,
    false,
  );
  const kept: string[] = [];
  const params: unknown[] = [];
  if (filter.q) {
    kept.push("instr(search_title, ?) > 0");
    params.push(filter.q.toLowerCase());
  }
  if (filter.approver !== undefined) {
    kept.push(approverCheck("search_approvers", filter.approver, params));
  }
  const orderBy =
    inner.order === "deadline" && !decidedOnly(filter)
      ? "dkey, id"
      : inner.order === "newest"
        ? "id DESC"
        : "id";
  return {
    ...inner,
    sql: `SELECT * FROM (${inner.sql.replace(/LIMIT \?$/, `LIMIT ${SCAN_ROWS}`)})
      ${kept.length ? `WHERE ${kept.join(" AND ")}` : ""} ORDER BY ${orderBy} LIMIT ?`,
    params: [...inner.params.slice(0, -1), ...params, inner.limit + 1],
  };
}

function rowOf(r: ApprovalRequest) {
  return {
    ...columnsOf(r),
    approvers: JSON.stringify(r.approvers),
    title_lower: r.title.toLowerCase(),
  };
}

/** The delivery log: rows matching the filter, oldest first (by n), after the row `filter.after`. */
function outboxListSql(filter: OutboxFilter): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const eq = (column: string, v: string | undefined) => {
    if (v === undefined) return;
    where.push(`${column} = ?`);
    params.push(v);
  };
  eq("request_id", filter.requestId);
  eq("target", filter.target);
  eq("status", filter.status);
  eq("topic", filter.topic);
  if (filter.after !== undefined) {
    // An unknown id compares with NULL: nothing is after it.
    where.push("n > (SELECT n FROM outbox WHERE id = ?)");
    params.push(filter.after);
  }
  params.push(outboxLimit(filter.limit));
  const sql = `SELECT * FROM outbox ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY n LIMIT ?`;
  return { sql, params };
}
