// The embedded default store: one SQLite file (better-sqlite3, WAL). Several processes may share the
// file; writes take the write lock up front (BEGIN IMMEDIATE) and other processes' commits are noticed
// by polling `PRAGMA data_version`, which changes only when another connection commits.
import Database from "better-sqlite3";
import { chainEvent } from "../audit/chain.js";
import { AirlockError } from "../core/errors.js";
import type { ApprovalRequest, AuditDraft, AuditEvent } from "../core/schemas.js";
import { clampLimit } from "./paging.js";
import {
  type AuditRow,
  auditOf,
  type DocRow,
  type OutcomeSqlRow,
  outcomeOf,
  parseDoc,
} from "./rows.js";
import { applySqliteMigrations } from "./sqlite-migrate.js";
import { SQLITE_MIGRATIONS } from "./sqlite-migrations.js";
import type { InsertResult, ListFilter, Page, Store, TransitionResult } from "./store.js";

export interface SqliteStoreOptions {
  /** How often to look for other processes' commits while someone is listening. @default 10 */
  pollMs?: number;
  /** How long a writer waits for another process's write lock. @default 5000 */
  busyTimeoutMs?: number;
}

export function sqliteStore(path: string, options: SqliteStoreOptions = {}): Store {
  let db: Database.Database;
  try {
    db = new Database(path);
  } catch (err) {
    throw new AirlockError(
      "store_unavailable",
      `cannot open SQLite database \`${path}\`: ${(err as Error).message}`,
      { cause: err },
    );
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  // The busy timeout first: the pragmas below and the migration may meet another process opening
  // the same new file at the same moment.
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  enableWal(db, busyTimeoutMs);
  // NORMAL in WAL mode survives any process crash; only a power loss may drop the last commits.
  db.pragma("synchronous = NORMAL");
  // Checkpoint the WAL every ~40 MB instead of ~4 MB: a gate writes about ten pages per transition,
  // and fewer, larger checkpoints cost about a quarter less per transition (see bench/sqlite.ts).
  db.pragma("wal_autocheckpoint = 10000");
  migrateSync(db);

  const stmt = {
    insert: db.prepare(
      `INSERT INTO requests (id, key, action, status, requester, approvers, deadline, created_at, decided_at, version, doc)
       VALUES (@id, @key, @action, @status, @requester, @approvers, @deadline, @created_at, @decided_at, @version, @doc)
       ON CONFLICT(key) WHERE key IS NOT NULL DO NOTHING`,
    ),
    byId: db.prepare<[string], DocRow>("SELECT doc FROM requests WHERE id = ?"),
    byKey: db.prepare<[string], DocRow>("SELECT doc FROM requests WHERE key = ?"),
    update: db.prepare(
      `UPDATE requests SET status = @status, approvers = @approvers, deadline = @deadline,
         decided_at = @decided_at, version = @version, doc = @doc
       WHERE id = @id AND version = @expected`,
    ),
    head: db.prepare<[], { seq: number; hash: string }>(
      "SELECT seq, hash FROM audit_head WHERE id = 1",
    ),
    setHead: db.prepare(
      "INSERT INTO audit_head (id, seq, hash) VALUES (1, @seq, @hash) ON CONFLICT(id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash",
    ),
    appendAudit: db.prepare(
      `INSERT INTO audit (seq, request_id, type, actor, at, data, prev_hash, hash)
       VALUES (@seq, @request_id, @type, @actor, @at, @data, @prev_hash, @hash)`,
    ),
    nextDeadline: db.prepare<[], { d: number | null }>(
      // INDEXED BY: without statistics the planner prefers the status index and reads every pending
      // row; the partial deadline index answers from its first entry.
      "SELECT MIN(deadline) AS d FROM requests INDEXED BY requests_pending_deadline WHERE status = 'pending' AND deadline IS NOT NULL",
    ),
    due: db.prepare<[number, number], DocRow>(
      `SELECT doc FROM requests INDEXED BY requests_pending_deadline
       WHERE status = 'pending' AND deadline IS NOT NULL AND deadline <= ?
       ORDER BY deadline LIMIT ?`,
    ),
    outcomes: db.prepare<[number], OutcomeSqlRow>(
      `SELECT action, status, json_extract(doc, '$.decision.method') AS method, created_at, decided_at
       FROM requests WHERE status != 'pending' AND decided_at >= ?`,
    ),
    countPending: db.prepare<[], { n: number }>(
      "SELECT COUNT(*) AS n FROM requests WHERE status = 'pending'",
    ),
    dataVersion: db.prepare<[], { data_version: number }>("PRAGMA data_version"),
  };

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

  function appendChain(drafts: AuditDraft[]): AuditEvent[] {
    let prev = stmt.head.get();
    const out: AuditEvent[] = [];
    for (const draft of drafts) {
      const e = chainEvent(draft, prev);
      stmt.appendAudit.run({
        seq: e.seq,
        request_id: e.requestId ?? null,
        type: e.type,
        actor: e.actor,
        at: e.at,
        data: JSON.stringify(e.data),
        prev_hash: e.prevHash,
        hash: e.hash,
      });
      out.push(e);
      prev = e;
    }
    if (prev) stmt.setHead.run({ seq: prev.seq, hash: prev.hash });
    return out;
  }

  const insertTx = db.transaction(
    (request: ApprovalRequest, drafts: AuditDraft[]): InsertResult => {
      const info = stmt.insert.run(rowOf(request));
      if (info.changes === 0) {
        const existing = request.key ? stmt.byKey.get(request.key) : undefined;
        if (!existing)
          throw new AirlockError("conflict", `request id \`${request.id}\` already exists`);
        return { request: parseDoc(existing), created: false, events: [] };
      }
      return { request, created: true, events: appendChain(drafts) };
    },
  );

  const transitionTx = db.transaction(
    (next: ApprovalRequest, expected: number, drafts: AuditDraft[]): TransitionResult => {
      const info = stmt.update.run({ ...rowOf(next), expected });
      if (info.changes === 0) {
        const current = stmt.byId.get(next.id);
        return { ok: false, request: current ? parseDoc(current) : undefined, events: [] };
      }
      return { ok: true, request: next, events: appendChain(drafts) };
    },
  );

  const appendTx = db.transaction((drafts: AuditDraft[]) => appendChain(drafts));

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

  return {
    kind: "sqlite",
    async migrate() {
      guard();
      migrateSync(db);
    },
    async insertRequest(request, events) {
      guard();
      return insertTx.immediate(request, events);
    },
    async getRequest(id) {
      guard();
      const row = stmt.byId.get(id);
      return row ? parseDoc(row) : undefined;
    },
    async listRequests(filter) {
      guard();
      return listSync(cached, filter);
    },
    async transition(next, expectedVersion, events) {
      guard();
      if (next.version !== expectedVersion + 1) {
        throw new AirlockError(
          "invalid_input",
          "transition: next.version must be expectedVersion + 1",
        );
      }
      return transitionTx.immediate(next, expectedVersion, events);
    },
    async appendAudit(events) {
      guard();
      return appendTx.immediate(events);
    },
    async listAudit(filter) {
      guard();
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
      return cached<AuditRow>(sql)
        .all(...params, limit)
        .map(auditOf);
    },
    async auditHead() {
      guard();
      return stmt.head.get();
    },
    async nextDeadline() {
      guard();
      return stmt.nextDeadline.get()?.d ?? undefined;
    },
    async dueRequests(now, limit) {
      guard();
      return stmt.due.all(now, limit).map(parseDoc);
    },
    async outcomes(since) {
      guard();
      return stmt.outcomes.all(since).map(outcomeOf);
    },
    async countPending() {
      guard();
      return stmt.countPending.get()?.n ?? 0;
    },
    onExternalChange(listener) {
      listeners.add(listener);
      if (!pollTimer && !closed) {
        lastDataVersion = stmt.dataVersion.get()?.data_version ?? 0;
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
      closed = true;
      if (pollTimer) clearInterval(pollTimer);
      pollTimer = undefined;
      listeners.clear();
      db.close();
    },
  };
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

function migrateSync(db: Database.Database): void {
  applySqliteMigrations(db, "airlock_migrations", SQLITE_MIGRATIONS);
}

function listSync(
  cached: <R>(sql: string) => Database.Statement<unknown[], R>,
  filter: ListFilter,
): Page<ApprovalRequest> {
  const where: string[] = [];
  const params: unknown[] = [];
  const statuses =
    filter.status === undefined
      ? []
      : Array.isArray(filter.status)
        ? filter.status
        : [filter.status];
  if (statuses.length) {
    where.push(`status IN (${statuses.map(() => "?").join(",")})`);
    params.push(...statuses);
  }
  if (filter.action !== undefined) {
    where.push("action = ?");
    params.push(filter.action);
  }
  if (filter.requester !== undefined) {
    where.push("requester = ?");
    params.push(filter.requester);
  }
  if (filter.approver !== undefined) {
    const names = Array.isArray(filter.approver) ? filter.approver : [filter.approver];
    const inList = names.map(() => "?").join(",") || "NULL";
    where.push(
      `(approvers = '[]' OR EXISTS (SELECT 1 FROM json_each(requests.approvers) WHERE value IN (${inList})))`,
    );
    params.push(...names);
  }
  if (filter.cursor !== undefined) {
    where.push("id < ?");
    params.push(filter.cursor);
  }
  const limit = clampLimit(filter.limit);
  const sql = `SELECT doc FROM requests ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT ?`;
  const rows = cached<DocRow>(sql).all(...params, limit + 1);
  const items = rows.slice(0, limit).map(parseDoc);
  const last = items[items.length - 1];
  return rows.length > limit && last ? { items, nextCursor: last.id } : { items };
}

function rowOf(r: ApprovalRequest) {
  return {
    id: r.id,
    key: r.key ?? null,
    action: r.action,
    status: r.status,
    requester: r.requester,
    approvers: JSON.stringify(r.approvers),
    deadline: r.status === "pending" ? (r.deadline ?? null) : null,
    created_at: r.createdAt,
    decided_at: r.decision?.decidedAt ?? null,
    version: r.version,
    doc: JSON.stringify(r),
  };
}
