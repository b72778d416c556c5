// Rows as both SQL stores read them, turned back into the engine's types in one place, so the
// stores cannot drift apart in how they read requests, audit events and outcomes.
import { parseStoredObject } from "../core/hash.js";
import type { ApprovalRequest, AuditEvent } from "../core/schemas.js";
import type { AuditPageEvent, OutcomeRow, RequestSummary } from "../core/store.js";
import { docBytes } from "./paging.js";

/** A request is kept whole as JSON text in `doc`; the other columns exist to be queried. */
export interface DocRow {
  doc: string;
}

export interface AuditRow {
  /** PostgreSQL's bigint arrives as text. */
  seq: number | string;
  request_id: string | null;
  type: string;
  actor: string;
  at: number;
  data: string;
  prev_hash: string;
  hash: string;
}

export interface OutcomeSqlRow {
  action: string;
  status: string;
  method: string | null;
  created_at: number;
  decided_at: number;
}

/** The columns a listing reads (see RequestSummary), as both SQL stores name them. */
export const SUMMARY_COLUMNS =
  "id, key, action, title, status, risk, confidence, level, requester, approvers, quorum, deadline, created_at, updated_at, correlation_id, revision_of, item_count, outcome, method, reviewer, decided_at, execution";

export interface SummaryRow {
  id: string;
  key: string | null;
  action: string;
  title: string;
  status: string;
  risk: string | null;
  confidence: number | null;
  level: string;
  requester: string;
  /** JSON text in SQLite, an array in PostgreSQL. */
  approvers: string | string[];
  quorum: number;
  deadline: number | null;
  created_at: number;
  updated_at: number;
  correlation_id: string;
  revision_of: string | null;
  item_count: number;
  outcome: string | null;
  method: string | null;
  reviewer: string | null;
  decided_at: number | null;
  execution?: string | null;
}

export function summaryFromRow(r: SummaryRow): RequestSummary {
  const s: RequestSummary = {
    id: r.id,
    action: r.action,
    title: r.title,
    status: r.status as RequestSummary["status"],
    level: r.level as RequestSummary["level"],
    requester: r.requester,
    approvers: Array.isArray(r.approvers) ? r.approvers : (JSON.parse(r.approvers) as string[]),
    quorum: r.quorum,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    correlationId: r.correlation_id,
    itemCount: r.item_count,
  };
  if (r.key !== null) s.key = r.key;
  if (r.risk !== null) s.risk = r.risk as RequestSummary["risk"];
  if (r.confidence !== null) s.confidence = r.confidence;
  if (r.deadline !== null) s.deadline = r.deadline;
  if (r.execution !== undefined && r.execution !== null) {
    s.execution = r.execution as NonNullable<RequestSummary["execution"]>;
  }
  if (r.revision_of !== null) s.revisionOf = r.revision_of;
  if (r.status !== "pending" && r.outcome !== null && r.method !== null && r.decided_at !== null) {
    s.decision = {
      outcome: r.outcome as NonNullable<RequestSummary["decision"]>["outcome"],
      method: r.method as NonNullable<RequestSummary["decision"]>["method"],
      reviewer: r.reviewer ?? "",
      decidedAt: r.decided_at,
    };
  }
  return s;
}

/** The values of a request's columns, as both SQL stores write them (approvers as given). */
export function columnsOf(r: ApprovalRequest) {
  const doc = JSON.stringify(r);
  const terminal = r.status !== "pending" ? r.decision : undefined;
  return {
    id: r.id,
    key: r.key ?? null,
    action: r.action,
    title: r.title,
    status: r.status,
    risk: r.risk ?? null,
    confidence: r.confidence ?? null,
    level: r.level,
    requester: r.requester,
    approvers: r.approvers,
    quorum: r.quorum,
    // Only a pending request has a live deadline: a terminal one must never be swept.
    deadline: r.status === "pending" ? (r.deadline ?? null) : null,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    correlation_id: r.correlationId,
    revision_of: r.revisionOf ?? null,
    item_count: r.items.length,
    outcome: terminal?.outcome ?? null,
    method: r.decision?.method ?? null,
    reviewer: terminal?.reviewer ?? null,
    decided_at: r.decision?.decidedAt ?? null,
    // Claimed and unknown executions are found by these (the lease sweeper, the metrics, listings).
    execution: r.execution?.state ?? null,
    lease_until: r.execution?.state === "claimed" ? (r.execution.leaseUntil ?? null) : null,
    version: r.version,
    doc_bytes: docBytes(doc),
    doc,
  };
}

/** A stored document's status, or undefined when the document is not readable JSON. */
export function docStatusOf(doc: string): string | undefined {
  try {
    const v = JSON.parse(doc) as { status?: unknown };
    return typeof v?.status === "string" ? v.status : undefined;
  } catch {
    return undefined;
  }
}

export function parseDoc(row: DocRow): ApprovalRequest {
  return JSON.parse(row.doc) as ApprovalRequest;
}

export function auditOf(r: AuditRow): AuditEvent {
  return eventOfRow(r, { data: parseStoredObject(r.data) });
}

/** An audit row read as an array (seq, request_id, type, actor, at, data, prev_hash, hash): cheaper
 * to read than an object when the whole log is read for verification. */
export type AuditPageRow = [
  number | string,
  string | null,
  string,
  string,
  number,
  string,
  string,
  string,
];

/** An audit row as `Store.readAuditPage` gives it: its data left as the stored text (a BLOB edited
 * in by hand read as its UTF-8 text, as JSON.parse would read it). */
export function pageEventOf(r: AuditPageRow): AuditPageEvent {
  const data: unknown = r[5];
  return eventOfRow(
    {
      seq: r[0],
      request_id: r[1],
      type: r[2],
      actor: r[3],
      at: r[4],
      data: r[5],
      prev_hash: r[6],
      hash: r[7],
    },
    {
      dataJson:
        typeof data === "string"
          ? data
          : Buffer.isBuffer(data)
            ? data.toString("utf8")
            : String(data),
    },
  );
}

function eventOfRow<D extends object>(r: AuditRow, data: D): Omit<AuditEvent, "data"> & D {
  const e: Omit<AuditEvent, "data"> & D = {
    seq: Number(r.seq),
    type: r.type as AuditEvent["type"],
    actor: r.actor,
    at: r.at,
    ...data,
    prevHash: r.prev_hash,
    hash: r.hash,
  };
  if (r.request_id !== null) e.requestId = r.request_id;
  return e;
}

export function outcomeOf(r: OutcomeSqlRow): OutcomeRow {
  return {
    action: r.action,
    status: r.status as OutcomeRow["status"],
    method: r.method ?? undefined,
    createdAt: r.created_at,
    decidedAt: r.decided_at,
  };
}
