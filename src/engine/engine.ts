// The engine: the one place where gates are created, decided, cancelled, timed out and waited on.
// It holds no request state of its own; the store is the system of record, and every transition is
// a compare-and-set there, so several engines (threads, processes, machines) can share one store.
// `createAirlock` composes the parts, each in its own file: the audit feed (feed.ts), waiters
// (waiters.ts), the timeout sweeper and its deadline subscription (sweeper.ts), the transition retry
// loop (transact.ts), creating (create.ts), recording (record.ts), the event stream (event-stream.ts),
// the log lines (engine-log.ts), and audit verification (audit/verify.ts).
import pino from "pino";
import type { ZodType } from "zod";
import { createRedactor } from "../audit/redact.js";
import { verifyAuditLog } from "../audit/verify.js";
import { checkArgsAgainst } from "../core/args-schema.js";
import { type Actor, decidingIdentity, resolutionRefusal } from "../core/authority.js";
import { systemClock } from "../core/clock.js";
import { AirlockError, ForbiddenError, NotFoundError } from "../core/errors.js";
import { applyClaim, applyOutcome, applyRenewal, applyResolution } from "../core/execution.js";
import { normalizeIdentity, sameIdentity } from "../core/identity.js";
import { computeMetrics } from "../core/metrics.js";
import { metricsFromStats } from "../core/outcome-stats.js";
import { checkPendingQuota } from "../core/quota.js";
import {
  type ApprovalRequest,
  type AuditDraft,
  type AuditEvent,
  DEFAULT_REQUESTER,
  decisionInputSchema,
  type ParsedDecisionInput,
} from "../core/schemas.js";
import {
  activeDeadline,
  applyCancel,
  applyDecision,
  isTerminal,
  type Transition,
} from "../core/state.js";
import type { ListFilter } from "../core/store.js";
import { expectPositiveInt, parseOrThrow } from "../core/validate.js";
import { checkSchema, createRequest } from "./create.js";
import {
  logCancelled,
  logClaimed,
  logCreated,
  logDeadline,
  logDecision,
  logExecuted,
} from "./engine-log.js";
import { eventStream } from "./event-stream.js";
import { storeFeed } from "./feed.js";
import { outboxDrafts } from "./outbox-drafts.js";
import { recentRequests } from "./recent.js";
import { recordEvent } from "./record.js";
import { createSweeper, fireDueWith, followDeadlines } from "./sweeper.js";
import { engineTickets } from "./tickets.js";
import { transact } from "./transact.js";
import type { Airlock, AirlockOptions } from "./types.js";
import { createWaiters } from "./waiters.js";

export type {
  Airlock,
  AirlockOptions,
  CancelOptions,
  EventsOptions,
  RequestOptions,
  WaitOptions,
} from "./types.js";

const DEFAULT_METRICS_WINDOW_MS = 7 * 24 * 3600 * 1000;

export async function createAirlock(options: AirlockOptions): Promise<Airlock> {
  const { store } = options;
  const maxSleepMs = expectPositiveInt("sweepMaxSleepMs", options.sweepMaxSleepMs ?? 30_000);
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? pino({ level: "silent" });
  const schemas = new Map<string, ZodType>(Object.entries(options.schemas ?? {}));
  const redaction = createRedactor(options.redaction);
  const redactDraft = (d: AuditDraft): AuditDraft => ({ ...d, data: redaction.redact(d.data) });
  await store.migrate();

  const onError = (err: unknown) => logger.error({ err }, "airlock background error");
  const feed = storeFeed(store, logger);
  await feed.start();
  const waiters = createWaiters(feed, (id) => store.getRequest(id));
  const recent = recentRequests();

  let closed = false;
  const closers = new Set<() => void>();
  function guard() {
    if (closed) throw new AirlockError("closed", "this Airlock engine is closed");
  }

  /** Writes a transition if the request is still at `expectedVersion`; undefined when it was not. */
  async function commit(t: Transition, expectedVersion: number) {
    const events = t.events.map(redactDraft);
    const outbox = outboxDrafts(options.notifiers, t.next, events, clock.now());
    const result = await store.transition(t.next, expectedVersion, events, outbox);
    if (!result.ok) {
      recent.forget(t.next.id);
      return undefined;
    }
    if (outbox.length > 0) options.onOutbox?.();
    const stored = result.request;
    if (stored) recent.remember(stored, result.docJson);
    if (stored && isTerminal(stored.status)) waiters.settled(stored);
    // Committed: from here on the caller gets this result, whatever happens to the feed.
    await feed.settle(result.events);
    return stored;
  }

  async function load(id: string): Promise<ApprovalRequest> {
    const r = await store.getRequest(id);
    if (!r) throw new NotFoundError("request", id);
    return r;
  }

  const onDeadline = (stored: ApprovalRequest) => logDeadline(logger, stored);
  const fireDue = fireDueWith({
    dueRequests: (now, limit) => store.dueRequests(now, limit),
    staleExecutions: (now, limit) => store.staleExecutions(now, limit),
    commit,
    onDeadline,
  });
  const sweeper =
    options.sweeper === false
      ? undefined
      : createSweeper({
          nextDeadline: () => nextSweep(store),
          fireDue,
          now: () => clock.now(),
          onError,
          maxSleepMs,
        });
  if (sweeper) {
    followDeadlines(feed, sweeper);
    // Overdue requests left by a crash or a stop are timed out now: the first batch before the engine
    // is handed out, the rest by a sweep in the background, so a backlog of overdue gates (a server
    // down for a weekend) does not hold up the start. A decision on one still meets its timeout first.
    await fireDue(clock.now());
    sweeper.schedule();
  }
  const now = () => clock.now();
  const cas = { load, peek: (id: string) => recent.get(id), commit, now, onDeadline };
  const settle = (events: AuditEvent[]) => feed.settle(events);
  const creating = {
    store,
    policy: options.policy,
    schemaFor: (action: string) => schemas.get(action),
    now,
    redactDraft,
    settle,
    outboxFor(stored: ApprovalRequest, events: AuditDraft[]) {
      return outboxDrafts(options.notifiers, stored, events, clock.now());
    },
    onOutbox: () => options.onOutbox?.(),
    onCreated(stored: ApprovalRequest, docJson?: string) {
      recent.remember(stored, docJson);
      logCreated(logger, stored);
      const deadline = activeDeadline(stored);
      if (deadline !== undefined) sweeper?.schedule(deadline);
    },
  };
  const recording = { store, load, now, redactDraft, settle };

  const streams = {
    store,
    feed,
    isClosed: () => closed,
    onClose(stop: () => void) {
      closers.add(stop);
      return () => closers.delete(stop);
    },
  };

  /** Decides with the state machine's checks; with an actor (a door's proven caller), authority's
   * checks first, inside the same compare-and-set, and the identity taken from the actor alone. */
  async function decideWith(
    id: string,
    parsed: ParsedDecisionInput,
    actor: Actor | undefined,
  ): Promise<ApprovalRequest> {
    let replayed = false;
    const stored = await transact(cas, id, async (current, now) => {
      const input = actor ? { ...parsed, ...decidingIdentity(actor, current) } : parsed;
      if (input.key !== undefined) {
        replayed = current.decisions.some(
          (d) => d.key === input.key && sameIdentity(d.reviewer, input.reviewer),
        );
        if (replayed) return { done: current };
      }
      if (input.editedArgs !== undefined) {
        checkSchema(schemas.get(current.action), current.action, input.editedArgs, "editedArgs");
        // The request's own schema, whatever this process registered: `serve` checks edits too.
        checkArgsAgainst(current.argsSchema, input.editedArgs, "editedArgs");
      }
      // Without an actor the caller is code in this process, trusted as the embedding application.
      return applyDecision(current, input, now, actor?.proof ?? "in_process");
    });
    if (!replayed && isTerminal(stored.status)) logDecision(logger, stored);
    return stored;
  }

  return {
    logger,
    redaction,
    ...engineTickets({ store, now, guard }),

    async request(raw, options = {}) {
      guard();
      if (options.quota) checkPendingQuota(options.quota);
      return createRequest(creating, raw, options.quota ? { quota: options.quota } : {});
    },

    async get(id) {
      guard();
      return load(id);
    },

    async getByKey(key, opts = {}) {
      guard();
      return store.getRequestByKey(normalizeIdentity(opts.requester ?? DEFAULT_REQUESTER), key);
    },

    async list(filter = {}) {
      guard();
      return store.listRequests(byIdentity(filter));
    },

    async listSummaries(filter = {}) {
      guard();
      return store.listSummaries(byIdentity(filter));
    },

    async count(filter = {}, options = {}) {
      guard();
      return store.countRequests(byIdentity(filter), options);
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
      return waiters.wait(id, opts);
    },

    async decide(id, raw) {
      guard();
      return decideWith(id, parseOrThrow(decisionInputSchema, raw, "decision"), undefined);
    },

    async decideAs(actor, id, raw) {
      guard();
      const input = parseOrThrow(
        decisionInputSchema,
        { ...raw, reviewer: actor.name, groups: [...actor.groups], channel: actor.channel },
        "decision",
      );
      return decideWith(id, input, actor);
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
      logCancelled(logger, stored);
      return stored;
    },

    async claimExecution(id, opts = {}) {
      guard();
      const stored = await transact(cas, id, async (current, now) =>
        applyClaim(
          current,
          {
            by: opts.by ?? current.requester,
            ...(opts.leaseMs === undefined ? {} : { leaseMs: opts.leaseMs }),
          },
          now,
        ),
      );
      const leaseUntil = stored.execution?.leaseUntil;
      if (leaseUntil !== undefined) sweeper?.schedule(leaseUntil);
      logClaimed(logger, stored);
      return stored;
    },

    async renewExecution(id, input) {
      guard();
      const stored = await transact(cas, id, async (current, now) =>
        applyRenewal(current, input, now),
      );
      const leaseUntil = stored.execution?.leaseUntil;
      if (leaseUntil !== undefined) sweeper?.schedule(leaseUntil);
      return stored;
    },

    async finishExecution(id, outcome, opts = {}) {
      guard();
      const stored = await transact(cas, id, async (current, now) =>
        applyOutcome(
          current,
          outcome,
          opts.by ?? current.execution?.claimedBy ?? current.requester,
          now,
        ),
      );
      logExecuted(logger, stored);
      return stored;
    },

    async resolveExecution(actor, id, input) {
      guard();
      return transact(cas, id, async (current, now) => {
        const refusal = resolutionRefusal(actor, current);
        if (refusal) throw new ForbiddenError(refusal.message);
        return applyResolution(current, { ...input, by: actor.name }, now);
      });
    },

    events(opts = {}) {
      return (async function* () {
        guard();
        yield* eventStream(streams, opts);
      })();
    },

    async audit(filter = {}) {
      guard();
      return store.listAudit(filter);
    },

    async outbox(filter = {}) {
      guard();
      return store.listOutbox(filter);
    },

    async record(raw) {
      guard();
      return recordEvent(recording, raw);
    },

    async verifyAudit(opts = {}) {
      guard();
      // The store's own key and checkpoint file unless the caller names others.
      return verifyAuditLog(store, { ...store.auditVerification?.(), ...opts });
    },

    async metrics(opts = {}) {
      guard();
      const since = clock.now() - (opts.sinceMs ?? DEFAULT_METRICS_WINDOW_MS);
      const pending = await store.countPending();
      const unknown = await store.countRequests({ execution: "unknown" });
      // Pre-aggregated where the store keeps counters: the cost does not grow with history.
      if (store.outcomeStats) {
        return metricsFromStats(await store.outcomeStats(since), pending, unknown);
      }
      return computeMetrics(await store.outcomes(since), pending, unknown);
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
      waiters.close();
      for (const c of [...closers]) c();
      // A sweep in flight (it fired a timeout and reads again) ends before the store closes.
      await sweeper?.stop();
      feed.stop();
      await store.close();
    },
  };
}

/** The sweeper's next wake-up: the nearest gate deadline or execution lease end. */
async function nextSweep(store: AirlockOptions["store"]): Promise<number | undefined> {
  const [deadline, lease] = await Promise.all([store.nextDeadline(), store.nextLeaseEnd()]);
  if (deadline === undefined) return lease;
  return lease === undefined ? deadline : Math.min(deadline, lease);
}

/** Requesters and approvers are stored in normal form: filter by the same form. */
function byIdentity(filter: ListFilter): ListFilter {
  const out = { ...filter };
  if (out.requester !== undefined) out.requester = normalizeIdentity(out.requester);
  if (typeof out.approver === "string") out.approver = normalizeIdentity(out.approver);
  else if (out.approver) out.approver = out.approver.map(normalizeIdentity);
  return out;
}
