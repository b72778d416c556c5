// The one storage port. Every store (in-memory, SQLite, PostgreSQL) implements it and passes the same
// contract suite in test/store-contract. The engine owns the rules; a store owns atomicity: each
// method that writes does all its rows in one transaction, and `transition` is a compare-and-set on
// the request's `version`, so racing deciders and the timeout sweeper settle in the database.
import type {
  OutboxClaim,
  OutboxDraft,
  OutboxFilter,
  OutboxMessage,
  OutboxSettlement,
} from "./outbox.js";
import type { OutcomeStat } from "./outcome-stats.js";
import type {
  ApprovalRequest,
  AuditDraft,
  AuditEvent,
  ExecutionState,
  Level,
  Method,
  Outcome,
  Risk,
  Status,
} from "./schemas.js";
import type { TrustRule, TrustRuleInsert, TrustRuleRevoke } from "./trust-rule.js";

/** How a listing is sorted. `newest` (the default) and `oldest` go by id (ids grow with time);
 * `deadline` puts the earliest live deadline first (only pending requests have one), then requests
 * without a deadline, oldest first: the order of an inbox's queue. Each order is served by an index,
 * and each order's `nextCursor` is valid only with that same order. */
export type ListOrder = "newest" | "oldest" | "deadline";
export const LIST_ORDERS: readonly ListOrder[] = ["newest", "oldest", "deadline"];

export interface ListFilter {
  status?: Status | Status[];
  action?: string;
  /** Requests this user or any of these groups may decide (matched against `approvers`; a request
   * with no approvers is open to everyone). */
  approver?: string | string[];
  requester?: string;
  /** Approved requests whose execution is in this state (e.g. `unknown`: approved, not known to
   * have run). */
  execution?: ExecutionState | ExecutionState[];
  /** Requests whose title contains this text, ignoring case (`titleMatches` in paging.ts is the
   * reference: Unicode lower case on both sides, a plain substring, no wildcards). At most 200
   * characters. */
  q?: string;
  /** Where the previous page ended (its `nextCursor`, from a listing in the same `order`). */
  cursor?: string;
  limit?: number;
  /** @default "newest" */
  order?: ListOrder;
}

/** What a listing shows of a request, read from columns of its own: never the stored document, so
 * a list costs the same whatever the size of args, preview, summary or items. */
export interface RequestSummary {
  id: string;
  /** The idempotency key (unique per requester). */
  key?: string;
  action: string;
  title: string;
  status: Status;
  risk?: Risk;
  confidence?: number;
  level: Level;
  requester: string;
  approvers: string[];
  quorum: number;
  /** The live deadline: set only while the request is pending. */
  deadline?: number;
  createdAt: number;
  updatedAt: number;
  correlationId: string;
  revisionOf?: string;
  itemCount: number;
  /** The execution's state, once an approved request was claimed. */
  execution?: ExecutionState;
  /** The terminal decision, in brief, once there is one. */
  decision?: { outcome: Outcome; method: Method; reviewer: string; decidedAt: number };
}

/** An audit event as `readAuditPage` reads it. A store that keeps each event's data as JSON text
 * may give that text (`dataJson`) instead of the parsed data: verification hashes it as read
 * (src/audit/chain-check.ts), and parses it only when it needs the data (verify.ts). */
export type AuditPageEvent = AuditEvent | (Omit<AuditEvent, "data"> & { dataJson: string });

/** A request's status as its column and as its stored document say (they should agree), for
 * checking the stored requests against the audit log. */
export interface StoredStatus {
  id: string;
  status: Status;
  /** `status` inside the stored document; undefined when the document is unreadable. */
  docStatus: string | undefined;
}

/** A stored request with what its audit events say, read in one query, so the stored requests are
 * checked against the log without holding every request's status in memory. */
export interface StatusEvidence extends StoredStatus {
  /** The seq of the request's first event (its creation); undefined when it has none. */
  firstSeq?: number;
  /** Its last event that sets a status (created, escalated, decision_recorded, decided, timed_out,
   * cancelled), with `data.outcome` when that is a string. */
  lastStatus?: { seq: number; type: string; outcome?: string };
}

/** The chain head and how the chain is hashed, as recorded in the database, read at once. */
export interface AuditChainState {
  /** The last event's seq and hash; undefined while the log is empty. */
  head: { seq: number; hash: string } | undefined;
  /** True when the head row itself is gone (someone deleted it): the truncation check has nothing
   * to compare with, and the store refuses to open. */
  headRowMissing: boolean;
  /** The first event hashed with HMAC-SHA-256 (the events before it use plain SHA-256); undefined
   * while the chain is not keyed. */
  keyedFrom?: number;
  /** A fingerprint of the key that keyed the chain (never the key). */
  keyId?: string;
}

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

export interface InsertResult {
  request: ApprovalRequest;
  /** False when a request with the same `key` existed: `request` is then that first request. */
  created: boolean;
  events: AuditEvent[];
  /** The created request as the store wrote it, `JSON.stringify`'s text: a store that serialises
   * requests anyway says so, and the engine keeps its copy without serialising it again. */
  docJson?: string;
}

export interface TransitionResult {
  /** False when `expectedVersion` no longer matched: someone else changed the request first. */
  ok: boolean;
  request: ApprovalRequest | undefined;
  events: AuditEvent[];
  /** As in `InsertResult`: the written request's text, when `ok`. */
  docJson?: string;
}

export interface AuditFilter {
  requestId?: string;
  /** Only events with `seq` greater than this. */
  after?: number;
  limit?: number;
}

/** A row summarised for metrics: one per terminal request. */
export interface OutcomeRow {
  action: string;
  status: Status;
  method: string | undefined;
  createdAt: number;
  decidedAt: number;
}

/** A signed summary of a point of the audit chain: the seq and hash of one event, when it was
 * written, and a MAC over them (HMAC-SHA-256 under the audit key when the chain is keyed there, a
 * plain SHA-256 otherwise; see src/audit/marks.ts). Two kinds are kept in the database: the prune
 * anchor (the last event deleted by `prune`; the remaining log starts right after it) and the
 * verified mark (the last event `airlock audit verify` checked, where the next run resumes). */
export interface AuditMark {
  seq: number;
  hash: string;
  /** When it was written, epoch ms. */
  at: number;
  mac: string;
}

/** Both marks, read at once; each undefined until first written. */
export interface AuditMarks {
  anchor?: AuditMark;
  verified?: AuditMark;
}

export interface PruneOptions {
  /** Terminal requests last changed before this instant (epoch ms) are removed, with their outbox
   * rows and their audit events, as far as the cut allows (see `prune`). */
  before: number;
  /** Events deleted per transaction, so writers wait at most one batch. @default 20000 */
  batchEvents?: number;
  /** The clock for the anchor's `at`. @default Date.now */
  now?: () => number;
}

export interface PruneResult {
  requests: number;
  events: number;
  outbox: number;
  /** The anchor after this run: undefined when nothing was ever pruned. */
  anchor?: AuditMark;
}

/** A bound on one requester's pending requests, new one included, that `insertRequest` checks in the
 * insert's own transaction: atomic against every other create with a quota, in this process or in
 * another on the same database. */
export interface PendingQuota {
  /** Pending requests the requester may have. */
  count: number;
  /** Bytes (UTF-8) the stored documents of its pending requests may take. */
  bytes: number;
}

export interface InsertOptions {
  /** Refuse the create (`QuotaExceededError`, code `quota_exceeded`, nothing written) when the new
   * request is pending and its requester's pending requests with it would pass this quota. A replay
   * (the key exists) returns the first request unchecked, and a request created settled (auto) is
   * not counted. */
  quota?: PendingQuota;
}

export interface CountOptions {
  /** Stop counting at this many (a positive integer). */
  upTo?: number;
}

/** A take of a ticket (`Store.takeTicket`): a named once-only right to go on, such as the resume of
 * one parked turn, held under a lease. Tickets are not requests: no list, count, metric, quota or
 * audit event sees them. */
export interface TicketTake {
  /** Whose tickets the key names (the engine scopes them by requester, so one agent cannot take or
   * block another's). */
  scope: string;
  key: string;
  /** Who takes it: unique per take (the engine adds a random part to the taker's name). */
  holder: string;
  /** When, epoch ms. */
  now: number;
  /** How long the take holds without being finished or renewed; once it has passed, the holder is
   * presumed dead and the next take gets the ticket. */
  leaseMs: number;
}

export type TicketTakeResult =
  /** Taken by this take: a new ticket, one whose lease ran out unfinished (taken over), or one this
   * same holder held already (its lease renewed). */
  | { taken: true; expiresAt: number }
  /** Held by another holder whose lease has not run out, or finished (never taken again). */
  | { taken: false; holder: string; expiresAt: number; finishedAt?: number };

/** Marks a ticket done (`Store.finishTicket`). */
export interface TicketFinish {
  scope: string;
  key: string;
  /** The holder that took it. */
  holder: string;
  now: number;
}

export interface Store {
  readonly kind: string;
  /** Creates or upgrades the schema. Idempotent; safe when several processes start at once. */
  migrate(): Promise<void>;
  /** Inserts a request and its audit events in one transaction; when the requester already has a
   * request with `request.key` (keys are scoped per requester), writes nothing and returns that
   * request with `created: false`. `outbox` messages are written in the same transaction (only when the
   * request is created). With `options.quota`, the requester's pending quota is checked in the same
   * transaction (see `InsertOptions`). */
  insertRequest(
    request: ApprovalRequest,
    events: AuditDraft[],
    outbox?: OutboxDraft[],
    options?: InsertOptions,
  ): Promise<InsertResult>;
  getRequest(id: string): Promise<ApprovalRequest | undefined>;
  /** The request `requester` created with idempotency key `key` (keys are scoped per requester). */
  getRequestByKey(requester: string, key: string): Promise<ApprovalRequest | undefined>;
  listRequests(filter: ListFilter): Promise<Page<ApprovalRequest>>;
  /** The same listing as `listRequests`, as summaries read from columns (no document parsed). */
  listSummaries(filter: ListFilter): Promise<Page<RequestSummary>>;
  /** How many requests match the filter (`cursor`, `limit` and `order` are ignored): a COUNT. With
   * `upTo`, counting stops there (the answer is the smaller of the two), so a count for a screen
   * costs the same however large the backlog. */
  countRequests(filter: ListFilter, options?: CountOptions): Promise<number>;
  /** The pending requests of one requester: how many, and their stored documents' total size in
   * bytes (UTF-8), for quotas. */
  pendingUsage(requester: string): Promise<{ count: number; bytes: number }>;
  /** Every request's status, by id ascending, from after `after`: to check against the audit. */
  listStatuses(after: string | undefined, limit: number): Promise<StoredStatus[]>;
  /** Replaces the request with `next` only if its stored version is still `expectedVersion`, and
   * appends `events` and writes `outbox` messages in the same transaction (nothing when the version
   * did not match). `next.version` must be `expectedVersion + 1`. */
  transition(
    next: ApprovalRequest,
    expectedVersion: number,
    events: AuditDraft[],
    outbox?: OutboxDraft[],
  ): Promise<TransitionResult>;
  /** Writes outbox messages that no change of a request caused (reminders, tests); an id that exists
   * is skipped. Returns how many were written. */
  enqueueOutbox(messages: OutboxDraft[]): Promise<number>;
  /** Claims up to `limit` pending messages due at `now` whose lease is free or expired, oldest first,
   * leasing them to `owner` until `now + leaseMs` and counting the attempt. Several processes claiming
   * at once never get the same row (PostgreSQL: FOR UPDATE SKIP LOCKED). */
  claimOutbox(claim: OutboxClaim): Promise<OutboxMessage[]>;
  /** Settles a claimed message, only while `owner` still holds its lease (else returns false and
   * writes nothing), and appends `events` (the `notified` record of a delivery) in the same
   * transaction. */
  settleOutbox(
    id: string,
    owner: string,
    settlement: OutboxSettlement,
    events?: AuditDraft[],
  ): Promise<boolean>;
  /** Messages matching the filter, oldest first: the delivery log. */
  listOutbox(filter: OutboxFilter): Promise<OutboxMessage[]>;
  /** Appends events that change no request (notified, viewed, auto_executed). */
  appendAudit(events: AuditDraft[]): Promise<AuditEvent[]>;
  listAudit(filter: AuditFilter): Promise<AuditEvent[]>;
  /** The last event's seq and hash as recorded by the store (the chain head), to detect truncation. */
  auditHead(): Promise<{ seq: number; hash: string } | undefined>;
  /** The chain head together with whether and from which event the chain is keyed (HMAC). */
  auditChainState(): Promise<AuditChainState>;
  /** The audit key and checkpoint file this store was opened with, so verifying through the same
   * store needs no second copy of the key. Optional: a store without keyed chains leaves it out. */
  auditVerification?(): { key?: Uint8Array; checkpointFile?: string };
  /** Removes old terminal requests with their outbox rows and a prefix of the audit log. The cut
   * is the largest seq C such that every event at or before C belongs to no request, or to a
   * request that is terminal, was last changed before `options.before`, and has no event after C
   * (so pending requests, recent ones and any request still receiving events keep all their
   * events, and so does everything logged after their first event). Events up to C are deleted
   * with the requests they belong to, and the anchor (C and its hash, signed) is written in the
   * same transaction; work goes in batches of `batchEvents`, each one such transaction. Optional:
   * a store without it cannot be pruned. */
  prune?(options: PruneOptions): Promise<PruneResult>;
  /** The prune anchor and the verified mark (src/audit/verify.ts). Optional: none when absent. */
  auditMarks?(): Promise<AuditMarks>;
  /** Records where `airlock audit verify` got to, so the next run resumes there. */
  saveVerifiedMark?(mark: AuditMark): Promise<void>;
  /** Up to `limit` events after seq `after`, in seq order: the whole log read page by page for
   * verification, which a store may serve faster than `listAudit`. Optional: `listAudit` instead. */
  readAuditPage?(after: number, limit: number): Promise<AuditPageEvent[]>;
  /** Like `listStatuses`, each request with its first and last status event. Optional: without it,
   * verification holds every request's status in memory while it reads the log. */
  listStatusEvidence?(after: string | undefined, limit: number): Promise<StatusEvidence[]>;
  /** The earliest deadline of a pending request, epoch ms. */
  nextDeadline(): Promise<number | undefined>;
  /** Pending requests whose deadline is at or before `now`, earliest first. */
  dueRequests(now: number, limit: number): Promise<ApprovalRequest[]>;
  /** Approved requests whose execution is `claimed` with a lease that ended at or before `now`,
   * earliest lease first (their process died or hangs: core/execution.ts). */
  staleExecutions(now: number, limit: number): Promise<ApprovalRequest[]>;
  /** The earliest lease end among claimed executions, if any. */
  nextLeaseEnd(): Promise<number | undefined>;
  outcomes(since: number): Promise<OutcomeRow[]>;
  /** The pre-aggregated counters (outcome-stats.ts) of requests settled in the hour of `since` or
   * later. Optional: the engine computes metrics from `outcomes` without it. */
  outcomeStats?(since: number): Promise<OutcomeStat[]>;
  countPending(): Promise<number>;
  /** Stores a learned trust rule (src/core/trust-rule.ts) and appends `events` in the same
   * transaction; when an active rule for the same action and shape hash exists, writes nothing and
   * returns that rule with `created: false`. Optional: a store without it holds no learned rules. */
  insertTrustRule?(rule: TrustRule, events: AuditDraft[]): Promise<TrustRuleInsert>;
  /** The trust rules, oldest first; revoked ones only with `includeRevoked`. */
  listTrustRules?(options?: { includeRevoked?: boolean }): Promise<TrustRule[]>;
  /** Revokes an active rule (`revokedBy`, `revokedAt`) and appends `events` in the same transaction;
   * an unknown or already revoked rule is left as it is, with nothing written. */
  revokeTrustRule?(
    id: string,
    by: string,
    at: number,
    events: AuditDraft[],
  ): Promise<TrustRuleRevoke>;
  /** Takes the ticket `take.key` of `take.scope` for `take.holder` in one atomic step (one statement
   * or transaction, under any concurrency, across processes): inserted when it does not exist,
   * taken over when its lease ran out unfinished, renewed when `holder` holds it; otherwise left as
   * it is, and the answer says who holds it. Optional: a store without it keeps no tickets (the
   * adapters' resumes then need `force`). */
  takeTicket?(take: TicketTake): Promise<TicketTakeResult>;
  /** Marks the ticket finished, so no take gets it again, if `holder` holds it (or finished it:
   * a repeat answers true again). False when another holder took it over, or there is no such
   * ticket. */
  finishTicket?(finish: TicketFinish): Promise<boolean>;
  /** Deletes the tickets finished, or expired unfinished, before `before` (epoch ms). Returns how
   * many. A deleted finished ticket can be taken again, so `before` should be well in the past. */
  pruneTickets?(before: number): Promise<number>;
  /** Calls `listener` soon after another process (or connection) commits a change. Returns an
   * unsubscribe function. Changes made through this same store object need no signal: the engine
   * knows about them. */
  onExternalChange(listener: () => void): () => void;
  close(): Promise<void>;
}
