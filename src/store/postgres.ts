// The PostgreSQL store: several Airlock processes (or machines) sharing one database as the system of
// record. The database settles every race: a transition is an UPDATE guarded by the expected version;
// an idempotent insert is ON CONFLICT (key) DO NOTHING; audit appends are serialized by the one-row
// chain head, which every appending transaction updates; other processes hear about commits through
// LISTEN/NOTIFY (postgres-listener.ts); due requests are claimed with FOR UPDATE SKIP LOCKED.
//
// Creates and transitions go through the batched writer (postgres-writes.ts): those that arrive
// together commit together, usually in one round trip with the events chained after the head this
// process last saw (the database refuses the batch if the head moved, and the writer then locks it).
// Lookups by id are grouped the same way (postgres-reads.ts). The other writes (outbox settles,
// plain appends) are two round trips when the pool pipelines (pools the store creates do): [BEGIN,
// the guarded write that also locks the head if it wrote] then [append + NOTIFY, COMMIT]. Failure
// handling is in postgres-client.ts.
import { createHash, randomUUID } from "node:crypto";
import pg, { type Pool, type PoolClient, type QueryResultRow } from "pg";
import { chainEvent, GENESIS_HASH, keyForAppend } from "../audit/chain.js";
import {
  type AuditKeyOptions,
  checkpointWriterFor,
  ownAuditKey,
  recordCheckpointsStart,
} from "../audit/checkpoint.js";
import { AirlockError, InvalidInputError, isAirlockError } from "../core/errors.js";
import type { OutboxDraft } from "../core/outbox.js";
import { HOUR_MS, type OutcomeStat, settledStat } from "../core/outcome-stats.js";
import { checkPendingQuota, quotaRefusal } from "../core/quota.js";
import type { ApprovalRequest, AuditDraft, AuditEvent } from "../core/schemas.js";
import type { ListFilter, PendingQuota, Store } from "../core/store.js";
import {
  type ApproverIndexUse,
  approverIndexUse,
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
  type OutboxRow,
  outboxOf,
} from "./outbox-rows.js";
import {
  clampLimit,
  countCap,
  listOrder,
  type Positioned,
  pageOf,
  position,
  SAMPLE_MAX_AGE_MS,
  SAMPLE_TITLES,
  shareHolding,
} from "./paging.js";
import { postgresApproverDialect } from "./postgres-approver-index.js";
import { createRunner, type Step, send } from "./postgres-client.js";
import { describePool, isConnectionError, maskUrl, storeUnavailable } from "./postgres-errors.js";
import { createChangeListener, type ListenConnection } from "./postgres-listener.js";
import {
  fillTitleLower,
  POSTGRES_MIGRATIONS,
  TITLE_LOWER_MIGRATION,
} from "./postgres-migrations.js";
import { postgresPruning } from "./postgres-prune.js";
import { createReadBatcher } from "./postgres-reads.js";
import { searchRows, WALK_ROWS, walkable } from "./postgres-search.js";
import {
  appendValues,
  docOfValues,
  insertValues,
  outboxValues,
  type Query,
  quoteIdent,
  settleValues,
  statements,
  updateValues,
  type WrittenRow,
} from "./postgres-sql.js";
import { postgresTickets } from "./postgres-tickets.js";
import { postgresTrustRules } from "./postgres-trust.js";
import { createWriter, headMissing, headOf, type WriteOutcome } from "./postgres-writes.js";
import {
  type AuditRow,
  auditOf,
  type DocRow,
  docStatusOf,
  type OutcomeSqlRow,
  outcomeOf,
  parseDoc,
  SUMMARY_COLUMNS,
  type SummaryRow,
  summaryFromRow,
} from "./rows.js";
import { checkDrafts, idTaken } from "./storable.js";
import { keptUnlessFailed, timedCache } from "./timed-cache.js";

/** With the audit options (`auditKey`, `checkpointFile`, `checkpointIntervalMs`). */
export interface PostgresStoreOptions extends AuditKeyOptions {
  /** The schema holding Airlock's tables; created when missing. @default "public" */
  schema?: string;
  /** Size of the pool the store creates from a URL (a pool you pass keeps its own size). @default 10 */
  max?: number;
  /** How long to wait for a new connection before failing with `store_unavailable`. @default 5000 */
  connectionTimeoutMs?: number;
  /** `application_name` of the connections the store opens (see pg_stat_activity). @default "airlock" */
  applicationName?: string;
  /** How long a sweeper's claim keeps other processes off a due request. @default 10000 */
  claimTtlMs?: number;
  /** The LISTEN connection closes this long after the last listener left. @default 30000 */
  listenIdleMs?: number;
  /** First and longest wait between attempts to re-open a dropped LISTEN connection. @default 100, 5000 */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** How many rows of a listing a title search (`q`) checks in order, from the listing's own index,
   * before it asks the trigram index for the rest (src/store/postgres-search.ts). @default 50000 */
  titleWalkRows?: number;
  /** When a reviewer's listing is read from the approver index (src/store/approver-index.ts):
   * "auto" by its share and count, "always", or "never". @default "auto" */
  approverIndex?: ApproverIndexUse;
  /** Background problems, for logging: the LISTEN connection dropped or could not be re-opened, an
   * idle pooled connection died (these arrive as `store_unavailable`; the store recovers by itself),
   * an `onExternalChange` listener threw (passed on as it was), or a checkpoint could not be written. */
  onError?: (err: Error) => void;
}

type Extra = "onError" | "auditKey" | "checkpointFile" | "checkpointIntervalMs";
type ResolvedOptions = Required<Omit<PostgresStoreOptions, Extra>> &
  Pick<PostgresStoreOptions, Extra>;

/** Connections of the store's own pool unless `max` says otherwise. */
export const DEFAULT_POOL_MAX = 10;

const DEFAULTS = {
  schema: "public",
  max: DEFAULT_POOL_MAX,
  connectionTimeoutMs: 5000,
  applicationName: "airlock",
  claimTtlMs: 10_000,
  listenIdleMs: 30_000,
  reconnectMinMs: 100,
  reconnectMaxMs: 5000,
  titleWalkRows: WALK_ROWS,
  approverIndex: "auto",
} satisfies Omit<ResolvedOptions, Extra>;

/** A Store backed by PostgreSQL, plus the pool it queries (for your own reads and for tests). */
export interface PostgresStore extends Store {
  readonly kind: "postgres";
  readonly pool: Pool;
  readonly schema: string;
}

/** Opens a PostgreSQL store on a connection string or on a `pg.Pool` you own (then `close()` leaves
 * the pool open and you should listen to its "error" events yourself, as node-postgres asks). Nothing
 * connects until the first operation; `migrate()` (which `createAirlock` calls) is the first. */
export function postgresStore(
  urlOrPool: string | Pool,
  options: PostgresStoreOptions = {},
): PostgresStore {
  const o = resolveOptions(options);
  const own = ownAuditKey(o);
  const checkpoints = checkpointWriterFor(o, own, (err) => o.onError?.(err));
  const ownPool = typeof urlOrPool === "string";
  const target = ownPool ? maskUrl(urlOrPool) : describePool(urlOrPool);
  const report = (err: unknown, what: string) => {
    if (isAirlockError(err)) o.onError?.(err);
    else if (isConnectionError(err)) o.onError?.(storeUnavailable(target, what, err));
    else o.onError?.(err instanceof Error ? err : new Error(String(err)));
  };
  const pool: Pool = ownPool ? createPool(urlOrPool, o) : urlOrPool;
  // An idle pooled connection that dies (server restart, pg_terminate_backend) is dropped by the
  // pool; without a listener node-postgres would crash the process instead.
  const onPoolError = (err: Error) => report(err, "idle connection lost");
  if (ownPool) pool.on("error", onPoolError);

  const sql = statements(o.schema);
  const pruning = postgresPruning(sql.schema, own);
  const channel = channelFor(o.schema);
  const selfId = randomUUID();

  const changes = createChangeListener({
    channel,
    channelIdent: quoteIdent(channel),
    selfId,
    idleMs: o.listenIdleMs,
    minBackoffMs: o.reconnectMinMs,
    maxBackoffMs: o.reconnectMaxMs,
    onError: (err) => report(err, "change notifications"),
    connect: async (): Promise<ListenConnection> => {
      if (typeof urlOrPool !== "string") {
        // A pool we don't own: hold one of its connections, and destroy it when done (it LISTENs).
        const client = await urlOrPool.connect();
        return { client, release: async () => client.release(true) };
      }
      const client = new pg.Client({
        connectionString: urlOrPool,
        connectionTimeoutMillis: o.connectionTimeoutMs,
        application_name: o.applicationName,
        keepAlive: true,
        keepAliveInitialDelayMillis: KEEPALIVE_MS,
      });
      // Errors after connect are handled by the listener; this one covers a failed connect.
      client.on("error", () => {});
      try {
        await client.connect();
      } catch (err) {
        await client.end().catch(() => {});
        throw err;
      }
      return { client, release: () => client.end() };
    },
  });

  let closed = false;
  let closing: Promise<void> | undefined;
  let migrating: Promise<void> | undefined;
  function guard() {
    if (closed) throw new AirlockError("closed", "the PostgreSQL store is closed");
  }
  const runner = createRunner(pool, target, () => closed);
  async function run<T>(what: string, fn: (c: PoolClient, step: Step) => Promise<T>): Promise<T> {
    guard();
    return runner.run(what, fn);
  }
  function read<R extends QueryResultRow>(what: string, q: Query, values: unknown[] = []) {
    return run(what, async (c) => (await c.query<R>({ ...q, values })).rows);
  }

  /** The newest titles, read again when older than SAMPLE_MAX_AGE_MS (postgres-search.ts). */
  const samples = timedCache<Promise<string[]>>(SAMPLE_MAX_AGE_MS);
  const titleSample = (what: string): Promise<string[]> =>
    keptUnlessFailed(samples, "", Date.now(), async () =>
      (
        await read<{ t: string | null }>(what, {
          text: `SELECT title_lower AS t FROM ${sql.schema}.requests ORDER BY id DESC LIMIT ${SAMPLE_TITLES}`,
        })
      ).map((r) => r.t ?? ""),
    );

  /** Whether a listing is read from the approver index (approver-index.ts); its estimates are kept
   * ten minutes (they cost up to tens of ms). */
  const reviewerFigures = timedCache<Promise<number>>(NARROW_MAX_AGE_MS);
  const approverDialect = postgresApproverDialect(sql.schema);
  async function readsIndex(what: string, filter: ListFilter): Promise<boolean> {
    const choice = indexChoice(approverDialect, filter, o.approverIndex);
    if (typeof choice === "boolean") return choice;
    for (const e of choice) {
      const n = await keptUnlessFailed(reviewerFigures, e.key, Date.now(), async () => {
        const [row] = await read<{ n: string }>(what, { text: e.sql }, e.values);
        return Number(row?.n ?? 0);
      });
      if (n >= e.below) return false;
    }
    return true;
  }

  /** A listing's rows: read from the approver index for a reviewer whose rows it can read
   * (approver-index.ts); else a title search walks first when the listing's index allows
   * (postgres-search.ts). */
  async function listed<R extends Positioned>(what: string, filter: ListFilter, columns: string) {
    if (await readsIndex(what, filter)) {
      // A reviewer of few requests: read from its rows in the approver index.
      const n = narrowSql(approverDialect, filter, columns);
      return read<R>(what, { text: n.sql }, n.values);
    }
    if (walkable(filter)) {
      return searchRows<R>(
        sql,
        filter,
        columns,
        o.titleWalkRows,
        (q) => read(what, q, q.values),
        async (q) => shareHolding(await titleSample(what), q.toLowerCase()),
      );
    }
    const q = sql.list(filter, columns);
    return read<R>(what, q, q.values);
  }

  /** The events placed after the head this transaction locked, hashed with the key when the
   * chain is keyed (or this append starts keying it). */
  function chain(head: WrittenRow | undefined, drafts: AuditDraft[]): Appended {
    if (drafts.length === 0) return { events: [], startsKeying: false };
    const h = headOf(head, sql.schema);
    const { key, startsKeying } = keyForAppend(own, { keyedFrom: h.keyedFrom, keyId: h.keyId });
    let prev: { seq: number; hash: string } | undefined =
      h.seq === 0 ? undefined : { seq: h.seq, hash: h.hash };
    const events = drafts.map((d) => {
      const e = chainEvent(d, prev, key);
      prev = e;
      return e;
    });
    // This append moved the head past what the batched writer knows: it learns on its next batch.
    writer.learn(undefined);
    return { events, startsKeying };
  }

  /** The statements that end a writing transaction: append (or just signal), then COMMIT. */
  function finishing(a: Appended): Query[] {
    const first = a.events[0];
    const signal: Query = first
      ? {
          ...sql.append,
          values: [
            ...appendValues(a.events),
            channel,
            selfId,
            a.startsKeying ? first.seq : null,
            a.startsKeying ? (own?.id ?? null) : null,
          ],
        }
      : { ...sql.notify, values: [channel, selfId] };
    return [signal, COMMIT];
  }

  /** What goes with a write, only if it happens: its outbox rows, and the metrics counter of the
   * request it settles (outcome-stats.ts). */
  function withWrite(
    request: ApprovalRequest,
    drafts: AuditDraft[],
    messages: OutboxDraft[],
    now: number,
  ): Query[] {
    const out: Query[] = [];
    if (messages.length) out.push({ ...sql.outboxInsert, values: outboxValues(messages, now) });
    const s = settledStat(request, drafts);
    if (s) {
      const key = [s.hour, s.action, s.status, s.method, s.bucket];
      out.push({ ...sql.bumpStat, values: [...key, 1], lockKey: JSON.stringify(key), amount: 1 });
    }
    return out;
  }

  /** After a commit that appended events: the new head goes to the checkpoint file. */
  function noted(events: AuditEvent[]): void {
    const last = events[events.length - 1];
    if (last && checkpoints) checkpoints.note(last);
  }

  const reads = createReadBatcher({
    byId: sql.byId,
    byIds: sql.byIds,
    run,
    maxBatch: MAX_BATCH,
    maxInFlight: READS_IN_FLIGHT,
  });
  const writer = createWriter({
    sql,
    channel,
    selfId,
    own,
    run,
    committed: noted,
    maxBatch: MAX_BATCH,
    maxInFlight: BATCHES_IN_FLIGHT,
  });

  /** One create through the batched writer: `found` is a `LostCreate` with a quota, else a DocRow. */
  async function insertOnce(
    request: ApprovalRequest,
    events: AuditDraft[],
    messages: OutboxDraft[],
    values: unknown[],
    quota: PendingQuota | undefined,
  ): Promise<WriteOutcome> {
    const byKey = [request.requester, request.key ?? null];
    try {
      return await writer.write({
        what: "insertRequest",
        // Keyed creates first, by key, so processes racing on the same keys lock them in order.
        order:
          request.key === undefined ? `1${request.id}` : `0${request.requester}\0${request.key}`,
        kind: "insert",
        values,
        lost: quota ? { ...sql.quotaLost, values: byKey } : { ...sql.byKey, values: byKey },
        outbox: withWrite(request, events, messages, request.updatedAt),
        events,
        ...(quota
          ? { quota: { ...quota, lock: lockKey(o.schema, `quota:${request.requester}`) } }
          : {}),
      });
    } catch (err) {
      if ((err as { code?: unknown }).code === "23505") throw idTaken(request.id, err);
      throw err;
    }
  }

  async function migrateOnce(): Promise<void> {
    await run("migrate", async (c, step) => {
      await c.query("BEGIN");
      // Held until COMMIT: a second process starting at the same moment waits here, then finds
      // the migrations applied. (Migrations are transactional DDL: all or nothing.)
      await c.query("SELECT pg_advisory_xact_lock($1::bigint)", [lockKey(o.schema)]);
      const exists = await c.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [o.schema]);
      if (exists.rowCount === 0) await c.query(`CREATE SCHEMA ${sql.schema}`);
      await c.query(sql.migrationsTable);
      const current = Number((await c.query<{ v: number }>(sql.migrationsVersion)).rows[0]?.v);
      const known = POSTGRES_MIGRATIONS[POSTGRES_MIGRATIONS.length - 1]?.version ?? 0;
      if (current > known) {
        // A newer Airlock migrated this schema; this one would misread it.
        throw new AirlockError(
          "store_unavailable",
          `schema ${sql.schema} is at migration ${current}, newer than this Airlock knows (${known}): upgrade Airlock`,
        );
      }
      for (const m of POSTGRES_MIGRATIONS) {
        if (m.version <= current) continue;
        await c.query(m.sql(sql.schema));
        if (m.version === TITLE_LOWER_MIGRATION) await fillTitleLower(c, sql.schema);
        await c.query(sql.migrationsInsert, [m.version, Date.now()]);
      }
      // The head row exists from the start (seq 0 = empty): without it while events exist, events
      // may have been deleted and a truncation could not be detected, so refuse to open.
      let head = (await c.query<HeadRow>(sql.head)).rows[0];
      if (!head) {
        const any = (await c.query<{ any: boolean }>(sql.anyAudit)).rows[0]?.any;
        if (any) throw headMissing(sql.schema);
        await c.query(`INSERT INTO ${sql.schema}.audit_head (id, seq, hash) VALUES (1, 0, $1)`, [
          GENESIS_HASH,
        ]);
        head = { seq: "0", hash: GENESIS_HASH, keyed_from: null, key_id: null };
      }
      keyForAppend(own, {
        keyedFrom: head.keyed_from === null ? null : Number(head.keyed_from),
        keyId: head.key_id,
      });
      const trgm = await c.query<{ idx: string | null }>("SELECT to_regclass($1)::text AS idx", [
        `${sql.schema}.requests_title_trgm`,
      ]);
      step.committing = true;
      await c.query("COMMIT");
      if (!trgm.rows[0]?.idx) {
        o.onError?.(
          new Error(
            `PostgreSQL schema ${sql.schema}: the pg_trgm extension could not be created, so title search (q) scans the requests table; an administrator can run CREATE EXTENSION pg_trgm and then CREATE INDEX requests_title_trgm ON ${sql.schema}.requests USING gin (title_lower gin_trgm_ops)`,
          ),
        );
      }
    });
  }

  return {
    kind: "postgres",
    pool,
    schema: o.schema,

    async migrate() {
      guard();
      migrating ??= migrateOnce()
        .then(() => recordCheckpointsStart(checkpoints, own, (drafts) => this.appendAudit(drafts)))
        .finally(() => {
          migrating = undefined;
        });
      return migrating;
    },

    async insertRequest(request, events, messages = [], options = {}) {
      guard();
      checkDrafts(events);
      checkOutboxDrafts(messages);
      const quota = request.status === "pending" ? options.quota : undefined;
      if (quota) checkPendingQuota(quota);
      const values = insertValues(request);
      // A quota'd create left out while its requester's pending requests, as read after it, left
      // room (a decision freed some meanwhile, or creates of the same batch ahead of it took bytes
      // they did not keep) is tried again, a bounded number of times.
      for (let attempt = 1; ; attempt++) {
        const out = await insertOnce(request, events, messages, values, quota);
        if (out.written) {
          return {
            request,
            created: true,
            events: out.events,
            docJson: docOfValues("insert", values),
          };
        }
        const found = out.found as LostCreate | undefined;
        // The key exists: ON CONFLICT waited for its writer to commit, so this read saw it.
        if (found?.doc) return { request: parseDoc(found as DocRow), created: false, events: [] };
        if (!quota || !found) throw idTaken(request.id);
        const usage = { count: Number(found.n), bytes: Number(found.bytes) };
        const bytes = Number(values[INSERT_DOC_BYTES]);
        const refused = quotaRefusal(request.requester, usage, bytes, quota);
        if (refused) throw refused;
        if (attempt >= QUOTA_ATTEMPTS) {
          throw new AirlockError(
            "store_unavailable",
            `insertRequest: the pending quota of ${request.requester} kept changing while request ${request.id} was created (${QUOTA_ATTEMPTS} attempts); try again (with the same idempotency key, a retried create cannot make a second request)`,
          );
        }
      }
    },

    async getRequest(id) {
      guard();
      const row = await reads.get(id);
      return row ? parseDoc(row) : undefined;
    },

    async getRequestByKey(requester, key) {
      const [row] = await read<DocRow>("getRequestByKey", sql.byKey, [requester, key]);
      return row ? parseDoc(row) : undefined;
    },

    async listRequests(filter) {
      const rows = await listed<DocRow & Positioned>("listRequests", filter, "id, doc");
      // One row more than a page was asked for: its presence means there is a next page.
      const page = pageOf(listOrder(filter), rows, clampLimit(filter.limit), position);
      return { ...page, items: page.items.map(parseDoc) };
    },

    async listSummaries(filter) {
      const rows = await listed<SummaryRow & Positioned>("listSummaries", filter, SUMMARY_COLUMNS);
      const page = pageOf(listOrder(filter), rows, clampLimit(filter.limit), position);
      return { ...page, items: page.items.map(summaryFromRow) };
    },

    async countRequests(filter, options = {}) {
      const q = sql.count(filter, countCap(options));
      const [row] = await read<{ n: string }>("countRequests", q, q.values);
      return Number(row?.n ?? 0);
    },

    async pendingUsage(requester) {
      const [row] = await read<{ n: number; bytes: string }>("pendingUsage", sql.pendingUsage, [
        requester,
      ]);
      return { count: row?.n ?? 0, bytes: Number(row?.bytes ?? 0) };
    },

    async listStatuses(after, limit) {
      const rows = await read<{ id: string; status: string; doc: string }>(
        "listStatuses",
        sql.statuses,
        [after ?? "", Math.max(1, Math.trunc(limit))],
      );
      return rows.map((r) => ({
        id: r.id,
        status: r.status as ApprovalRequest["status"],
        docStatus: docStatusOf(r.doc),
      }));
    },

    async transition(next, expectedVersion, events, messages = []) {
      guard();
      if (next.version !== expectedVersion + 1) {
        throw new InvalidInputError(
          `transition: next.version must be expectedVersion + 1 (expected ${expectedVersion + 1}, got ${next.version})`,
          "version",
        );
      }
      checkDrafts(events);
      checkOutboxDrafts(messages);
      const values = updateValues(next, expectedVersion);
      const out = await writer.write({
        what: "transition",
        order: `2${next.id}`,
        kind: "update",
        values,
        // Lost the race (or no such request): the UPDATE waited for the winner's commit, so this
        // read returns the winner's version.
        lost: { ...sql.byId, values: [next.id] },
        outbox: withWrite(next, events, messages, next.updatedAt),
        events,
      });
      if (!out.written) {
        return { ok: false, request: out.found ? parseDoc(out.found) : undefined, events: [] };
      }
      return {
        ok: true,
        request: next,
        events: out.events,
        docJson: docOfValues("update", values),
      };
    },

    async enqueueOutbox(messages) {
      guard();
      checkOutboxDrafts(messages);
      if (messages.length === 0) return 0;
      const [row] = await read<{ written: number }>("enqueueOutbox", sql.outboxEnqueue, [
        ...outboxValues(messages, Date.now()),
        channel,
        selfId,
      ]);
      return row?.written ?? 0;
    },

    async claimOutbox(claim) {
      guard();
      checkClaim(claim);
      const rows = await read<OutboxRow>("claimOutbox", sql.outboxClaim, [
        claim.now,
        claim.limit,
        claim.owner,
        claim.leaseMs,
      ]);
      return rows.sort(byDueOrder).map(outboxOf);
    },

    async settleOutbox(id, owner, settlement, events = []) {
      guard();
      checkSettlement(id, owner, settlement);
      checkDrafts(events);
      const values = settleValues(id, owner, settlement, Date.now());
      if (events.length === 0) {
        const [row] = await read<{ written: number }>("settleOutbox", sql.outboxSettleAlone, [
          ...values,
          channel,
          selfId,
        ]);
        return (row?.written ?? 0) > 0;
      }
      return run("settleOutbox", async (c, step) => {
        // One round trip: open, settle if still held and, if it did, lock the chain head.
        const [, written] = await send(c, [BEGIN, { ...sql.outboxSettle, values }]);
        const head = written?.rows[0] as WrittenRow | undefined;
        if (!head || head.written === 0) {
          await send(c, [ROLLBACK]);
          return false;
        }
        const appended = chain(head, events);
        step.committing = true;
        await send(c, finishing(appended));
        noted(appended.events);
        return true;
      });
    },

    async listOutbox(filter) {
      checkOutboxFilter(filter);
      const q = sql.listOutbox(filter);
      return (await read<OutboxRow>("listOutbox", q, q.values)).map(outboxOf);
    },

    async appendAudit(events) {
      guard();
      if (events.length === 0) return [];
      checkDrafts(events);
      return run("appendAudit", async (c, step) => {
        const [, locked] = await send(c, [BEGIN, sql.lockHead]);
        const appended = chain(locked?.rows[0] as WrittenRow | undefined, events);
        step.committing = true;
        await send(c, finishing(appended));
        noted(appended.events);
        return appended.events;
      });
    },

    ...postgresTickets({ schema: sql.schema, run }),
    ...postgresTrustRules({
      schema: sql.schema,
      run,
      async appendAndCommit(c, step, events) {
        const [locked] = await send(c, [sql.lockHead]);
        const appended = chain(locked?.rows[0] as WrittenRow | undefined, events);
        step.committing = true;
        await send(c, finishing(appended));
        noted(appended.events);
        return appended.events;
      },
    }),

    async listAudit(filter) {
      const q = sql.listAudit(filter);
      return (await read<AuditRow>("listAudit", q, q.values)).map(auditOf);
    },

    async auditHead() {
      const [row] = await read<HeadRow>("auditHead", sql.head);
      if (!row || Number(row.seq) === 0) return undefined;
      return { seq: Number(row.seq), hash: row.hash };
    },

    auditVerification() {
      return {
        ...(own ? { key: own.key } : {}),
        ...(o.checkpointFile !== undefined ? { checkpointFile: o.checkpointFile } : {}),
      };
    },
    async prune(options) {
      const pruned = await pruning.prune(options, run);
      // The prune may have deleted the record that checkpoints are written: record it again.
      if (pruned.events > 0) {
        await recordCheckpointsStart(checkpoints, own, (d) => this.appendAudit(d), {
          always: true,
        });
      }
      return pruned;
    },
    auditMarks: () => run("auditMarks", (c) => pruning.marks(c)),
    saveVerifiedMark: (m) => run("saveVerifiedMark", (c) => pruning.saveVerified(c, m)),
    readAuditPage: (after, limit) => run("readAuditPage", (c) => pruning.page(c, after, limit)),
    listStatusEvidence: (after, limit) =>
      run("listStatusEvidence", (c) => pruning.evidence(c, after, limit)),
    async auditChainState() {
      const [row] = await read<HeadRow>("auditChainState", sql.head);
      return {
        head: row && Number(row.seq) > 0 ? { seq: Number(row.seq), hash: row.hash } : undefined,
        headRowMissing: row === undefined,
        ...(row?.keyed_from != null ? { keyedFrom: Number(row.keyed_from) } : {}),
        ...(row?.key_id != null ? { keyId: row.key_id } : {}),
      };
    },

    async nextDeadline() {
      const [row] = await read<{ free: number | null; leased: number | null }>(
        "nextDeadline",
        sql.nextDeadline,
        [selfId],
      );
      const times = [row?.free, row?.leased].filter((t): t is number => typeof t === "number");
      return times.length ? Math.min(...times) : undefined;
    },

    async dueRequests(now, limit) {
      const rows = await read<DocRow>("dueRequests", sql.claimDue, [
        now,
        Math.max(1, Math.trunc(limit)),
        selfId,
        o.claimTtlMs,
      ]);
      // UPDATE ... RETURNING keeps no order: earliest deadline first, as the contract says.
      return rows
        .map(parseDoc)
        .sort((a, b) => (a.deadline ?? 0) - (b.deadline ?? 0) || (a.id < b.id ? -1 : 1));
    },

    async staleExecutions(now, limit) {
      const rows = await read<DocRow>("staleExecutions", sql.staleExecutions, [
        now,
        Math.max(1, Math.trunc(limit)),
      ]);
      return rows.map(parseDoc);
    },

    async nextLeaseEnd() {
      const [row] = await read<{ lease_until: number | null }>(
        "nextLeaseEnd",
        sql.nextLeaseEnd,
        [],
      );
      return row?.lease_until ?? undefined;
    },

    async outcomes(since) {
      return (await read<OutcomeSqlRow>("outcomes", sql.outcomes, [since])).map(outcomeOf);
    },
    async outcomeStats(since) {
      return read<OutcomeStat>("outcomeStats", sql.outcomeStats, [Math.floor(since / HOUR_MS)]);
    },

    async countPending() {
      const [row] = await read<{ n: number }>("countPending", sql.countPending);
      return row?.n ?? 0;
    },

    onExternalChange(listener) {
      if (closed) return () => {};
      return changes.add(listener);
    },

    close() {
      closing ??= (async () => {
        closed = true;
        await checkpoints?.flush();
        await changes.close();
        await migrating?.catch(() => {});
        if (ownPool) {
          await pool.end();
          pool.removeListener("error", onPoolError);
        }
      })();
      return closing;
    },
  };
}

interface HeadRow {
  seq: string;
  hash: string;
  keyed_from: string | null;
  key_id: string | null;
}

interface Appended {
  events: AuditEvent[];
  /** This append is the first keyed one: the head records it. */
  startsKeying: boolean;
}

/** A pool as the store creates it from a connection string (the token store makes its own alike). */
export function createPool(
  url: string,
  o: Pick<ResolvedOptions, "max" | "connectionTimeoutMs" | "applicationName">,
): Pool {
  return new pg.Pool({
    connectionString: url,
    max: o.max,
    connectionTimeoutMillis: o.connectionTimeoutMs,
    application_name: o.applicationName,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_MS,
    // Send a transaction's statements without waiting for each answer (see `send`).
    pipeline: true,
    // Our transactions are two round trips; one left open this long belongs to a stuck
    // process, and would hold the chain head from everyone else: the server ends it.
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
  });
}

/** Throws invalid_input unless `schema` can name a PostgreSQL schema. */
export function checkSchema(schema: unknown): asserts schema is string {
  if (typeof schema !== "string" || schema.length === 0 || Buffer.byteLength(schema) > 63) {
    throw new InvalidInputError(
      `Expected \`schema\` to be a schema name of 1 to 63 bytes, got ${JSON.stringify(schema)}`,
      "schema",
    );
  }
}

function resolveOptions(options: PostgresStoreOptions): ResolvedOptions {
  const o: ResolvedOptions = { ...DEFAULTS, ...stripUndefined(options) };
  checkSchema(o.schema);
  approverIndexUse(o.approverIndex);
  for (const key of [
    "max",
    "connectionTimeoutMs",
    "claimTtlMs",
    "listenIdleMs",
    "reconnectMinMs",
    "reconnectMaxMs",
    "titleWalkRows",
  ] as const) {
    const v = o[key];
    if (!Number.isInteger(v) || v < 1) {
      throw new InvalidInputError(
        `Expected \`${key}\` to be an integer from 1 and up, got \`${String(v)}\` (${typeof v})`,
        key,
      );
    }
  }
  return o;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** One NOTIFY channel per schema, so isolated schemas don't wake each other. Channel names are
 * identifiers: at most 63 bytes, so a long schema name is replaced by its hash. */
function channelFor(schema: string): string {
  const plain = `airlock:${schema}`;
  if (Buffer.byteLength(plain) <= 63) return plain;
  return `airlock:${createHash("sha256").update(schema).digest("hex").slice(0, 40)}`;
}

/** The advisory lock that serializes migrations of one schema (a signed 64-bit key); another `what`
 * (the token store's "migrate-tokens") gives another lock. */
export function lockKey(schema: string, what = "migrate"): string {
  const digest = createHash("sha256").update(`airlock:${what}:${schema}`).digest();
  return digest.readBigInt64BE(0).toString();
}

/** What `quotaLost` reads of a quota'd create left out: the request holding its key (none: `doc`
 * is null), and its requester's pending requests. */
interface LostCreate {
  doc: string | null;
  n: number;
  bytes: string;
}
/** Where `insertValues` puts the stored document's size. */
const INSERT_DOC_BYTES = 22;
/** Tries of a quota'd create that was left out although its quota, read after, had room. */
const QUOTA_ATTEMPTS = 3;

const IDLE_IN_TRANSACTION_MS = 15_000;
// Writes arriving while a batch commits go together in the next one, up to this many.
const MAX_BATCH = 64;
// Lookups by id sent at once while fewer than this many are on their way (see postgres-reads.ts).
const READS_IN_FLIGHT = 2;
// One batch on its way at a time: the writes arriving meanwhile make the next one. (Two, the second
// chained after the first, made smaller batches and no more throughput on a 2-core machine.)
const BATCHES_IN_FLIGHT = 1;
// TCP keepalive probes after this much silence, so a connection to a vanished host (no reset ever
// arrives) is found dead in seconds rather than the system default of hours.
const KEEPALIVE_MS = 10_000;
const BEGIN: Query = { text: "BEGIN" };
const COMMIT: Query = { text: "COMMIT" };
const ROLLBACK: Query = { text: "ROLLBACK" };
