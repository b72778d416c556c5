// Enforces deadlines: sleeps until the nearest one (not a fixed poll), then times out every request
// that is due through the same compare-and-set as a human decision. Deadlines live in the store, so a
// restarted process finds overdue requests on its first sweep.

import { applyUnknown, isStaleClaim } from "../core/execution.js";
import type { ApprovalRequest } from "../core/schemas.js";
import { applyTimeout, isOverdue, type Transition } from "../core/state.js";
import type { Feed } from "./feed.js";

export interface SweeperOptions {
  nextDeadline(): Promise<number | undefined>;
  /** Fires every due request; returns how many it handled. */
  fireDue(now: number): Promise<number>;
  now(): number;
  onError(err: unknown): void;
  /** The longest sleep, so deadlines set by other processes are found without a notification. */
  maxSleepMs: number;
}

export interface Sweeper {
  /** Re-plan after a deadline was set (or may have been set) sooner than the one planned. */
  schedule(deadline?: number): void;
  sweep(): Promise<number>;
  /** Stops sweeping; resolves once a sweep in flight has ended, so it touches the store no more. */
  stop(): Promise<void>;
}

/** How soon to sweep again after a sweep failed. */
const RETRY_AFTER_ERROR_MS = 1000;

export function createSweeper(o: SweeperOptions): Sweeper {
  let timer: NodeJS.Timeout | undefined;
  let plannedAt: number | undefined;
  let running: Promise<number> | undefined;
  let again = false;
  let stopped = false;

  function arm(at: number) {
    if (stopped) return;
    if (timer && plannedAt !== undefined && plannedAt <= at) return;
    if (timer) clearTimeout(timer);
    plannedAt = at;
    const delay = Math.min(Math.max(at - o.now(), 0), o.maxSleepMs);
    timer = setTimeout(() => {
      timer = undefined;
      plannedAt = undefined;
      void sweep().catch(o.onError);
    }, delay);
    // The sweeper alone never keeps a process alive: a waiter or a server does.
    timer.unref();
  }

  async function runOnce(): Promise<number> {
    let fired = 0;
    let next: number | undefined;
    let failed = true;
    try {
      for (;;) {
        if (stopped) return fired;
        const n = await o.fireDue(o.now());
        fired += n;
        if (n === 0) break;
      }
      if (stopped) return fired;
      next = await o.nextDeadline();
      failed = false;
    } finally {
      // Even when the store failed (e.g. the database is down), sleep and try again: a sweeper that
      // stops re-arming would leave every later deadline to chance.
      const sleep = failed ? Math.min(o.maxSleepMs, RETRY_AFTER_ERROR_MS) : o.maxSleepMs;
      arm(next ?? o.now() + sleep);
    }
    return fired;
  }

  async function sweep(): Promise<number> {
    if (stopped) return 0;
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let total = 0;
      try {
        do {
          again = false;
          total += await runOnce();
        } while (again && !stopped);
      } finally {
        running = undefined;
      }
      return total;
    })();
    return running;
  }

  return {
    schedule(deadline) {
      if (deadline === undefined) {
        void sweep().catch(o.onError);
        return;
      }
      arm(deadline);
    },
    sweep,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      // Its errors were reported where it ran; here only its end matters.
      await running?.catch(() => {});
    },
  };
}

/** How many due requests one step times out before it reads again. */
const DUE_BATCH = 100;

export interface DueDeps {
  dueRequests(now: number, limit: number): Promise<ApprovalRequest[]>;
  /** Claimed executions whose lease ended (store.staleExecutions). */
  staleExecutions(now: number, limit: number): Promise<ApprovalRequest[]>;
  /** The engine's compare-and-set write (transact.ts); undefined when the request changed first. */
  commit(t: Transition, expectedVersion: number): Promise<ApprovalRequest | undefined>;
  /** Told of each timeout or escalation committed. */
  onDeadline(stored: ApprovalRequest): void;
}

/** `fireDue` for a sweeper: times out (or escalates) every request due at `now`, and marks every
 * execution whose lease ended with no outcome `unknown`, each through the same guarded write as a
 * decision, so a decision (or an outcome) that won the race is left alone. */
export function fireDueWith(deps: DueDeps): (now: number) => Promise<number> {
  return async (now) => {
    let fired = 0;
    for (const r of await deps.dueRequests(now, DUE_BATCH)) {
      if (!isOverdue(r, now)) continue;
      const stored = await deps.commit(applyTimeout(r, now), r.version);
      if (!stored) continue; // decided or escalated elsewhere first: the CAS settled it
      fired++;
      deps.onDeadline(stored);
    }
    for (const r of await deps.staleExecutions(now, DUE_BATCH)) {
      if (!isStaleClaim(r, now)) continue;
      // Reported or renewed elsewhere first: the CAS settled it.
      if (await deps.commit(applyUnknown(r, now), r.version)) fired++;
    }
    return fired;
  };
}

/** Plans a sweep for every new deadline as soon as the feed carries it, whoever set it (this process
 * or another one through the store's change signal), not only while somebody waits. */
export function followDeadlines(feed: Pick<Feed, "subscribe">, sweeper: Sweeper): () => void {
  return feed.subscribe((e) => {
    if (e.type === "created" || e.type === "escalated") {
      const deadline = e.data.deadline;
      if (typeof deadline === "number") sweeper.schedule(deadline);
    } else if (e.type === "claimed") {
      const leaseUntil = e.data.leaseUntil;
      if (typeof leaseUntil === "number") sweeper.schedule(leaseUntil);
    }
  });
}
