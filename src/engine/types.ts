// What the engine offers (`Airlock`) and how it is configured: the types, apart from the code
// that composes the engine (engine.ts), so both read in one sitting.
import type { Logger } from "pino";
import type { ZodType } from "zod";
import type { RedactionOptions, Redactor } from "../audit/redact.js";
import type { VerifyOptions, VerifyResult } from "../audit/verify.js";
import type { Actor } from "../core/authority.js";
import type { Clock } from "../core/clock.js";
import type { ExecutionOutcome, ExecutionResolution } from "../core/execution.js";
import type { Metrics } from "../core/metrics.js";
import type { OutboxFilter, OutboxMessage } from "../core/outbox.js";
import type { Policy } from "../core/policy.js";
import type {
  ApprovalRequest,
  AuditEvent,
  Channel,
  DecisionInput,
  RecordInput,
  RequestInput,
} from "../core/schemas.js";
import type {
  CountOptions,
  ListFilter,
  Page,
  PendingQuota,
  RequestSummary,
  Store,
} from "../core/store.js";
import type { EventsOptions } from "./event-stream.js";
import type { OutboxRouter } from "./outbox-drafts.js";
import type { WaitOptions } from "./waiters.js";

export type { EventsOptions } from "./event-stream.js";
export type { OutboxRouter } from "./outbox-drafts.js";
export type { WaitOptions } from "./waiters.js";

export interface AirlockOptions {
  store: Store;
  /** Decides the level before a human is asked; see `src/policy`. */
  policy?: Policy;
  /** Zod schemas per action: request args and edited args must satisfy them. */
  schemas?: Record<string, ZodType>;
  logger?: Logger;
  clock?: Clock;
  /** Key names redacted besides the built-in rules, wherever this engine redacts (the audit log's
   * data, and through `airlock.redaction` the tools, adapters and channels beside it). */
  redaction?: RedactionOptions;
  /** Run the timeout sweeper in this process. It listens to the store's change signal from the start
   * (so deadlines set by other processes are enforced at once), which keeps the process alive until
   * `close()`. @default true */
  sweeper?: boolean;
  /** The longest the sweeper sleeps, so other processes' deadlines are found. @default 30000 */
  sweepMaxSleepMs?: number;
  /** Names the channels to notify of each change (a gate opened, escalated, decided, timed out,
   * cancelled): each named channel gets one outbox message, written in the same transaction as the
   * change and delivered by a dispatcher (`createDispatcher`). `airlock serve --config` builds it from
   * the config's `routes`. @default none: no messages */
  notifiers?: OutboxRouter;
  /** Called after a commit that wrote outbox messages, to wake a dispatcher in this process. */
  onOutbox?: () => void;
}

export interface CancelOptions {
  /** Who cancels. @default the request's requester */
  by?: string;
  reason?: string;
  /** How the cancellation arrived, recorded on the decision. @default "api" */
  channel?: Channel;
  /** Cancel as a reviewer rather than as the requester or an admin: `by` (or one of these groups)
   * must be able to decide the request, and `reason` is required. */
  asReviewer?: { groups?: string[] };
}

export interface RequestOptions {
  /** Refuse the create (code `quota_exceeded`, nothing written) when the request would be pending
   * and its requester's pending requests, with it, would pass this quota; checked by the store in
   * the insert's own transaction, so it holds under any concurrency, across processes. A replay of
   * an existing key returns that request unchecked. The server passes its `limits` here. */
  quota?: PendingQuota;
}

export interface Airlock {
  request(input: RequestInput, options?: RequestOptions): Promise<ApprovalRequest>;
  get(id: string): Promise<ApprovalRequest>;
  /** The request created with idempotency key `key` by `options.requester` (keys are scoped per
   * requester; @default "anonymous", the requester of a request that names none), or undefined. */
  getByKey(key: string, options?: { requester?: string }): Promise<ApprovalRequest | undefined>;
  /** Requests matching `filter`, newest first unless `filter.order` says `oldest` or `deadline`. */
  list(filter?: ListFilter): Promise<Page<ApprovalRequest>>;
  /** The same listing as `list`, as summaries read from the store's columns: its cost does not depend
   * on the size of args, preview or items. */
  listSummaries(filter?: ListFilter): Promise<Page<RequestSummary>>;
  /** How many requests match `filter` (a COUNT; `cursor`, `limit` and `order` are ignored). */
  /** How many requests match; with `upTo`, counting stops there (`upTo` means "that many or more"). */
  count(filter?: ListFilter, options?: CountOptions): Promise<number>;
  /** One requester's pending requests: how many, and their stored size in bytes (for quotas). */
  pendingUsage(requester: string): Promise<{ count: number; bytes: number }>;
  /** The audit chain's head (last event's seq and hash); undefined while the log is empty. */
  auditHead(): Promise<{ seq: number; hash: string } | undefined>;
  waitFor(id: string, options?: WaitOptions): Promise<ApprovalRequest>;
  /** Decides as trusted in-process code: `decision.reviewer` is believed. Doors use `decideAs`. */
  decide(id: string, decision: DecisionInput): Promise<ApprovalRequest>;
  /** Decides as a door's proven caller (authority.ts): the reviewer, groups and channel come from the
   * actor; an agent's credential, the requester and anyone not among the approvers are refused
   * (code `forbidden`) inside the decision's compare-and-set. */
  decideAs(
    actor: Actor,
    id: string,
    decision: Omit<DecisionInput, "reviewer" | "groups" | "channel">,
  ): Promise<ApprovalRequest>;
  cancel(id: string, options?: CancelOptions): Promise<ApprovalRequest>;
  /** Claims an approved request for execution, exactly once (compare-and-set): call it right before
   * running the approved action, then report what happened with `finishExecution`. A second claim
   * fails with code `conflict`, so a double resume or a replayed job cannot run the action twice. A
   * claim with no outcome by the end of its lease (default 5 minutes; `renewExecution` extends it)
   * becomes `unknown`; see core/execution.ts. `runApproved` does all of this. */
  claimExecution(id: string, options?: { by?: string; leaseMs?: number }): Promise<ApprovalRequest>;
  /** Extends the lease of the claim `attempt` while its action still runs. */
  renewExecution(
    id: string,
    input: { attempt: number; leaseMs?: number },
  ): Promise<ApprovalRequest>;
  /** Records what the claimed action did, after it returned (`ok: true`, with a digest of its
   * result) or threw (`ok: false`, with the error): `executed` or `execution_failed` in the log. */
  finishExecution(
    id: string,
    outcome: ExecutionOutcome,
    options?: { by?: string },
  ): Promise<ApprovalRequest>;
  /** A person settles an execution that is not known to have run, or that failed: `retry` (the
   * next claim runs it again), `done` (it did happen), `abandon`. The same people who may decide the
   * request may do it (authority.ts `resolutionRefusal`), else code `forbidden`. */
  resolveExecution(
    actor: Actor,
    id: string,
    input: { resolution: ExecutionResolution; comment?: string },
  ): Promise<ApprovalRequest>;
  events(options?: EventsOptions): AsyncIterable<AuditEvent>;
  audit(filter?: { requestId?: string; after?: number; limit?: number }): Promise<AuditEvent[]>;
  /** The outbox's messages (the delivery log), oldest first. */
  outbox(filter?: OutboxFilter): Promise<OutboxMessage[]>;
  /** Appends an event that changes no request (`notified`, which also carries an agent's progress,
   * `viewed`, `auto_executed`); data is redacted. Any other type is refused (code `invalid_input`):
   * decisions enter the audit log only through the state machine. `auto_executed` naming a request
   * needs that request approved (else code `conflict`). */
  record(event: RecordInput): Promise<AuditEvent>;
  /** Checks the audit chain up to the head read first (a snapshot, safe beside other writers) and
   * each request's status against its audit events; see `verifyAuditLog` for the options. */
  verifyAudit(options?: VerifyOptions): Promise<VerifyResult>;
  metrics(options?: { sinceMs?: number }): Promise<Metrics>;
  registerSchema(action: string, schema: ZodType): void;
  /** The schema registered for an action, which its args and edited args must satisfy. */
  schemaFor(action: string): ZodType | undefined;
  /** Times out every request that is due now; the sweeper calls it by itself. */
  sweep(): Promise<number>;
  readonly logger: Logger;
  /** This engine's redaction (the built-in rules plus `options.redaction.keys`), for what is shown
   * or recorded beside it. */
  readonly redaction: Redactor;
  /** Stops the sweeper, rejects pending waits with code `closed`, and closes the store. */
  close(): Promise<void>;
}
