// The PostgreSQL store's statements, built once per schema, and the mapping between rows and the
// engine's types. Requests are kept whole as JSON text in `doc`; the other columns exist to be
// filtered, sorted and locked on.
import { createHash } from "node:crypto";
import { hashedDataText } from "../audit/chain.js";
import type { OutboxDraft, OutboxFilter, OutboxSettlement } from "../core/outbox.js";
import type { ApprovalRequest, AuditEvent } from "../core/schemas.js";
import type { AuditFilter, ListFilter } from "../core/store.js";
import { draftColumns, outboxLimit, settlementColumns } from "./outbox-rows.js";
import {
  clampLimit,
  executionCondition,
  listedExecutions,
  listedStatuses,
  listOrder,
  NO_DEADLINE,
  parseCursor,
} from "./paging.js";
import { columnsOf } from "./rows.js";
import { checkColumns, columnText } from "./storable.js";

/** A request's position in deadline order, as the index `requests_status_deadline_id` holds it. */
const DEADLINE_KEY = `COALESCE(deadline, ${NO_DEADLINE.toExponential().replace("+", "")}::double precision)`;

/** Quotes an identifier for SQL: `my"schema` becomes `"my""schema"`. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** What `insert` and `update` return: the head is set when the row was written. */
export interface WrittenRow {
  written: number;
  seq: string | null;
  hash: string | null;
  keyed_from: string | null;
  key_id: string | null;
}

export interface Query {
  /** Set on fixed statements: node-postgres then prepares them once per connection. */
  name?: string;
  text: string;
  values?: unknown[];
  /** Set on a statement that locks a row other transactions also write (a metrics counter): a
   * batch takes such rows in this key's order (postgres-writes.ts). */
  lockKey?: string;
  /** Set on a counter's bump (with `lockKey`): the amount, which is also its last value. A batch
   * bumps each counter once, by the sum of its writes' amounts. */
  amount?: number;
}

/** A fixed statement, named after its text, so each schema's statements get their own names. */
function prepared(text: string): Query {
  return { name: `airlock_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`, text };
}

function writeThenLockHead(head: string, write: string): string {
  return `WITH written AS (${write}),
    locked AS (SELECT seq, hash, keyed_from, key_id FROM ${head} WHERE id = 1 AND EXISTS (SELECT 1 FROM written) FOR UPDATE)
    SELECT (SELECT COUNT(*) FROM written)::integer AS written, locked.seq, locked.hash, locked.keyed_from, locked.key_id
    FROM (SELECT 1) AS one LEFT JOIN locked ON true`;
}

/** A write that fails (AL001) unless it wrote as many rows as parameter $`count` says. */
function orFail(schema: string, write: string, returning: string, count: number): string {
  return `WITH written AS (${write} RETURNING ${returning})
    SELECT ${schema}.airlock_require((SELECT COUNT(*) FROM written) = $${count}::bigint,
      'a write of the batch did not happen')`;
}

/** The columns of `insertValues`, in order, and their types. Approvers travel as JSON text. */
const INSERT_COLUMNS = [
  "id",
  "key",
  "action",
  "title",
  "status",
  "risk",
  "confidence",
  "level",
  "requester",
  "approvers",
  "quorum",
  "deadline",
  "created_at",
  "updated_at",
  "correlation_id",
  "revision_of",
  "item_count",
  "outcome",
  "method",
  "reviewer",
  "decided_at",
  "version",
  "doc_bytes",
  "doc",
  "title_lower",
  "execution",
  "lease_until",
];
const INSERT_TYPES = [
  "text",
  "text",
  "text",
  "text",
  "text",
  "text",
  "double precision",
  "text",
  "text",
  "text",
  "integer",
  "double precision",
  "double precision",
  "double precision",
  "text",
  "text",
  "integer",
  "text",
  "text",
  "text",
  "double precision",
  "integer",
  "bigint",
  "text",
  "text",
  "text",
  "double precision",
];
/** The columns of `updateValues`, in order (`expected`: the version it must find). */
const UPDATE_COLUMNS = [
  "id",
  "action",
  "title",
  "status",
  "risk",
  "confidence",
  "level",
  "approvers",
  "quorum",
  "deadline",
  "updated_at",
  "correlation_id",
  "revision_of",
  "item_count",
  "outcome",
  "method",
  "reviewer",
  "decided_at",
  "version",
  "doc_bytes",
  "doc",
  "expected",
  "title_lower",
  "execution",
  "lease_until",
];
const UPDATE_TYPES = [
  "text",
  "text",
  "text",
  "text",
  "text",
  "double precision",
  "text",
  "text",
  "integer",
  "double precision",
  "double precision",
  "text",
  "text",
  "integer",
  "text",
  "text",
  "text",
  "double precision",
  "integer",
  "bigint",
  "text",
  "integer",
  "text",
  "text",
  "double precision",
];
const APPROVERS = "ARRAY(SELECT json_array_elements_text(v.approvers::json))";

/** A quota'd create's columns after the request's: the requester's quota (NULL: none). */
const QUOTA_COLUMNS = [...INSERT_COLUMNS, "max_count", "max_bytes"];
const QUOTA_TYPES = [...INSERT_TYPES, "bigint", "bigint"];

/** Rows given as one array per column ($1..$n), numbered from 1 in `ord`. */
function unnestOf(columns: string[], types: string[]): string {
  const arrays = types.map((t, i) => `$${i + 1}::${t}[]`).join(", ");
  return `unnest(${arrays}) WITH ORDINALITY AS v(${columns.join(", ")}, ord)`;
}

/** The parameters of `insertQuota` for the rows' values (`insertValues`) and quotas (undefined:
 * none): `manyValues` and two arrays more (the `OrFail` form takes the row count after them). */
export function quotaValues(
  rows: unknown[][],
  quotas: ({ count: number; bytes: number } | undefined)[],
): unknown[] {
  return [
    ...manyValues(rows, "insert"),
    quotas.map((q) => q?.count ?? null),
    quotas.map((q) => q?.bytes ?? null),
  ];
}

/** The parameters of `insertMany` / `updateMany` for the rows' values (`insertValues` /
 * `updateValues`): one array per column (the `OrFail` forms take the row count after them). */
export function manyValues(rows: unknown[][], kind: "insert" | "update"): unknown[] {
  const columns = kind === "insert" ? INSERT_COLUMNS : UPDATE_COLUMNS;
  const approvers = columns.indexOf("approvers");
  const out: unknown[] = columns.map((_, j) =>
    rows.map((r) => (j === approvers ? JSON.stringify(r[j]) : r[j])),
  );
  return out;
}

export function statements(schema: string) {
  const s = quoteIdent(schema);
  const requests = `${s}.requests`;
  const audit = `${s}.audit`;
  const head = `${s}.audit_head`;
  const outbox = `${s}.outbox`;
  // Drafts as arrays ($1..$6) and the time they are written ($7), in their order; an id that exists
  // is skipped.
  const outboxInsert = `INSERT INTO ${outbox}
      (id, target, topic, request_id, payload, available_at, created_at, updated_at)
    SELECT d.id, d.target, d.topic, d.request_id, d.payload, d.available_at, $7::double precision,
      $7::double precision
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::double precision[])
      WITH ORDINALITY AS d(id, target, topic, request_id, payload, available_at, ord)
    ORDER BY d.ord
    ON CONFLICT (id) DO NOTHING`;
  const settleSql = `UPDATE ${outbox} SET status = $3::text,
      available_at = COALESCE($4::double precision, available_at),
      last_error = COALESCE($5::text, last_error), receipt = $6::text,
      delivered_at = $7::double precision, lease_owner = NULL, lease_until = NULL,
      updated_at = $8::double precision, attempts = GREATEST(attempts - $9::integer, 0)
    WHERE id = $1 AND lease_owner = $2 AND status = 'pending' RETURNING 1`;
  // Idempotent creates, in the order given: nothing is written for a requester's key that exists.
  const insertMany = `INSERT INTO ${requests} (${INSERT_COLUMNS.join(", ")})
    SELECT ${INSERT_COLUMNS.map((c) => (c === "approvers" ? APPROVERS : `v.${c}`)).join(", ")}
    FROM ${unnestOf(INSERT_COLUMNS, INSERT_TYPES)}
    ORDER BY v.ord
    ON CONFLICT (requester, key) DO NOTHING`;
  const insertOne = `INSERT INTO ${requests} (${INSERT_COLUMNS.join(", ")})
    VALUES (${INSERT_COLUMNS.map((c, i) => `$${i + 1}::${INSERT_TYPES[i]}${c === "approvers" ? "[]" : ""}`).join(", ")})
    ON CONFLICT (requester, key) DO NOTHING`;
  // Creates as `insertMany`, where a create with a quota (max_count, max_bytes) that would be pending
  // is written only if its requester's pending requests with it stay within the quota: those
  // already stored, and the quota'd creates of the requester ahead of it in this statement (which
  // the statement's snapshot cannot see). A replay (its key exists) is not counted. The caller holds
  // the requester's advisory lock (`lockQuotas`), taken in an earlier statement, so this snapshot
  // already sees every create of the requester that committed before.
  // Each requester's pending requests are counted once ($n: the rows' requesters), not per row.
  const requester = INSERT_COLUMNS.indexOf("requester") + 1;
  const insertQuota = `INSERT INTO ${requests} (${INSERT_COLUMNS.join(", ")})
    SELECT ${INSERT_COLUMNS.map((c) => (c === "approvers" ? APPROVERS : `v.${c}`)).join(", ")}
    FROM (
      SELECT g.*, COUNT(*) FILTER (WHERE g.gated) OVER w AS nth,
        COALESCE(SUM(g.doc_bytes) FILTER (WHERE g.gated) OVER w, 0) AS cum
      FROM (
        SELECT v.*, (v.max_count IS NOT NULL AND v.status = 'pending' AND NOT EXISTS (
          SELECT 1 FROM ${requests} AS r WHERE r.requester = v.requester AND r.key = v.key)) AS gated
        FROM ${unnestOf(QUOTA_COLUMNS, QUOTA_TYPES)}) AS g
      WINDOW w AS (PARTITION BY g.requester ORDER BY g.ord)) AS v
    LEFT JOIN (
      SELECT r.requester, COUNT(*) AS n, SUM(r.doc_bytes) AS bytes FROM ${requests} AS r
      WHERE r.status = 'pending' AND r.requester = ANY ($${requester}::text[])
      GROUP BY r.requester) AS u ON u.requester = v.requester
    WHERE NOT v.gated OR (COALESCE(u.n, 0) + v.nth <= v.max_count
      AND COALESCE(u.bytes, 0) + v.cum <= v.max_bytes)
    ORDER BY v.ord
    ON CONFLICT (requester, key) DO NOTHING`;
  // One create with a quota ($26 count, $27 bytes), as `insertQuota` for a single row, more cheaply:
  // written when it is not pending, when its key exists (ON CONFLICT then writes nothing), or when
  // its requester's pending requests with it stay within the quota.
  const at = (c: string) =>
    `$${INSERT_COLUMNS.indexOf(c) + 1}::${INSERT_TYPES[INSERT_COLUMNS.indexOf(c)]}`;
  const n = INSERT_COLUMNS.length;
  const insertQuotaOne = `INSERT INTO ${requests} (${INSERT_COLUMNS.join(", ")})
    SELECT ${INSERT_COLUMNS.map((c, i) => `$${i + 1}::${INSERT_TYPES[i]}${c === "approvers" ? "[]" : ""}`).join(", ")}
    WHERE ${at("status")} <> 'pending'
      OR EXISTS (SELECT 1 FROM ${requests} WHERE requester = ${at("requester")} AND key = ${at("key")})
      OR (SELECT COUNT(*) < $${n + 1}::bigint
            AND COALESCE(SUM(doc_bytes), 0) + ${at("doc_bytes")} <= $${n + 2}::bigint
          FROM ${requests} WHERE requester = ${at("requester")} AND status = 'pending')
    ON CONFLICT (requester, key) DO NOTHING`;
  const updateOne = `UPDATE ${requests} SET ${UPDATE_COLUMNS.map((c, i) => [c, i] as const)
    .filter(([c]) => c !== "id" && c !== "expected")
    .map(([c, i]) => `${c} = $${i + 1}::${UPDATE_TYPES[i]}${c === "approvers" ? "[]" : ""}`)
    .join(", ")}, claimed_by = NULL, claimed_until = NULL
    WHERE id = $1 AND version = $${UPDATE_COLUMNS.indexOf("expected") + 1}::integer`;
  // Compare-and-sets: only the holder of the expected version writes. The rows are locked first in
  // id order, the order every batch of every process takes them in. Any sweeper lease ends here
  // too, so an escalation's new deadline is free for every process to claim.
  const set = UPDATE_COLUMNS.filter((c) => c !== "id" && c !== "expected")
    .map((c) => `${c} = ${c === "approvers" ? APPROVERS : `v.${c}`}`)
    .join(", ");
  const updateMany = `WITH v AS MATERIALIZED (SELECT * FROM ${unnestOf(UPDATE_COLUMNS, UPDATE_TYPES)}),
      locked AS MATERIALIZED (
        SELECT r.id FROM ${requests} AS r JOIN v ON r.id = v.id AND r.version = v.expected
        ORDER BY r.id FOR UPDATE OF r)
    UPDATE ${requests} AS r SET ${set}, claimed_by = NULL, claimed_until = NULL
    FROM v WHERE r.id = v.id AND r.version = v.expected AND r.id IN (SELECT id FROM locked)`;
  // Events, head and signal as in \`append\`, but only if the head is still the one the events were
  // chained after ($15 seq, $16 hash); else the statement fails (AL001) and its transaction with it.
  const appendIfHead = `WITH moved AS (
        UPDATE ${head} SET seq = $9, hash = $10, keyed_from = COALESCE(keyed_from, $13::bigint),
          key_id = COALESCE(key_id, $14::text) WHERE id = 1 AND seq = $15 AND hash = $16
        RETURNING 1
      ), appended AS (
        INSERT INTO ${audit} (seq, request_id, type, actor, at, data, prev_hash, hash)
        SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[],
          $5::double precision[], $6::text[], $7::text[], $8::text[])
        WHERE EXISTS (SELECT 1 FROM moved)
      )
      SELECT ${s}.airlock_require(EXISTS (SELECT 1 FROM moved), 'the audit chain head moved'),
        pg_notify($11, $12)`;
  return {
    schema: s,
    migrationsTable: `CREATE TABLE IF NOT EXISTS ${s}.airlock_migrations (version integer PRIMARY KEY, applied_at double precision NOT NULL)`,
    migrationsVersion: `SELECT COALESCE(MAX(version), 0) AS v FROM ${s}.airlock_migrations`,
    migrationsInsert: `INSERT INTO ${s}.airlock_migrations (version, applied_at) VALUES ($1, $2)`,
    // Many creates or transitions in one statement each (see postgres-writes.ts): `plain` returns
    // what was written (created ids; the ordinals of the transitions that won); `orFail` fails
    // (AL001) unless all were written ($n+1: how many), undoing the one-round-trip batch.
    // One create or transition alone, the same way with a simpler statement (one at a time, the
    // common case, pays no unnest, sort or materialization).
    insertOne: prepared(`${insertOne} RETURNING id`),
    insertOneOrFail: prepared(orFail(s, insertOne, "id", INSERT_COLUMNS.length + 1)),
    updateOne: prepared(`${updateOne} RETURNING 1 AS ord`),
    updateOneOrFail: prepared(orFail(s, updateOne, "1", UPDATE_COLUMNS.length + 1)),
    insertMany: prepared(`${insertMany} RETURNING id`),
    insertManyOrFail: prepared(orFail(s, insertMany, "id", INSERT_COLUMNS.length + 1)),
    // Creates of a batch holding one with a quota: `insertQuota` (values of `quotaValues`).
    insertQuota: prepared(`${insertQuota} RETURNING id`),
    insertQuotaOrFail: prepared(orFail(s, insertQuota, "id", QUOTA_COLUMNS.length + 1)),
    insertQuotaOne: prepared(`${insertQuotaOne} RETURNING id`),
    insertQuotaOneOrFail: prepared(orFail(s, insertQuotaOne, "id", QUOTA_COLUMNS.length + 1)),
    // Each requester's quota lock ($1: its keys, sorted, so batches of every process take them in
    // one order), held to the end of the transaction. A batch takes it before any row: no
    // transaction waits for it while holding a row another one waits for.
    lockQuotas: prepared("SELECT pg_advisory_xact_lock(k) FROM unnest($1::bigint[]) AS k"),
    // Why a quota'd create was not written: the request with its key (a replay), or none, and
    // what its requester has pending now ($1 requester, $2 key).
    quotaLost:
      prepared(`SELECT (SELECT doc FROM ${requests} WHERE requester = $1 AND key = $2) AS doc,
      COUNT(*)::integer AS n, COALESCE(SUM(doc_bytes), 0)::bigint AS bytes
      FROM ${requests} WHERE requester = $1 AND status = 'pending'`),
    updateMany: prepared(`${updateMany} RETURNING v.ord`),
    updateManyOrFail: prepared(orFail(s, updateMany, "v.ord", UPDATE_COLUMNS.length + 1)),
    lockHead: prepared(`SELECT seq, hash, keyed_from, key_id FROM ${head} WHERE id = 1 FOR UPDATE`),
    byId: prepared(`SELECT doc FROM ${requests} WHERE id = $1`),
    byIds: prepared(`SELECT id, doc FROM ${requests} WHERE id = ANY($1::text[])`),
    byKey: prepared(`SELECT doc FROM ${requests} WHERE requester = $1 AND key = $2`),
    head: prepared(`SELECT seq, hash, keyed_from, key_id FROM ${head} WHERE id = 1`),
    anyAudit: prepared(`SELECT EXISTS (SELECT 1 FROM ${audit}) AS any`),
    pendingUsage:
      prepared(`SELECT COUNT(*)::integer AS n, COALESCE(SUM(doc_bytes), 0)::bigint AS bytes
      FROM ${requests} WHERE requester = $1 AND status = 'pending'`),
    statuses: prepared(
      `SELECT id, status, doc FROM ${requests} WHERE id > $1 ORDER BY id LIMIT $2`,
    ),
    // Appends the events, moves the head and signals other processes, in one round trip. The
    // signal is delivered only if and when the surrounding transaction commits.
    append: prepared(`WITH appended AS (
        INSERT INTO ${audit} (seq, request_id, type, actor, at, data, prev_hash, hash)
        SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[],
          $5::double precision[], $6::text[], $7::text[], $8::text[])
      ), moved AS (
        UPDATE ${head} SET seq = $9, hash = $10, keyed_from = COALESCE(keyed_from, $13::bigint),
          key_id = COALESCE(key_id, $14::text) WHERE id = 1
      )
      SELECT pg_notify($11, $12)`),
    appendIfHead: prepared(appendIfHead),
    notify: prepared("SELECT pg_notify($1, $2)"),
    /** Inside a writing transaction (see `outboxValues`). */
    outboxInsert: prepared(outboxInsert),
    /** On its own: writes, counts and signals other processes ($8 channel, $9 sender). */
    outboxEnqueue: prepared(`WITH ins AS (${outboxInsert} RETURNING 1)
      SELECT (SELECT COUNT(*) FROM ins)::integer AS written, pg_notify($8, $9)`),
    // Claims due pending rows whose lease is free or past, oldest first ($1 now, $2 limit, $3 owner,
    // $4 lease ms). Rows another claimer has locked are skipped, not waited for; a row another
    // claimer leased and committed meanwhile is re-checked against the lease and left out.
    outboxClaim: prepared(`UPDATE ${outbox} SET lease_owner = $3::text,
        lease_until = $1::double precision + $4::double precision, attempts = attempts + 1,
        updated_at = $1::double precision
      WHERE id IN (
        SELECT id FROM ${outbox}
        WHERE status = 'pending' AND available_at <= $1::double precision
          AND (lease_until IS NULL OR lease_until <= $1::double precision)
        ORDER BY available_at, n
        LIMIT $2
        FOR UPDATE SKIP LOCKED)
      RETURNING *`),
    // Only the lease holder settles ($1 id, $2 owner); a NULL keeps the column as it was. With events
    // to append, the head is locked only when the row was settled; without (a retry put off), the
    // settle is one statement that leaves the audit chain alone ($10 channel, $11 sender; $9 is the
    // attempt given back).
    outboxSettle: prepared(writeThenLockHead(head, settleSql)),
    outboxSettleAlone: prepared(`WITH written AS (${settleSql})
      SELECT (SELECT COUNT(*) FROM written)::integer AS written,
        CASE WHEN EXISTS (SELECT 1 FROM written) THEN pg_notify($10, $11) END AS signalled`),
    /** The delivery log: oldest first (by n), after the row `filter.after` (an unknown id compares
     * with NULL: nothing is after it). */
    listOutbox(filter: OutboxFilter): Query {
      const where: string[] = [];
      const values: unknown[] = [];
      const eq = (column: string, v: string | undefined) => {
        if (v === undefined) return;
        values.push(v);
        where.push(`${column} = $${values.length}`);
      };
      eq("request_id", filter.requestId);
      eq("target", filter.target);
      eq("status", filter.status);
      eq("topic", filter.topic);
      if (filter.after !== undefined) {
        values.push(filter.after);
        where.push(`n > (SELECT n FROM ${outbox} WHERE id = $${values.length})`);
      }
      const text = `SELECT * FROM ${outbox} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
        ORDER BY n LIMIT ${outboxLimit(filter.limit)}`;
      return { text, values };
    },
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
    count(filter: ListFilter, upTo?: number): Query {
      const { where, values } = whereOf(filter);
      const rows = `FROM ${requests} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}`;
      return {
        // Capped: the index is walked for `upTo` rows at most.
        text:
          upTo === undefined
            ? `SELECT COUNT(*)::bigint AS n ${rows}`
            : `SELECT COUNT(*)::bigint AS n FROM (SELECT 1 ${rows} LIMIT ${upTo}) AS capped`,
        values,
      };
    },
    // Claims of approved actions whose lease ran out with no outcome (core/execution.ts).
    staleExecutions: prepared(`SELECT doc FROM ${requests}
      WHERE lease_until IS NOT NULL AND lease_until <= $1::double precision
      ORDER BY lease_until, id LIMIT $2`),
    nextLeaseEnd: prepared(`SELECT lease_until FROM ${requests}
      WHERE lease_until IS NOT NULL ORDER BY lease_until LIMIT 1`),
    outcomes: prepared(`SELECT action, status, method, created_at, decided_at FROM ${requests}
      WHERE status <> 'pending' AND decided_at >= $1`),
    outcomeStats:
      prepared(`SELECT hour::float8 AS hour, action, status, method, bucket, n::float8 AS n
      FROM ${s}.outcome_stats WHERE hour >= $1`),
    bumpStat: prepared(`INSERT INTO ${s}.outcome_stats (hour, action, status, method, bucket, n)
      VALUES ($1, $2, $3, $4, $5, $6)
      ON CONFLICT (hour, action, status, method, bucket)
      DO UPDATE SET n = ${s}.outcome_stats.n + excluded.n`),
    countPending: prepared(
      `SELECT COUNT(*)::integer AS n FROM ${requests} WHERE status = 'pending'`,
    ),
    /** A page of a listing in its order, one row more than the page; each row with `dkey`, its
     * deadline key, for the cursor. */
    list(filter: ListFilter, columns: string): Query {
      const { where, values, orderBy } = ordered(filter);
      const limit = clampLimit(filter.limit);
      const text = `SELECT ${columns}, ${DEADLINE_KEY} AS dkey FROM ${requests}
        ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY ${orderBy} LIMIT ${limit + 1}`;
      return { text, values };
    },
    /** A title search's first stage (postgres-search.ts): the listing's next `rows` rows in its order
     * without the text, read from the index that gives the order (each includes title_lower): of
     * them, in order, the first `hits` holding the text (hit), each with its deadline key; and,
     * only when fewer hold it, the walk's last row (reported with hit false, even when it matches;
     * n = `rows`), where the next stage goes on. One statement, so one snapshot: the last row is the
     * one the hits were walked to. (A window function numbering the rows cost more than the walk
     * itself: 2.5 times the time.) */
    walkTitles(filter: ListFilter, rows: number, hits: number): Query {
      const { order, where, values, orderBy } = ordered({ ...filter, q: undefined });
      const dkey = order === "deadline" ? DEADLINE_KEY : "0::double precision";
      values.push(containsPattern(filter.q ?? ""));
      const walk = Math.trunc(rows);
      const page = Math.max(1, Math.trunc(hits));
      const rowsWalked = `SELECT id, title_lower, ${dkey} AS dkey FROM ${requests}
        ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY ${orderBy} LIMIT ${walk}`;
      // The outer LIMIT stops before the second branch runs once the first has a page of hits.
      const inOrder = orderOf(order, false, "dkey");
      const text = `SELECT id, dkey, hit, n FROM (
          (SELECT id, dkey, true AS hit, 0 AS n FROM (${rowsWalked}) w
            WHERE title_lower LIKE $${values.length} ORDER BY ${inOrder} LIMIT ${page})
          UNION ALL
          (SELECT id, dkey, false, ${walk} FROM (${rowsWalked}) w
            ORDER BY ${inOrder} OFFSET ${walk - 1} LIMIT 1)
        ) u LIMIT ${page}`;
      return { text, values };
    },
    /** Rows by id still in the listing (its filter without text or cursor), in its order, with
     * their deadline keys. */
    listIds(ids: string[], columns: string, filter: ListFilter): Query {
      const { where, values } = whereOf({ ...filter, q: undefined });
      values.push(ids);
      where.push(`id = ANY($${values.length}::text[])`);
      return {
        text: `SELECT ${columns}, ${DEADLINE_KEY} AS dkey FROM ${requests} WHERE ${where.join(" AND ")}
          ORDER BY ${orderOf(listOrder(filter))}`,
        values,
      };
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

/** A listing's order, its conditions (the cursor's included) and its ORDER BY. */
function ordered(filter: ListFilter) {
  const order = listOrder(filter);
  const cursor = parseCursor(order, filter.cursor);
  const { where, values } = whereOf(filter);
  const param = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  if (cursor?.order === "deadline") {
    // The index range starts at the cursor's deadline; ties go by id.
    const k = `${param(cursor.key)}::double precision`;
    where.push(`${DEADLINE_KEY} >= ${k} AND (${DEADLINE_KEY} > ${k} OR id > ${param(cursor.id)})`);
  } else if (cursor) {
    where.push(`id ${order === "newest" ? "<" : ">"} ${param(cursor.id)}`);
  }
  return { order, where, values, orderBy: orderOf(order) };
}

/** ORDER BY of a listing (or its reverse); `key` is how the deadline key is written. */
function orderOf(order: ReturnType<typeof listOrder>, reverse = false, key = DEADLINE_KEY): string {
  const [up, down] = reverse ? ["DESC", "ASC"] : ["ASC", "DESC"];
  if (order === "deadline") return `${key} ${up}, id ${up}`;
  return order === "newest" ? `id ${down}` : `id ${up}`;
}

/** The conditions of a filter, without its cursor. */
function whereOf(filter: ListFilter): { where: string[]; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const param = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  const statuses = listedStatuses(filter);
  // One status as an equality: an index on (status, ...) then also yields the order.
  if (statuses.length === 1) where.push(`status = ${param(statuses[0])}`);
  else if (statuses.length) where.push(`status = ANY(${param(statuses)}::text[])`);
  if (filter.action !== undefined) where.push(`action = ${param(filter.action)}`);
  if (filter.requester !== undefined) where.push(`requester = ${param(filter.requester)}`);
  const executions = listedExecutions(filter);
  if (executions.length) where.push(executionCondition(executions));
  if (filter.approver !== undefined) {
    const names = Array.isArray(filter.approver) ? filter.approver : [filter.approver];
    // Open to everyone (no approvers), or shares a name or group with the caller.
    where.push(`(cardinality(approvers) = 0 OR approvers && ${param(names)}::text[])`);
  }
  // Backslash is LIKE's default escape character (containsPattern escapes with it).
  if (filter.q !== undefined && filter.q !== "") {
    where.push(`title_lower LIKE ${param(containsPattern(filter.q))}`);
  }
  return { where, values };
}

/** A title as the search compares it: `titleMatches` lower-cases with JavaScript's rules, which
 * PostgreSQL's lower() does not follow for every language, so the column is filled from here. */
export function titleLower(title: string): string {
  return title.toLowerCase();
}

/** The `LIKE` pattern for "contains `q`, ignoring case": wildcards in `q` match themselves. */
export function containsPattern(q: string): string {
  return `%${titleLower(q).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const DOC_AT = { insert: INSERT_COLUMNS.indexOf("doc"), update: UPDATE_COLUMNS.indexOf("doc") };

/** The request's JSON text among the values of `insertValues` or `updateValues`. */
export function docOfValues(kind: "insert" | "update", values: unknown[]): string {
  return values[DOC_AT[kind]] as string;
}

/** The values of `insert` ($1..$25). */
export function insertValues(r: ApprovalRequest): unknown[] {
  checkColumns(r);
  const c = columnsOf(r);
  return [
    c.id,
    c.key,
    c.action,
    c.title,
    c.status,
    c.risk,
    c.confidence,
    c.level,
    c.requester,
    c.approvers,
    c.quorum,
    c.deadline,
    c.created_at,
    c.updated_at,
    c.correlation_id,
    c.revision_of,
    c.item_count,
    c.outcome,
    c.method,
    c.reviewer,
    c.decided_at,
    c.version,
    c.doc_bytes,
    c.doc,
    titleLower(r.title),
    c.execution,
    c.lease_until,
  ];
}

/** The values of `update` ($1..$23). */
export function updateValues(r: ApprovalRequest, expectedVersion: number): unknown[] {
  checkColumns(r);
  const c = columnsOf(r);
  return [
    c.id,
    c.action,
    c.title,
    c.status,
    c.risk,
    c.confidence,
    c.level,
    c.approvers,
    c.quorum,
    c.deadline,
    c.updated_at,
    c.correlation_id,
    c.revision_of,
    c.item_count,
    c.outcome,
    c.method,
    c.reviewer,
    c.decided_at,
    c.version,
    c.doc_bytes,
    c.doc,
    expectedVersion,
    titleLower(r.title),
    c.execution,
    c.lease_until,
  ];
}

/** The unnest arrays and head of `append` ($1..$10). */
export function appendValues(events: AuditEvent[]): unknown[] {
  const last = events[events.length - 1];
  return [
    events.map((e) => e.seq),
    events.map((e) => columnText(e.requestId ?? null, "requestId")),
    events.map((e) => e.type),
    events.map((e) => columnText(e.actor, "actor")),
    events.map((e) => e.at),
    // The data as the canonical JSON its hash covers, so verification hashes it as read.
    events.map(hashedDataText),
    events.map((e) => e.prevHash),
    events.map((e) => e.hash),
    last?.seq,
    last?.hash,
  ];
}

/** The values of `outboxInsert` ($1..$7), written at `now` unless a draft names its `availableAt`. */
export function outboxValues(drafts: readonly OutboxDraft[], now: number): unknown[] {
  const rows = drafts.map((d) => draftColumns(d, now));
  return [
    rows.map((r) => r.id),
    rows.map((r) => r.target),
    rows.map((r) => r.topic),
    rows.map((r) => r.request_id),
    rows.map((r) => r.payload),
    rows.map((r) => r.available_at),
    now,
  ];
}

/** The values of `outboxSettle` ($1..$8). */
export function settleValues(
  id: string,
  owner: string,
  s: OutboxSettlement,
  now: number,
): unknown[] {
  const c = settlementColumns(s, now);
  return [
    id,
    owner,
    c.status,
    c.available_at,
    c.last_error,
    c.receipt,
    c.delivered_at,
    now,
    c.attempts_back,
  ];
}
