// The one storage port. Every store (in-memory, SQLite, PostgreSQL) implements it and passes the same
// contract suite in test/store-contract. The engine owns the rules; a store owns atomicity: each
// method that writes does all its rows in one transaction, and `transition` is a compare-and-set on
// the request's `version`, so racing deciders and the timeout sweeper settle in the database.
import type { ApprovalRequest, AuditDraft, AuditEvent, Status } from "../core/schemas.js";

export interface ListFilter {
  status?: Status | Status[];
  action?: string;
  /** Requests this user or any of these groups may decide (matched against `approvers`; a request
   * with no approvers is open to everyone). */
  approver?: string | string[];
  requester?: string;
  /** Return requests older than this id (the `nextCursor` of the previous page). */
  cursor?: string;
  limit?: number;
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
}

export interface TransitionResult {
  /** False when `expectedVersion` no longer matched: someone else changed the request first. */
  ok: boolean;
  request: ApprovalRequest | undefined;
  events: AuditEvent[];
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

export interface Store {
  readonly kind: string;
  /** Creates or upgrades the schema. Idempotent; safe when several processes start at once. */
  migrate(): Promise<void>;
  /** Inserts a request and its audit events in one transaction; when `request.key` already exists,
   * writes nothing and returns the existing request with `created: false`. */
  insertRequest(request: ApprovalRequest, events: AuditDraft[]): Promise<InsertResult>;
  getRequest(id: string): Promise<ApprovalRequest | undefined>;
  listRequests(filter: ListFilter): Promise<Page<ApprovalRequest>>;
  /** Replaces the request with `next` only if its stored version is still `expectedVersion`, and
   * appends `events` in the same transaction. `next.version` must be `expectedVersion + 1`. */
  transition(
    next: ApprovalRequest,
    expectedVersion: number,
    events: AuditDraft[],
  ): Promise<TransitionResult>;
  /** Appends events that change no request (notified, viewed, auto_executed). */
  appendAudit(events: AuditDraft[]): Promise<AuditEvent[]>;
  listAudit(filter: AuditFilter): Promise<AuditEvent[]>;
  /** The last event's seq and hash as recorded by the store (the chain head), to detect truncation. */
  auditHead(): Promise<{ seq: number; hash: string } | undefined>;
  /** The earliest deadline of a pending request, epoch ms. */
  nextDeadline(): Promise<number | undefined>;
  /** Pending requests whose deadline is at or before `now`, earliest first. */
  dueRequests(now: number, limit: number): Promise<ApprovalRequest[]>;
  outcomes(since: number): Promise<OutcomeRow[]>;
  countPending(): Promise<number>;
  /** Calls `listener` soon after another process (or connection) commits a change. Returns an
   * unsubscribe function. Changes made through this same store object need no signal: the engine
   * knows about them. */
  onExternalChange(listener: () => void): () => void;
  close(): Promise<void>;
}
