// What a delivery channel (Slack, email, webhook) is to the outbox dispatcher and to the server: a
// driver that delivers one outbox message to its target, and, for channels people answer through,
// inbound routes or listeners that turn a click, a link or a reply into `airlock.decide()`, through
// the same state machine and identity checks as the inbox.
import type { Hono } from "hono";
import type { Logger } from "pino";
import type { Redactor } from "../audit/redact.js";
import type { OutboxMessage } from "../core/outbox.js";
import type { ApprovalRequest } from "../core/schemas.js";
import type { Airlock } from "../engine/types.js";

export type ChannelType = "slack" | "email" | "webhook";

/** What one delivery attempt came to. `retry: false` settles the message as failed at once (an answer
 * retrying cannot change); `gone` disables the target (a webhook receiver's 410). */
export type DeliveryResult =
  | { ok: true; receipt?: Record<string, unknown>; detail?: string }
  | { ok: false; retry: boolean; error: string; retryAfterMs?: number; gone?: boolean };

export interface DeliveryContext {
  /** The request as it stands now (undefined for a `test` message or a request that is gone). */
  request: ApprovalRequest | undefined;
  /** Messages already delivered to this same target about the same request, oldest first, with their
   * receipts (e.g. Slack's channel and ts, so a decision updates the message posted on creation). */
  previous: OutboxMessage[];
  /** This server's absolute base URL (no trailing slash), for links. */
  publicUrl: string;
  now(): number;
  /** Aborted when the dispatcher stops or the attempt's time is up. */
  signal: AbortSignal;
  /** The engine's redaction (`airlock.redaction`), which what leaves passes; the built-in rules
   * when absent (a test message). */
  redactor?: Redactor;
}

/** A person as Airlock knows them: the name decisions are recorded under and the groups matched
 * against a request's approvers. */
export interface Reviewer {
  name: string;
  groups: string[];
}

/** Maps the people of the configuration (`identities`) between channels and Airlock. */
export interface IdentityDirectory {
  bySlackUser(userId: string): Reviewer | undefined;
  /** By email address, compared case-insensitively. */
  byEmail(address: string): Reviewer | undefined;
  /** The configured people who may decide `request` (its approvers, groups expanded; everyone
   * configured when it names none), the requester left out. */
  reviewersFor(request: ApprovalRequest): Array<Reviewer & { email?: string; slack?: string }>;
}

export interface InboundDeps {
  airlock: Airlock;
  identities: IdentityDirectory;
  logger: Logger;
  /** This server's absolute base URL (no trailing slash). */
  publicUrl: string;
  now(): number;
  /** Records a refused inbound attempt (a forged signature, an expired link, a sender who is not an
   * approver) in the audit log, as a `notified` event with `data.refused`; nothing is decided. */
  refuse(refusal: {
    channel: ChannelType;
    target: string;
    reason: string;
    requestId?: string;
    actor?: string;
  }): Promise<void>;
}

export interface ChannelDriver {
  /** The configured channel's name (the outbox target). */
  readonly name: string;
  readonly type: ChannelType;
  deliver(message: OutboxMessage, ctx: DeliveryContext): Promise<DeliveryResult>;
  /** HTTP routes people's answers arrive on (Slack interactions and events, email link pages, an
   * inbound-mail webhook), mounted by the server at `/channels/<name>` outside bearer auth: each
   * route authenticates its caller itself (a signature, a signed token). */
  routes?(deps: InboundDeps): Hono;
  /** Starts listeners of its own (an SMTP server for replies, a Socket Mode connection). */
  start?(deps: InboundDeps): Promise<void>;
  close?(): Promise<void>;
}
