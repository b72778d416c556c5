// Rows as both SQL stores read them, turned back into the engine's types in one place, so the
// stores cannot drift apart in how they read requests, audit events and outcomes.
import type { ApprovalRequest, AuditEvent } from "../core/schemas.js";
import type { OutcomeRow } from "./store.js";

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

export function parseDoc(row: DocRow): ApprovalRequest {
  return JSON.parse(row.doc) as ApprovalRequest;
}

export function auditOf(r: AuditRow): AuditEvent {
  const e: AuditEvent = {
    seq: Number(r.seq),
    type: r.type as AuditEvent["type"],
    actor: r.actor,
    at: r.at,
    data: parseData(r.data),
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

/** A row edited by hand may hold broken JSON: keep it visible so verification reports that row. */
function parseData(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : { unparsable: text };
  } catch {
    return { unparsable: text };
  }
}
