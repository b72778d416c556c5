// The durable outbox as every store checks, writes and reads it: one place for what a draft, a claim
// and a settlement must hold and for how a row becomes an OutboxMessage, so the three stores accept,
// refuse and answer alike.
import { InvalidInputError } from "../core/errors.js";
import { parseStoredObject } from "../core/hash.js";
import {
  OUTBOX_STATUSES,
  OUTBOX_TOPICS,
  type OutboxClaim,
  type OutboxDraft,
  type OutboxFilter,
  type OutboxMessage,
  type OutboxSettlement,
  type OutboxStatus,
  type OutboxTopic,
} from "../core/outbox.js";
import { columnText } from "./storable.js";

/** The most rows one `listOutbox` returns, and how many when none is asked for. */
export const MAX_OUTBOX_PAGE = 1000;
export const DEFAULT_OUTBOX_PAGE = 100;

/** A `listOutbox` page size within 1..MAX_OUTBOX_PAGE. */
export function outboxLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return DEFAULT_OUTBOX_PAGE;
  return Math.min(Math.max(Math.trunc(limit), 1), MAX_OUTBOX_PAGE);
}

/** Refuses drafts a store could not write as given, before any transaction opens. */
export function checkOutboxDrafts(drafts: readonly OutboxDraft[]): void {
  for (const d of drafts) {
    if (typeof d.id !== "string" || d.id === "")
      throw bad("outbox id must be a non-empty string", "id");
    columnText(d.id, "id");
    if (typeof d.target !== "string" || d.target === "") {
      throw bad("outbox `target` must be a non-empty string", "target");
    }
    columnText(d.target, "target");
    topicOf(d.topic);
    if (d.requestId !== undefined && typeof d.requestId !== "string") {
      throw bad("outbox `requestId` must be a string when given", "requestId");
    }
    columnText(d.requestId, "requestId");
    jsonObject(d.payload, "payload");
    if (d.availableAt !== undefined) instant(d.availableAt, "availableAt");
  }
}

/** Refuses a claim whose numbers or owner make no sense. */
export function checkClaim(c: OutboxClaim): void {
  instant(c.now, "now");
  if (!Number.isInteger(c.limit) || c.limit < 1) {
    throw bad(
      `Expected \`limit\` to be an integer from 1 and up, got \`${String(c.limit)}\``,
      "limit",
    );
  }
  if (!Number.isFinite(c.leaseMs) || c.leaseMs <= 0) {
    throw bad(
      `Expected \`leaseMs\` to be a number above 0, got \`${String(c.leaseMs)}\``,
      "leaseMs",
    );
  }
  owner(c.owner);
}

/** Refuses a settlement a store could not write as given. */
export function checkSettlement(id: string, who: string, s: OutboxSettlement): void {
  columnText(id, "id");
  owner(who);
  if (s.status === "delivered") {
    if (s.receipt !== undefined) jsonObject(s.receipt, "receipt");
    return;
  }
  if (s.status !== "pending" && s.status !== "failed" && s.status !== "gone") {
    throw bad(
      `Expected settlement \`status\` to be one of delivered, pending, failed, gone, got ${JSON.stringify((s as { status: unknown }).status)}`,
      "status",
    );
  }
  if (typeof s.error !== "string") throw bad("a settlement's `error` must be a string", "error");
  columnText(s.error, "error");
  if (s.status === "pending") instant(s.availableAt, "availableAt");
}

/** Refuses filter values that name no status or topic (a typo would otherwise list nothing), and
 * text no column can hold (PostgreSQL would fail on a NUL instead of finding nothing). */
export function checkOutboxFilter(f: OutboxFilter): void {
  columnText(f.requestId, "requestId");
  columnText(f.target, "target");
  columnText(f.after, "after");
  if (f.status !== undefined && !OUTBOX_STATUSES.includes(f.status)) {
    throw bad(
      `Expected \`status\` to be one of ${OUTBOX_STATUSES.join(", ")}, got ${JSON.stringify(f.status)}`,
      "status",
    );
  }
  if (f.topic !== undefined) topicOf(f.topic);
}

/** The columns a draft is written with, at `now` unless it names its own `availableAt`. */
export function draftColumns(d: OutboxDraft, now: number) {
  return {
    id: d.id,
    target: d.target,
    topic: d.topic,
    request_id: d.requestId ?? null,
    payload: JSON.stringify(d.payload),
    available_at: d.availableAt ?? now,
    created_at: now,
  };
}

/** The settlement as the columns it changes (the lease is always cleared). */
export function settlementColumns(s: OutboxSettlement, now: number) {
  switch (s.status) {
    case "delivered":
      return {
        status: "delivered" as OutboxStatus,
        available_at: null,
        last_error: null,
        receipt: s.receipt === undefined ? null : JSON.stringify(s.receipt),
        delivered_at: now,
        attempts_back: 0,
      };
    case "pending":
      return {
        status: "pending" as OutboxStatus,
        available_at: s.availableAt,
        last_error: s.error,
        receipt: null,
        delivered_at: null,
        attempts_back: s.notAnAttempt ? 1 : 0,
      };
    default:
      return {
        status: s.status,
        available_at: null,
        last_error: s.error,
        receipt: null,
        delivered_at: null,
        attempts_back: 0,
      };
  }
}

/** An outbox row as both SQL stores read it. */
export interface OutboxRow {
  id: string;
  /** PostgreSQL's bigint arrives as text. */
  n: number | string;
  target: string;
  topic: string;
  request_id: string | null;
  payload: string;
  status: string;
  attempts: number;
  available_at: number;
  created_at: number;
  updated_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  last_error: string | null;
  receipt: string | null;
  delivered_at: number | null;
}

export function outboxOf(r: OutboxRow): OutboxMessage {
  const m: OutboxMessage = {
    id: r.id,
    target: r.target,
    topic: r.topic as OutboxTopic,
    payload: parseStoredObject(r.payload),
    status: r.status as OutboxStatus,
    attempts: Number(r.attempts),
    availableAt: r.available_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
  if (r.request_id !== null) m.requestId = r.request_id;
  if (r.lease_owner !== null) m.leaseOwner = r.lease_owner;
  if (r.lease_until !== null) m.leaseUntil = r.lease_until;
  if (r.last_error !== null) m.lastError = r.last_error;
  if (r.receipt !== null) m.receipt = parseStoredObject(r.receipt);
  if (r.delivered_at !== null) m.deliveredAt = r.delivered_at;
  return m;
}

/** Claimed rows oldest first (an UPDATE ... RETURNING keeps no order). */
export function byDueOrder(a: OutboxRow, b: OutboxRow): number {
  return a.available_at - b.available_at || Number(a.n) - Number(b.n);
}

function topicOf(topic: unknown): OutboxTopic {
  if (!OUTBOX_TOPICS.includes(topic as OutboxTopic)) {
    throw bad(
      `Expected outbox \`topic\` to be one of ${OUTBOX_TOPICS.join(", ")}, got ${JSON.stringify(topic)}`,
      "topic",
    );
  }
  return topic as OutboxTopic;
}

function owner(who: unknown): void {
  if (typeof who !== "string" || who === "") {
    throw bad("the lease `owner` must be a non-empty string", "owner");
  }
  columnText(who, "owner");
}

function instant(v: unknown, field: string): void {
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw bad(`Expected \`${field}\` to be a time in epoch ms, got \`${String(v)}\``, field);
  }
}

function jsonObject(v: unknown, field: string): void {
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw bad(`Expected outbox \`${field}\` to be a JSON object`, field);
  }
}

function bad(message: string, field: string): InvalidInputError {
  return new InvalidInputError(message, field);
}
