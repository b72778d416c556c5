// Reminders: a nudge, through the same routes, when a pending request's deadline is near. Each
// reminder is an outbox message whose id is made of the request, its deadline and the target, so
// every server may look at once and a restart may look again: each is written once per deadline (an
// escalation's new deadline gets its own).
import type { Logger } from "pino";
import type { Clock } from "../core/clock.js";
import type { OutboxDraft } from "../core/outbox.js";
import type { Store } from "../core/store.js";
import type { OutboxRouter } from "../engine/outbox-drafts.js";

export interface RemindersOptions {
  store: Pick<Store, "listSummaries" | "getRequest" | "enqueueOutbox">;
  router: OutboxRouter;
  /** How long before the deadline the nudge goes out. */
  beforeMs: number;
  logger: Logger;
  clock?: Clock;
  /** Told when reminders were written (wakes the dispatcher). */
  onEnqueued?: () => void;
  /** How often to look. @default min(beforeMs / 4, 30 s), at least 1 s */
  everyMs?: number;
}

export interface Reminders {
  /** Writes the reminders due now; returns how many were new. */
  tick(): Promise<number>;
  start(): void;
  /** Stops looking, and waits for a look under way (so it never writes to a closed store). */
  close(): Promise<void>;
}

/** Requests looked at per tick, most urgent first: past this many, the rest wait for the next tick. */
const PER_TICK = 500;

export function createReminders(options: RemindersOptions): Reminders {
  const now = () => (options.clock ?? { now: Date.now }).now();
  const everyMs = options.everyMs ?? Math.max(1000, Math.min(options.beforeMs / 4, 30_000));
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  async function tick(): Promise<number> {
    const t = now();
    const horizon = t + options.beforeMs;
    const page = await options.store.listSummaries({
      status: "pending",
      order: "deadline",
      limit: 100,
    });
    const drafts: OutboxDraft[] = [];
    let cursor = page;
    for (let seen = 0; seen < PER_TICK; ) {
      let past = false;
      for (const s of cursor.items) {
        seen++;
        if (s.deadline === undefined || s.deadline > horizon) {
          past = true;
          break;
        }
        if (s.deadline <= t) continue; // the sweeper's, not ours
        const request = await options.store.getRequest(s.id);
        if (request?.status !== "pending") continue;
        for (const target of new Set(options.router(request, "reminder"))) {
          drafts.push({
            id: `rem_${request.id}_${s.deadline}_${target}`,
            target,
            topic: "reminder",
            requestId: request.id,
            payload: { deadline: s.deadline, beforeMs: options.beforeMs },
            availableAt: t,
          });
        }
      }
      if (past || !cursor.nextCursor) break;
      cursor = await options.store.listSummaries({
        status: "pending",
        order: "deadline",
        limit: 100,
        cursor: cursor.nextCursor,
      });
    }
    if (drafts.length === 0) return 0;
    const written = await options.store.enqueueOutbox(drafts);
    if (written > 0) options.onEnqueued?.();
    return written;
  }

  function loop() {
    if (running) return;
    running = tick()
      .then(() => undefined)
      .catch((err: unknown) => options.logger.error({ err }, "reminders failed"))
      .finally(() => {
        running = undefined;
      });
  }

  return {
    tick,
    start() {
      if (timer) return;
      loop();
      timer = setInterval(loop, everyMs);
      timer.unref?.();
    },
    async close() {
      clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}
