// Request writes (create, transition) of the PostgreSQL store, grouped and sent in one round trip.
//
// Writes that arrive while a batch is in flight wait and go together in the next batch: one
// transaction, one commit flush, one chain append for all of them (group commit). A batch takes
// one of two paths:
// - one round trip, when this process knows the chain head: [BEGIN, each write (failing unless it
//   wrote), its outbox rows, the events chained after the known head (failing unless the head is
//   still that one), COMMIT] sent together. Any failure undoes the whole batch, which then takes:
// - the locking path, two round trips: [BEGIN, each write, lock the head] then, knowing which writes
//   won and the head, [reads of the losers, outbox rows and events of the winners, COMMIT].
// Either way every transaction takes its request rows first, in one global order, and the head
// last, so batches of several processes never deadlock, and the head is held only for the commit.
// A batch holding creates with a pending quota takes their requesters' advisory locks before
// anything else (sorted: one order everywhere), and writes its creates with `insertQuota`, which
// leaves out those over quota (they lose, and take the locking path like any lost write).
//
// The known head is a hint, never trusted: the database checks it in the appending statement.
import type { PoolClient, QueryResult, QueryResultRow } from "pg";
import { chainEvent, keyForAppend } from "../audit/chain.js";
import { AirlockError, isAirlockError } from "../core/errors.js";
import type { AuditDraft, AuditEvent } from "../core/schemas.js";
import { type Step, send } from "./postgres-client.js";
import {
  appendValues,
  manyValues,
  type Query,
  quotaValues,
  type Statements,
  type WrittenRow,
} from "./postgres-sql.js";
import type { DocRow } from "./rows.js";

/** One request write: its values, and what goes with it. */
export interface Write {
  /** The store operation, for error messages. */
  what: "insertRequest" | "transition";
  /** Creates go in `insertMany` (values of `insertValues`), transitions in `updateMany` (values
   * of `updateValues`). */
  kind: "insert" | "update";
  values: unknown[];
  /** Writes of a batch are chained in this order (creates first, as the statements run). */
  order: string;
  /** Reads the row that stood in the way, when the write did not happen. */
  lost: Query;
  /** The write's outbox rows (written only with it). */
  outbox: Query[];
  events: AuditDraft[];
  /** A create's pending quota, and its requester's advisory lock key (a signed 64-bit integer as
   * text): the create is written only within the quota (see `insertQuota`). */
  quota?: { lock: string; count: number; bytes: number };
}

export type WriteOutcome =
  | { written: true; events: AuditEvent[] }
  | { written: false; found: DocRow | undefined };

/** The chain head as a transaction saw it. */
export interface ChainHead {
  seq: number;
  hash: string;
  keyedFrom: number | null;
  keyId: string | null;
}

export interface WriterOptions {
  sql: Statements;
  channel: string;
  selfId: string;
  own: { key: Buffer; id: string } | undefined;
  run<T>(what: string, fn: (c: PoolClient, step: Step) => Promise<T>): Promise<T>;
  /** After a commit that appended events. */
  committed(events: AuditEvent[]): void;
  /** Most writes in one batch. */
  maxBatch: number;
  /** Most batches on their way at once (the next one chained after the one before). */
  maxInFlight: number;
}

export interface Writer {
  write(w: Write): Promise<WriteOutcome>;
  /** Another statement of this process moved the head (or may have: `undefined`). */
  learn(head: ChainHead | undefined): void;
}

interface Pending {
  w: Write;
  resolve(o: WriteOutcome): void;
  reject(err: unknown): void;
}

export function createWriter(o: WriterOptions): Writer {
  const { sql } = o;
  // The head after the last batch sent: the next batch is chained after it, so it can be on its
  // way while the one before commits (it then waits for the head row, and goes on if that batch
  // committed, or fails and takes the locking path if it did not).
  let known: ChainHead | undefined;
  let queue: Pending[] = [];
  let inFlight = 0;

  function pump(): void {
    while (queue.length > 0 && inFlight < o.maxInFlight) {
      const batch = queue.slice(0, o.maxBatch);
      queue = queue.slice(batch.length);
      inFlight++;
      void flush(batch).finally(() => {
        inFlight--;
        pump();
      });
    }
  }

  async function flush(batch: Pending[]): Promise<void> {
    batch.sort((a, b) => (a.w.order < b.w.order ? -1 : a.w.order > b.w.order ? 1 : 0));
    const writes = batch.map((p) => p.w);
    const head = known;
    if (head) {
      try {
        settle(batch, await oneTrip(writes, head));
        return;
      } catch (err) {
        known = undefined;
        // Lost connections and unknown outcomes are the caller's to hear; a statement that failed
        // (a lost write, a moved head, a deadlock, a taken id) undid the batch: take the other path.
        if (!retryable(err)) return rejectAll(batch, err);
      }
    }
    try {
      settle(batch, await locking(writes));
    } catch (err) {
      known = undefined;
      if (batch.length === 1 || !retryable(err)) return rejectAll(batch, err);
      // One write failed the batch: each alone, so only its own caller hears of it.
      for (const p of batch) {
        try {
          settle([p], await locking([p.w]));
        } catch (e) {
          known = undefined;
          p.reject(e);
        }
      }
    }
  }

  /** The statement writing `rows`: one row alone, several with arrays. */
  function statementFor(kind: Write["kind"], rows: unknown[][], orFail: boolean): Query {
    if (rows.length === 1) {
      if (kind === "insert") return orFail ? sql.insertOneOrFail : sql.insertOne;
      return orFail ? sql.updateOneOrFail : sql.updateOne;
    }
    if (kind === "insert") return orFail ? sql.insertManyOrFail : sql.insertMany;
    return orFail ? sql.updateManyOrFail : sql.updateMany;
  }

  /** The batch's creates and transitions, one statement each; with `orFail`, failing unless all
   * were written. */
  function writesOf(writes: Write[], orFail: boolean): Query[] {
    const out: Query[] = [];
    for (const kind of KINDS) {
      const of = writes.filter((w) => w.kind === kind);
      if (of.length === 0) continue;
      const rows = of.map((w) => w.values);
      const count = orFail ? [rows.length] : [];
      const alone = of.length === 1 ? of[0] : undefined;
      if (kind === "insert" && alone?.quota) {
        // One create alone: a simpler statement, as for creates without a quota.
        const { count: most, bytes } = alone.quota;
        const statement = orFail ? sql.insertQuotaOneOrFail : sql.insertQuotaOne;
        out.push({ ...statement, values: [...alone.values, most, bytes, ...count] });
        continue;
      }
      if (kind === "insert" && of.some((w) => w.quota)) {
        const statement = orFail ? sql.insertQuotaOrFail : sql.insertQuota;
        out.push({
          ...statement,
          values: [
            ...quotaValues(
              rows,
              of.map((w) => w.quota),
            ),
            ...count,
          ],
        });
        continue;
      }
      out.push({
        ...statementFor(kind, rows, orFail),
        values: [...valuesFor(kind, rows), ...count],
      });
    }
    return out;
  }

  /** The advisory locks of the requesters of the batch's quota'd creates, in one global order. */
  function quotaLocks(writes: Write[]): Query[] {
    const keys = [...new Set(writes.flatMap((w) => (w.quota ? [BigInt(w.quota.lock)] : [])))];
    if (keys.length === 0) return [];
    keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return [{ ...sql.lockQuotas, values: [keys.map(String)] }];
  }

  function keying(head: ChainHead) {
    return keyForAppend(o.own, { keyedFrom: head.keyedFrom, keyId: head.keyId });
  }

  /** The events of each write, chained in batch order after `head`. */
  function chained(drafts: AuditDraft[][], head: ChainHead, key: Buffer | undefined) {
    let prev: { seq: number; hash: string } | undefined =
      head.seq === 0 ? undefined : { seq: head.seq, hash: head.hash };
    return drafts.map((ds) =>
      ds.map((d) => {
        const e = chainEvent(d, prev, key);
        prev = e;
        return e;
      }),
    );
  }

  function headAfter(head: ChainHead, events: AuditEvent[], startsKeying: boolean): ChainHead {
    const last = events[events.length - 1];
    if (!last) return head;
    const first = events[0] as AuditEvent;
    return {
      seq: last.seq,
      hash: last.hash,
      keyedFrom: startsKeying ? first.seq : head.keyedFrom,
      keyId: startsKeying ? (o.own?.id ?? null) : head.keyId,
    };
  }

  /** Appends `events` (or only signals other processes), moving the head; with `expected`, only if
   * the head is still that one. */
  function appendOf(events: AuditEvent[], startsKeying: boolean, expected?: ChainHead): Query {
    const first = events[0];
    if (!first) return { ...sql.notify, values: [o.channel, o.selfId] };
    const values = [
      ...appendValues(events),
      o.channel,
      o.selfId,
      startsKeying ? first.seq : null,
      startsKeying ? (o.own?.id ?? null) : null,
    ];
    if (!expected) return { ...sql.append, values };
    return { ...sql.appendIfHead, values: [...values, expected.seq, expected.hash] };
  }

  async function oneTrip(writes: Write[], head: ChainHead): Promise<WriteOutcome[]> {
    const { key, startsKeying } = keying(head);
    const events = chained(
      writes.map((w) => w.events),
      head,
      key,
    );
    const all = events.flat();
    const queries: Query[] = [BEGIN, ...quotaLocks(writes), ...writesOf(writes, true)];
    const [free, counters] = splitShared(writes.flatMap((w) => w.outbox));
    queries.push(...free, appendOf(all, startsKeying, head), ...counters, COMMIT);
    known = headAfter(head, all, startsKeying);
    return o.run(whatOf(writes), async (c, step) => {
      // Everything, COMMIT included, leaves in one write: from here a lost connection leaves the
      // outcome unknown.
      step.committing = true;
      const results = await send(c, queries);
      committedOrThrow(results);
      if (all.length) o.committed(all);
      return events.map((e) => ({ written: true as const, events: e }));
    });
  }

  async function locking(writes: Write[]): Promise<WriteOutcome[]> {
    return o.run(whatOf(writes), async (c, step) => {
      const locks = quotaLocks(writes);
      const sent = await send(c, [BEGIN, ...locks, ...writesOf(writes, false), sql.lockHead]);
      const results = sent.slice(1 + locks.length);
      const locked = results.pop()?.rows[0] as WrittenRow | undefined;
      const won = winners(writes, results);
      const head = headOf(locked, sql.schema);
      const { key, startsKeying } = won.some(Boolean)
        ? keying(head)
        : { key: undefined, startsKeying: false };
      const events = chained(
        writes.map((w, i) => (won[i] ? w.events : [])),
        head,
        key,
      );
      const all = events.flat();
      const losers = writes.filter((_, i) => !won[i]);
      const queries: Query[] = losers.map((w) => w.lost);
      if (losers.length === writes.length) {
        const found = await send(c, [...queries, ROLLBACK]);
        known = head;
        return found.slice(0, -1).map((r) => lostOutcome(r));
      }
      const [free, counters] = splitShared(
        writes.filter((_, i) => won[i]).flatMap((w) => w.outbox),
      );
      queries.push(...free, appendOf(all, startsKeying), ...counters, COMMIT);
      step.committing = true;
      const out = await send(c, queries);
      committedOrThrow(out);
      known = headAfter(head, all, startsKeying);
      if (all.length) o.committed(all);
      let lost = 0;
      return writes.map((_, i) =>
        won[i]
          ? { written: true as const, events: events[i] ?? [] }
          : lostOutcome(out[lost++] as QueryResult<QueryResultRow>),
      );
    });
  }

  return {
    write(w) {
      return new Promise<WriteOutcome>((resolve, reject) => {
        queue.push({ w, resolve, reject });
        pump();
      });
    },
    learn(head) {
      // Only forward: a late report of an older head must not replace a newer one.
      if (!head || !known || head.seq > known.seq) known = head;
    },
  };
}

/** The operations of a batch, as error messages name them. */
function whatOf(writes: Write[]): string {
  return [...new Set(writes.map((w) => w.what))].join(" and ");
}

const KINDS = ["insert", "update"] as const;

function valuesFor(kind: Write["kind"], rows: unknown[][]): unknown[] {
  return rows.length === 1 ? (rows[0] as unknown[]) : manyValues(rows, kind);
}

/** Which writes were written: creates by the ids returned (the first write of an id, should two
 * share one), transitions by the ordinals returned (among the batch's transitions). */
function winners(writes: Write[], results: QueryResult<QueryResultRow>[]): boolean[] {
  let r = 0;
  const ids = new Set<string>();
  const ords = new Set<number>();
  if (writes.some((w) => w.kind === "insert")) {
    for (const row of results[r++]?.rows ?? []) ids.add(String(row.id));
  }
  if (writes.some((w) => w.kind === "update")) {
    for (const row of results[r++]?.rows ?? []) ords.add(Number(row.ord));
  }
  let updates = 0;
  return writes.map((w) => {
    if (w.kind === "update") return ords.has(++updates);
    const id = String(w.values[0]);
    return ids.delete(id);
  });
}

/** The statements that go with a batch's writes, split into those that touch only rows of their
 * own and those that update a row every writer shares (`lockKey`: the metrics counters). The shared
 * ones run after the chain append, so only the transaction holding the chain head takes them: the
 * locks always come in the order request rows, head, counters (sorted), and never deadlock. Bumps
 * of one counter go as one, by their sum: a batch of decisions of one kind updates its row once. */
function splitShared(queries: Query[]): [Query[], Query[]] {
  const free: Query[] = [];
  const shared = new Map<string, Query[]>();
  for (const q of queries) {
    if (q.lockKey === undefined) free.push(q);
    else {
      const same = shared.get(q.lockKey);
      if (same) same.push(q);
      else shared.set(q.lockKey, [q]);
    }
  }
  const keys = [...shared.keys()].sort();
  return [free, keys.flatMap((k) => mergedCounters(shared.get(k) as Query[]))];
}

/** Bumps of one counter as one bump by their sum (statements of another kind as they are). */
function mergedCounters(same: Query[]): Query[] {
  const first = same[0];
  if (!first || same.length === 1 || same.some((q) => q.amount === undefined)) return same;
  const amount = same.reduce((sum, q) => sum + (q.amount as number), 0);
  return [{ ...first, amount, values: [...(first.values ?? []).slice(0, -1), amount] }];
}

function settle(batch: Pending[], outcomes: WriteOutcome[]): void {
  for (const [i, p] of batch.entries()) {
    const out = outcomes[i];
    if (out) p.resolve(out);
    else p.reject(new Error("postgres store: a batched write got no outcome"));
  }
}

function rejectAll(batch: Pending[], err: unknown): void {
  for (const p of batch) p.reject(err);
}

function lostOutcome(r: QueryResult<QueryResultRow>): WriteOutcome {
  return { written: false, found: r.rows[0] as DocRow | undefined };
}

/** A statement of the database refused (not the connection, not an unknown outcome). */
function retryable(err: unknown): boolean {
  return !isAirlockError(err) && typeof (err as { code?: unknown }).code === "string";
}

/** COMMIT of a transaction that failed answers ROLLBACK instead of failing; `send` already threw
 * the failure itself, so this only guards against a silent rollback. */
function committedOrThrow(results: QueryResult<QueryResultRow>[]): void {
  const last = results[results.length - 1];
  if (last?.command !== "COMMIT") {
    throw Object.assign(new Error("postgres store: the write transaction was rolled back"), {
      code: "AL001",
    });
  }
}

/** The head a locking read returned, as numbers. */
export function headOf(row: WrittenRow | undefined, schema: string): ChainHead {
  if (!row || row.seq === null || row.hash === null) throw headMissing(schema);
  return {
    seq: Number(row.seq),
    hash: row.hash,
    keyedFrom: row.keyed_from === null ? null : Number(row.keyed_from),
    keyId: row.key_id,
  };
}

export function headMissing(schema: string): AirlockError {
  return new AirlockError(
    "store_unavailable",
    `the audit chain head row (table ${schema}.audit_head) is missing while the audit table holds events: events may have been deleted, and without the head a truncation cannot be detected. Restore the database from a backup; or, after checking the log with \`airlock audit verify\`, recreate the head from the last event: INSERT INTO ${schema}.audit_head (id, seq, hash) SELECT 1, seq, hash FROM ${schema}.audit ORDER BY seq DESC LIMIT 1 (on a keyed chain also set keyed_from and key_id as they were)`,
  );
}

const BEGIN: Query = { text: "BEGIN" };
const COMMIT: Query = { text: "COMMIT" };
const ROLLBACK: Query = { text: "ROLLBACK" };
