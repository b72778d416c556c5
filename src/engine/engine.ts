// The engine: the one place where gates are created, decided, cancelled, timed out and waited on.
// It holds no request state of its own; the store is the system of record, and every transition is
// a compare-and-set there, so several engines (threads, processes, machines) can share one store.
import pino, { type Logger } from "pino";
import type { ZodType } from "zod";
import { redact } from "../audit/redact.js";
import { type VerifyOptions, type VerifyResult, verifyAuditLog } from "../audit/verify.js";
import { type Clock, systemClock } from "../core/clock.js";
import { AirlockError, ConflictError, NotFoundError, TimeoutError } from "../core/errors.js";
import { canonicalJson, sha256 } from "../core/hash.js";
import { normalizeIdentity, sameIdentity } from "../core/identity.js";
import { computeMetrics, type Metrics } from "../core/metrics.js";
import { newRequest } from "../core/new-request.js";
import type { Policy } from "../core/policy.js";
import {
  type ApprovalRequest,
  type AuditDraft,
  type AuditEvent,
  type Channel,
  type DecisionInput,
  decisionInputSchema,
  type EventType,
  type Level,
  type ParsedRequestInput,
  type RecordInput,
  type RequestInput,
  recordInputSchema,
  requestInputSchema,
} from "../core/schemas.js";
import {
  applyCancel,
  applyDecision,
  applyExecution,
  applyTimeout,
  isOverdue,
  type Transition,
} from "../core/state.js";
import type { ListFilter, Page, RequestSummary, Store } from "../core/store.js";
import { parseOrThrow } from "../core/validate.js";
import { logDeadline, logDecision } from "./engine-log.js";
import { createFeed } from "./feed.js";
import { createSweeper } from "./sweeper.js";
import { transact } from "./transact.js";

export interface AirlockOptions {
  store: Store;
  /** Decides the level before a human is asked; see `src/policy`. */
  policy?: Policy;
  /** Zod schemas per action: request args and edited args must satisfy them. */
  schemas?: Record<string, ZodType>;
  logger?: Logger;
  clock?: Clock;
  /** Run the timeout sweeper in this process. It listens to the store's change signal from the start
   * (so deadlines set by other processes are enforced at once), which keeps the process alive until
   * `close()`. @default true */
  sweeper?: boolean;
  /** The longest the sweeper sleeps, so other processes' deadlines are found. @default 30000 */
  sweepMaxSleepMs?: number;
}

export interface WaitOptions {
  signal?: AbortSignal;
  /** How long this caller waits (not the gate's deadline). Rejects with code `timeout`. */
  timeoutMs?: number;
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

export interface EventsOptions {
  requestId?: string;
  types?: EventType[];
  /** Start after this seq (resume); by default only events from now on. */
  after?: number;
  signal?: AbortSignal;
}

export interface Airlock {
  request(input: RequestInput): Promise<ApprovalRequest>;
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
  count(filter?: ListFilter): Promise<number>;
  /** One requester's pending requests: how many, and their stored size in bytes (for quotas). */
  pendingUsage(requester: string): Promise<{ count: number; bytes: number }>;
  /** The audit chain's head (last event's seq and hash); undefined while the log is empty. */
  auditHead(): Promise<{ seq: number; hash: string } | undefined>;
  waitFor(id: string, options?: WaitOptions): Promise<ApprovalRequest>;
  decide(id: string, decision: DecisionInput): Promise<ApprovalRequest>;
  cancel(id: string, options?: CancelOptions): Promise<ApprovalRequest>;
  /** Claims an approved request for execution, exactly once (compare-and-set): call it right before
   * running the approved action. A second claim fails with code `conflict`, so a double resume or a
   * replayed job cannot run the action twice. */
  claimExecution(id: string, options?: { by?: string }): Promise<ApprovalRequest>;
  events(options?: EventsOptions): AsyncIterable<AuditEvent>;
  audit(filter?: { requestId?: string; after?: number; limit?: number }): Promise<AuditEvent[]>;
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
  /** Stops the sweeper, rejects pending waits with code `closed`, and closes the store. */
  close(): Promise<void>;
}

const TERMINAL_EVENTS: ReadonlySet<EventType> = new Set(["decided", "timed_out", "cancelled"]);

export async function createAirlock(options: AirlockOptions): Promise<Airlock> {
  const { store } = options;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? pino({ level: "silent" });
  const schemas = new Map<string, ZodType>(Object.entries(options.schemas ?? {}));
  await store.migrate();

  const onError = (err: unknown) => logger.error({ err }, "airlock background error");
  const feed = createFeed({
    head: async () => (await store.auditHead())?.seq ?? 0,
    readAfter: (seq, limit) => store.listAudit({ after: seq, limit }),
    onExternalChange: (l) => store.onExternalChange(l),
    onError,
    onReadError: (err, retryInMs) =>
      logger.warn(
        { err, retry_in_ms: retryInMs },
        "could not read the audit log to notify subscribers; the change is committed, retrying",
      ),
  });
  await feed.start();

  // Waiters by request id; woken when a terminal event for their request passes through the feed
  // (another process decided) or directly with the stored request (this engine decided).
  type Wake = (settled?: ApprovalRequest) => void;
  const waiters = new Map<string, Set<Wake>>();
  let unsubscribeWaiters: (() => void) | undefined;
  function addWaiter(id: string, wake: Wake): () => void {
    let set = waiters.get(id);
    if (!set) {
      set = new Set();
      waiters.set(id, set);
    }
    set.add(wake);
    if (!unsubscribeWaiters) {
      unsubscribeWaiters = feed.subscribe((e) => {
        if (e.requestId && TERMINAL_EVENTS.has(e.type)) {
          for (const w of [...(waiters.get(e.requestId) ?? [])]) w();
        }
      });
    }
    return () => {
      set.delete(wake);
      if (set.size === 0) waiters.delete(id);
      if (waiters.size === 0 && unsubscribeWaiters) {
        unsubscribeWaiters();
        unsubscribeWaiters = undefined;
      }
    };
  }

  let closed = false;
  const closers = new Set<() => void>();
  function guard() {
    if (closed) throw new AirlockError("closed", "this Airlock engine is closed");
  }

  async function commit(
    t: Transition,
    expectedVersion: number,
  ): Promise<ApprovalRequest | undefined> {
    const result = await store.transition(t.next, expectedVersion, t.events.map(redactDraft));
    if (!result.ok) return undefined;
    const stored = result.request;
    if (stored && stored.status !== "pending") {
      for (const wake of [...(waiters.get(stored.id) ?? [])]) wake(stored);
    }
    // Committed: from here on the caller gets this result, whatever happens to the feed.
    await feed.settle(result.events);
    return stored;
  }

  async function load(id: string): Promise<ApprovalRequest> {
    const r = await store.getRequest(id);
    if (!r) throw new NotFoundError("request", id);
    return r;
  }

  async function fireDue(now: number): Promise<number> {
    const due = await store.dueRequests(now, 100);
    let fired = 0;
    for (const r of due) {
      if (!isOverdue(r, now)) continue;
      const stored = await commit(applyTimeout(r, now), r.version);
      if (!stored) continue; // decided or escalated elsewhere first: the CAS settled it
      fired++;
      logDeadline(logger, stored);
    }
    return fired;
  }

  const sweeper =
    options.sweeper === false
      ? undefined
      : createSweeper({
          nextDeadline: () => store.nextDeadline(),
          fireDue,
          now: () => clock.now(),
          onError,
          maxSleepMs: options.sweepMaxSleepMs ?? 30_000,
        });
  if (sweeper) {
    // The sweeper hears of every new deadline at once, whoever set it (this process or another one
    // through the store's change signal), not only while somebody waits.
    feed.subscribe((e) => {
      if (e.type === "created" || e.type === "escalated") {
        const deadline = e.data.deadline;
        if (typeof deadline === "number") sweeper.schedule(deadline);
      }
    });
    // Overdue requests left by a crash or a stop are timed out now.
    await sweeper.sweep();
  }
  const cas = {
    load,
    commit,
    now: () => clock.now(),
    onDeadline: (stored: ApprovalRequest) => logDeadline(logger, stored),
  };

  async function checkSchema(action: string, args: unknown, field: string) {
    const schema = schemas.get(action);
    if (schema) parseOrThrow(schema, args, `${field} for action \`${action}\``, field);
  }

  async function decidePolicy(
    input: ParsedRequestInput,
  ): Promise<{ level: Level; reason?: string; confidence?: number }> {
    if (!input.requireApproval)
      return { level: "auto", reason: "approval not required by configuration" };
    const verdict = options.policy ? await options.policy({ input }) : undefined;
    if (verdict) return verdict;
    return { level: input.level ?? "full" };
  }

  const engine: Airlock = {
    logger,

    async request(raw) {
      guard();
      const input = parseOrThrow(requestInputSchema, raw, "request");
      await checkSchema(input.action, input.args, "args");
      const now = clock.now();
      const verdict = await decidePolicy(input);
      const { stored, events } = newRequest(input, verdict, sha256(canonicalJson(input)), now);
      const id = stored.id;
      const inputHash = stored.inputHash;

      const result = await store.insertRequest(stored, events.map(redactDraft));
      if (!result.created) {
        if (result.request.inputHash !== inputHash) {
          throw new ConflictError(
            `key \`${input.key}\` was already used for another request (${result.request.id}) with different content`,
            result.request,
          );
        }
        return result.request;
      }
      await feed.settle(result.events);
      logger.info(
        {
          correlation_id: stored.correlationId,
          request_id: id,
          action: stored.action,
          level: stored.level,
          deadline: stored.deadline,
        },
        stored.status === "pending" ? "Approval requested" : "Approval settled by policy",
      );
      if (stored.status !== "pending") logDecision(logger, stored);
      if (stored.status === "pending" && stored.deadline !== undefined)
        sweeper?.schedule(stored.deadline);
      return stored;
    },

    async get(id) {
      guard();
      return load(id);
    },

    async getByKey(key, opts = {}) {
      guard();
      return store.getRequestByKey(normalizeIdentity(opts.requester ?? "anonymous"), key);
    },

    async list(filter = {}) {
      guard();
      return store.listRequests(byIdentity(filter));
    },

    async listSummaries(filter = {}) {
      guard();
      return store.listSummaries(byIdentity(filter));
    },

    async count(filter = {}) {
      guard();
      return store.countRequests(byIdentity(filter));
    },

    async pendingUsage(requester) {
      guard();
      return store.pendingUsage(normalizeIdentity(requester));
    },

    async auditHead() {
      guard();
      return store.auditHead();
    },

    async waitFor(id, opts = {}) {
      guard();
      const { signal, timeoutMs } = opts;
      if (signal?.aborted) throw abortError(signal);
      // Listen first, then read: a decision landing in between still wakes us, and one read suffices.
      return new Promise<ApprovalRequest>((resolve, reject) => {
        let done = false;
        let timer: NodeJS.Timeout | undefined;
        const finish = (err: unknown, value?: ApprovalRequest) => {
          if (done) return;
          done = true;
          removeWaiter();
          closers.delete(onClose);
          if (timer) clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          if (err) reject(err);
          else if (value) resolve(value);
        };
        const check = (settled?: ApprovalRequest) => {
          if (settled) {
            finish(undefined, settled);
            return;
          }
          store.getRequest(id).then(
            (r) => {
              if (!r) finish(new NotFoundError("request", id));
              else if (r.status !== "pending") finish(undefined, r);
            },
            (err: unknown) => finish(err),
          );
        };
        const onAbort = () => finish(abortError(signal));
        const onClose = () =>
          finish(new AirlockError("closed", "the engine was closed while waiting"));
        const removeWaiter = addWaiter(id, check);
        closers.add(onClose);
        signal?.addEventListener("abort", onAbort, { once: true });
        if (timeoutMs !== undefined) {
          timer = setTimeout(
            () => finish(new TimeoutError(`waited ${timeoutMs} ms for ${id}; it is still pending`)),
            timeoutMs,
          );
        }
        check();
      });
    },

    async decide(id, raw) {
      guard();
      const input = parseOrThrow(decisionInputSchema, raw, "decision");
      let replayed = false;
      const stored = await transact(cas, id, async (current, now) => {
        if (input.key !== undefined) {
          replayed = current.decisions.some(
            (d) => d.key === input.key && sameIdentity(d.reviewer, input.reviewer),
          );
          if (replayed) return { done: current };
        }
        if (input.editedArgs !== undefined) {
          await checkSchema(current.action, input.editedArgs, "editedArgs");
        }
        return applyDecision(current, input, now);
      });
      if (!replayed && stored.status !== "pending") logDecision(logger, stored);
      return stored;
    },

    async cancel(id, opts = {}) {
      guard();
      const stored = await transact(cas, id, async (current, now) =>
        applyCancel(
          current,
          {
            by: opts.by ?? current.requester,
            reason: opts.reason,
            channel: opts.channel,
            asReviewer: opts.asReviewer && { groups: opts.asReviewer.groups ?? [] },
          },
          now,
        ),
      );
      logger.info(
        {
          correlation_id: stored.correlationId,
          request_id: id,
          outcome: "cancelled",
          reviewer: stored.decision?.reviewer,
          review_duration_ms: (stored.decision?.decidedAt ?? stored.updatedAt) - stored.createdAt,
        },
        "Approval cancelled",
      );
      return stored;
    },

    async claimExecution(id, opts = {}) {
      guard();
      const stored = await transact(cas, id, async (current, now) =>
        applyExecution(current, opts.by ?? current.requester, now),
      );
      logger.info(
        { correlation_id: stored.correlationId, request_id: id, by: stored.executedBy },
        "Approved action executed",
      );
      return stored;
    },

    events(opts = {}) {
      return eventStream(opts);
    },

    async audit(filter = {}) {
      guard();
      return store.listAudit(filter);
    },

    async record(raw) {
      guard();
      const input = parseOrThrow(recordInputSchema, raw, "event");
      if (input.type === "auto_executed" && input.requestId !== undefined) {
        const r = await load(input.requestId);
        if (r.status !== "approved") {
          throw new ConflictError(
            `request ${r.id} is ${r.status}, not approved: nothing of it may be executed, automatically or not`,
            r,
          );
        }
      }
      const draft: AuditDraft = {
        type: input.type,
        actor: input.actor,
        at: input.at ?? clock.now(),
        data: input.data,
      };
      if (input.requestId !== undefined) draft.requestId = input.requestId;
      const [e] = await store.appendAudit([redactDraft(draft)]);
      if (!e) throw new AirlockError("store_unavailable", "the store appended no event");
      await feed.settle([e]);
      return e;
    },

    async verifyAudit(opts = {}) {
      guard();
      // The store's own key and checkpoint file unless the caller names others.
      return verifyAuditLog(store, { ...store.auditVerification?.(), ...opts });
    },

    async metrics(opts = {}) {
      guard();
      const since = clock.now() - (opts.sinceMs ?? 7 * 24 * 3600 * 1000);
      return computeMetrics(await store.outcomes(since), await store.countPending());
    },

    registerSchema(action, schema) {
      schemas.set(action, schema);
    },

    schemaFor(action) {
      return schemas.get(action);
    },

    async sweep() {
      guard();
      return sweeper ? sweeper.sweep() : fireDue(clock.now());
    },

    async close() {
      if (closed) return;
      closed = true;
      for (const c of [...closers]) c();
      // A sweep in flight (it fired a timeout and reads again) ends before the store closes.
      await sweeper?.stop();
      feed.stop();
      await store.close();
    },
  };

  /** A live tail of the audit log. Each stream reads the store itself from its own position, so it
   * sees every event once, in order, including those written by other processes. */
  async function* eventStream(opts: EventsOptions): AsyncGenerator<AuditEvent> {
    guard();
    let pos = opts.after ?? (await store.auditHead())?.seq ?? 0;
    let wake: (() => void) | undefined;
    let dirty = true;
    const unsubscribe = feed.subscribe(() => {
      dirty = true;
      wake?.();
    });
    const onStop = () => wake?.();
    opts.signal?.addEventListener("abort", onStop);
    closers.add(onStop);
    try {
      while (!closed && !opts.signal?.aborted) {
        if (!dirty) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
          continue;
        }
        dirty = false;
        const page = await store.listAudit({
          after: pos,
          limit: 500,
          ...(opts.requestId ? { requestId: opts.requestId } : {}),
        });
        for (const e of page) {
          pos = e.seq;
          if (opts.types && !opts.types.includes(e.type)) continue;
          yield e;
        }
        if (page.length === 500) dirty = true;
      }
    } finally {
      unsubscribe();
      closers.delete(onStop);
      opts.signal?.removeEventListener("abort", onStop);
    }
  }

  return engine;
}

/** Requesters and approvers are stored in normal form: filter by the same form. */
function byIdentity(filter: ListFilter): ListFilter {
  const out = { ...filter };
  if (out.requester !== undefined) out.requester = normalizeIdentity(out.requester);
  if (typeof out.approver === "string") out.approver = normalizeIdentity(out.approver);
  else if (out.approver) out.approver = out.approver.map(normalizeIdentity);
  return out;
}

function redactDraft(d: AuditDraft): AuditDraft {
  return { ...d, data: redact(d.data) };
}

function abortError(signal: AbortSignal | undefined): AirlockError {
  const reason = signal?.reason instanceof Error ? signal.reason.message : "aborted";
  return new AirlockError("aborted", `waiting was aborted: ${reason}`);
}
