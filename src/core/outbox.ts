// The durable outbox: every notification a change causes is a row written in the same transaction as
// the change (insertRequest / transition take the drafts), then delivered by a dispatcher that claims
// due rows with a lease, retries with backoff, and settles each row once. One row is one message to one
// target (a configured channel), so a retry never re-sends to a target that already has it.

/** What a message is about. `reminder` is a nudge before a pending request's deadline; the others
 * follow the request's audit events of the same name. */
export const OUTBOX_TOPICS = [
  "created",
  "escalated",
  "decided",
  "timed_out",
  "cancelled",
  "reminder",
  /** An approved action not known to have run: its claim's lease ended with no outcome. */
  "execution_unknown",
  "test",
] as const;
export type OutboxTopic = (typeof OUTBOX_TOPICS)[number];

/** The audit event types that cause a message, and the topic of that message. Every other event
 * (notified, viewed, decision_recorded, claimed, executed, execution_failed, execution_resolved,
 * auto_executed) notifies nobody. */
export const TOPIC_OF_EVENT: Readonly<Record<string, OutboxTopic>> = {
  created: "created",
  escalated: "escalated",
  decided: "decided",
  timed_out: "timed_out",
  cancelled: "cancelled",
  execution_unknown: "execution_unknown",
};

/** `pending`: to deliver (again) from `availableAt`; `delivered`: done; `failed`: gave up after the
 * last attempt or on an answer that retrying cannot change; `gone`: the target said it no longer
 * exists (a webhook's 410): the target is disabled and later messages to it are settled `gone` too. */
export const OUTBOX_STATUSES = ["pending", "delivered", "failed", "gone"] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];

export interface OutboxDraft {
  /** Unique; the delivery's idempotency id (a webhook's `webhook-id`). Enqueueing an id that exists
   * writes nothing. */
  id: string;
  /** The configured channel's name. */
  target: string;
  topic: OutboxTopic;
  requestId?: string;
  /** What the message says, fixed when it was written (the event that caused it). JSON. */
  payload: Record<string, unknown>;
  /** Not before this instant, epoch ms. @default the time it is written */
  availableAt?: number;
}

export interface OutboxMessage {
  id: string;
  target: string;
  topic: OutboxTopic;
  requestId?: string;
  payload: Record<string, unknown>;
  status: OutboxStatus;
  /** Delivery attempts made so far (the one in hand included once claimed). */
  attempts: number;
  availableAt: number;
  createdAt: number;
  updatedAt: number;
  /** Who holds the row and until when (a claim); a lease past its time may be claimed again. */
  leaseOwner?: string;
  leaseUntil?: number;
  lastError?: string;
  /** What the target answered on success, for later messages about the same request (Slack's
   * channel and ts, to update the message). JSON. */
  receipt?: Record<string, unknown>;
  deliveredAt?: number;
}

export interface OutboxClaim {
  now: number;
  limit: number;
  /** How long the claim holds: a dispatcher that dies mid-delivery loses the row after this. */
  leaseMs: number;
  /** Who claims (a process-unique id); settling needs the same owner. */
  owner: string;
}

export type OutboxSettlement =
  | { status: "delivered"; receipt?: Record<string, unknown> }
  | {
      status: "pending";
      availableAt: number;
      error: string;
      /** This claim was no delivery attempt (the message waited for another): the attempt the
       * claim counted is given back. */
      notAnAttempt?: boolean;
    }
  | { status: "failed" | "gone"; error: string };

export interface OutboxFilter {
  requestId?: string;
  target?: string;
  status?: OutboxStatus;
  topic?: OutboxTopic;
  /** Rows created after this row id (ids sort by creation), for paging. */
  after?: string;
  /** @default 100, at most 1000 */
  limit?: number;
}
