// The PostgreSQL store's statements, built once per schema, and the mapping between rows and the
// engine's types. Requests are kept whole as JSON text in `doc`; the other columns exist to be
// filtered, sorted and locked on.
import { createHash } from "node:crypto";
import { InvalidInputError } from "../core/errors.js";
import type { ApprovalRequest, AuditEvent } from "../core/schemas.js";
import { clampLimit } from "./paging.js";
import type { AuditFilter, ListFilter } from "./store.js";

/** Quotes an identifier for SQL: `my"schema` becomes `"my""schema"`. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** What `insert` and `update` return: the head is set when the row was written. */
export interface WrittenRow {
  written: number;
  seq: string | null;
  hash: string | null;
}

export interface Query {
  /** Set on fixed statements: node-postgres then prepares them once per connection. */
  name?: string;
  text: string;
  values?: unknown[];
}

/** A fixed statement, named after its text, so each schema's statements get their own names. */
function prepared(text: string): Query {
  return { name: `airlock_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`, text };
}

function writeThenLockHead(head: string, write: string): string {
  return `WITH written AS (${write}),
    locked AS (SELECT seq, hash FROM ${head} WHERE id = 1 AND EXISTS (SELECT 1 FROM written) FOR UPDATE)
    SELECT (SELECT COUNT(*) FROM written)::integer AS written, locked.seq, locked.hash
    FROM (SELECT 1) AS one LEFT JOIN locked ON true`;
}

export function statements(schema: string) {
  const s = quoteIdent(schema);
  const requests = `${s}.requests`;
  const audit = `${s}.audit`;
  const head = `${s}.audit_head`;
  return {
    schema: s,
    migrationsTable: `CREATE TABLE IF NOT EXISTS ${s}.airlock_migrations (version integer PRIMARY KEY, applied_at double precision NOT NULL)`,
    migrationsVersion: `SELECT COALESCE(MAX(version), 0) AS v FROM ${s}.airlock_migrations`,
    migrationsInsert: `INSERT INTO ${s}.airlock_migrations (version, applied_at) VALUES ($1, $2)`,
    // A guarded write and, only if it wrote a row, the chain-head lock, in one statement: `written`
    // is 0 when the key already exists (insert) or the version moved on (update), and then the head
    // is left alone. The write runs first (the head's EXISTS reads it), so every writer takes the
    // request row before the head, and a writer holding the head never waits for anything else.
    insert: prepared(
      writeThenLockHead(
        head,
        `INSERT INTO ${requests}
          (id, key, action, status, requester, approvers, deadline, created_at, decided_at, method, version, doc)
        VALUES ($1, $2, $3, $4, $5, $6::text[], $7, $8, $9, $10, $11, $12)
        ON CONFLICT (key) DO NOTHING RETURNING 1`,
      ),
    ),
    // The compare-and-set: only the holder of the expected version writes. Any sweeper lease ends
    // here too, so an escalation's new deadline is free for every process to claim.
    update: prepared(
      writeThenLockHead(
        head,
        `UPDATE ${requests} SET status = $2, approvers = $3::text[], deadline = $4,
          decided_at = $5, method = $6, version = $7, doc = $8, claimed_by = NULL, claimed_until = NULL
        WHERE id = $1 AND version = $9 RETURNING 1`,
      ),
    ),
    lockHead: prepared(`SELECT seq, hash FROM ${head} WHERE id = 1 FOR UPDATE`),
    byId: prepared(`SELECT doc FROM ${requests} WHERE id = $1`),
    byKey: prepared(`SELECT doc FROM ${requests} WHERE key = $1`),
    head: prepared(`SELECT seq, hash FROM ${head} WHERE id = 1`),
    // Appends the events, moves the head and signals other processes, in one round trip. The
    // signal is delivered only if and when the surrounding transaction commits.
    append: prepared(`WITH appended AS (
        INSERT INTO ${audit} (seq, request_id, type, actor, at, data, prev_hash, hash)
        SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[],
          $5::double precision[], $6::text[], $7::text[], $8::text[])
      ), moved AS (
        UPDATE ${head} SET seq = $9, hash = $10 WHERE id = 1
      )
      SELECT pg_notify($11, $12)`),
    notify: prepared("SELECT pg_notify($1, $2)"),
    // The next instant this process should sweep: the earliest deadline it may claim now, or, for a
    // request another live sweeper has claimed, the end of that lease.
    nextDeadline: prepared(`SELECT
        (SELECT deadline FROM ${requests}
          WHERE status = 'pending' AND deadline IS NOT NULL
            AND (claimed_until IS NULL OR claimed_by = $1)
          ORDER BY deadline LIMIT 1) AS free,
        (SELECT MIN(GREATEST(deadline, claimed_until)) FROM ${requests}
          WHERE claimed_until IS NOT NULL AND claimed_by <> $1
            AND status = 'pending' AND deadline IS NOT NULL) AS leased`),
    // Claims due requests for this store for a lease ($4 ms). Rows another transaction has locked
    // (a decision being written, another sweeper claiming) are skipped rather than waited for, and
    // rows leased by another live sweeper are left to it. Our own unexpired claims are returned
    // again, so a sweep that stopped half way picks up where it was.
    claimDue: prepared(`WITH due AS (
        SELECT id FROM ${requests}
        WHERE status = 'pending' AND deadline IS NOT NULL AND deadline <= $1::double precision
          AND (claimed_until IS NULL OR claimed_until <= $1 OR claimed_by = $3::text)
        ORDER BY deadline
        LIMIT $2
        FOR UPDATE SKIP LOCKED
      )
      UPDATE ${requests} AS r SET claimed_by = $3, claimed_until = $1 + $4::double precision
      FROM due WHERE r.id = due.id
      RETURNING r.doc, r.deadline`),
    outcomes: prepared(`SELECT action, status, method, created_at, decided_at FROM ${requests}
      WHERE status <> 'pending' AND decided_at >= $1`),
    countPending: prepared(
      `SELECT COUNT(*)::integer AS n FROM ${requests} WHERE status = 'pending'`,
    ),
    list(filter: ListFilter): Query {
      const where: string[] = [];
      const values: unknown[] = [];
      const param = (v: unknown) => {
        values.push(v);
        return `$${values.length}`;
      };
      const statuses =
        filter.status === undefined
          ? []
          : Array.isArray(filter.status)
            ? filter.status
            : [filter.status];
      if (statuses.length) where.push(`status = ANY(${param(statuses)}::text[])`);
      if (filter.action !== undefined) where.push(`action = ${param(filter.action)}`);
      if (filter.requester !== undefined) where.push(`requester = ${param(filter.requester)}`);
      if (filter.approver !== undefined) {
        const names = Array.isArray(filter.approver) ? filter.approver : [filter.approver];
        // Open to everyone (no approvers), or shares a name or group with the caller.
        where.push(`(cardinality(approvers) = 0 OR approvers && ${param(names)}::text[])`);
      }
      if (filter.cursor !== undefined) where.push(`id < ${param(filter.cursor)}`);
      const limit = clampLimit(filter.limit);
      const text = `SELECT doc FROM ${requests} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
        ORDER BY id DESC LIMIT ${limit + 1}`;
      return { text, values };
    },
    listAudit(filter: AuditFilter): Query {
      const where: string[] = [];
      const values: unknown[] = [];
      if (filter.requestId !== undefined) {
        values.push(filter.requestId);
        where.push(`request_id = $${values.length}`);
      }
      if (filter.after !== undefined) {
        values.push(filter.after);
        where.push(`seq > $${values.length}`);
      }
      const limit = Math.min(Math.max(Math.trunc(filter.limit ?? 1000), 1), 10_000);
      const text = `SELECT seq, request_id, type, actor, at, data, prev_hash, hash FROM ${audit}
        ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY seq LIMIT ${limit}`;
      return { text, values };
    },
  };
}

export type Statements = ReturnType<typeof statements>;

/** Only a pending request has a live deadline: a terminal one must never be swept. */
function liveDeadline(r: ApprovalRequest): number | null {
  return r.status === "pending" ? (r.deadline ?? null) : null;
}

// A NUL, or half of a surrogate pair, cannot be stored in a PostgreSQL text column as written: the
// first is refused, the second silently replaced, which would break the audit hash of that event.
// Inside the JSON columns both are escaped, so only plain text columns are checked.
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function text<T extends string | null | undefined>(value: T, field: string): T {
  if (typeof value === "string" && (value.includes("\0") || UNPAIRED_SURROGATE.test(value))) {
    throw new InvalidInputError(
      `\`${field}\` contains a NUL character or an unpaired surrogate, which cannot be stored as written`,
      field,
    );
  }
  return value;
}

function texts(values: string[], field: string): string[] {
  for (const v of values) text(v, field);
  return values;
}

/** Refuses, before any transaction opens, audit events a text column could not hold as written. */
export function checkDrafts(drafts: readonly { requestId?: string; actor: string }[]): void {
  for (const d of drafts) {
    text(d.requestId, "requestId");
    text(d.actor, "actor");
  }
}

/** The values of `insert` ($1..$12). */
export function insertValues(r: ApprovalRequest): unknown[] {
  return [
    text(r.id, "id"),
    text(r.key ?? null, "key"),
    text(r.action, "action"),
    r.status,
    text(r.requester, "requester"),
    texts(r.approvers, "approvers"),
    liveDeadline(r),
    r.createdAt,
    r.decision?.decidedAt ?? null,
    r.decision?.method ?? null,
    r.version,
    JSON.stringify(r),
  ];
}

/** The values of `update` ($1..$9). */
export function updateValues(r: ApprovalRequest, expectedVersion: number): unknown[] {
  return [
    r.id,
    r.status,
    texts(r.approvers, "approvers"),
    liveDeadline(r),
    r.decision?.decidedAt ?? null,
    r.decision?.method ?? null,
    r.version,
    JSON.stringify(r),
    expectedVersion,
  ];
}

/** The unnest arrays and head of `append` ($1..$10). */
export function appendValues(events: AuditEvent[]): unknown[] {
  const last = events[events.length - 1];
  return [
    events.map((e) => e.seq),
    events.map((e) => text(e.requestId ?? null, "requestId")),
    events.map((e) => e.type),
    events.map((e) => text(e.actor, "actor")),
    events.map((e) => e.at),
    events.map((e) => JSON.stringify(e.data)),
    events.map((e) => e.prevHash),
    events.map((e) => e.hash),
    last?.seq,
    last?.hash,
  ];
}
