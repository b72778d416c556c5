// One live tail of the audit log per server, shared by every open event stream. The engine's
// `events()` reads the store once per new event for each iterator; with thousands of streams that
// is thousands of reads per event. Here one iterator reads, and each stream gets the events from
// memory; a stream reads the store itself only for its replay (`after`, Last-Event-ID), and again
// when it fell too far behind or the shared tail restarted. The slim facts a visibility check needs
// (requester, approvers) are read once per request for all streams.
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import { isAirlockError } from "../core/errors.js";
import type { ApprovalRequest, AuditEvent } from "../core/schemas.js";
import type { Airlock } from "../engine/engine.js";

export interface TailOptions {
  /** Start after this seq; by default from the newest event on. */
  after?: number;
  requestId?: string;
  signal?: AbortSignal;
}

/** What a visibility check needs of a request. */
export type RequestFacts = Pick<ApprovalRequest, "requester" | "approvers">;

export interface EventHub {
  /** Like `airlock.events()`: every event after `after`, in order, then live ones, until `signal`
   * aborts or the engine closes. Reads the store only to catch up. */
  tail(options?: TailOptions): AsyncGenerator<AuditEvent>;
  /** The requester and approvers of a request, read once and shared (an escalation forgets them);
   * `undefined` when the request does not exist. */
  facts(requestId: string): Promise<RequestFacts | undefined>;
  /** Streams following the shared tail now. */
  size(): number;
  /** The seq of the last event the shared tail published. */
  position(): number;
  stop(): void;
}

interface Subscriber {
  event(e: AuditEvent): void;
  /** Events may have been missed: read the store again from your position. */
  resync(): void;
}

const PAGE = 500;
/** Events a slow stream may have waiting before it drops them and reads the store instead. */
const MAX_QUEUED = 2000;
const MAX_FACTS = 10_000;
const RESTART_MS = 1000;

export function createEventHub(airlock: Airlock, logger: Logger): EventHub {
  const subscribers = new Set<Subscriber>();
  const facts = new Map<string, Promise<RequestFacts | undefined>>();
  let running: { stop: AbortController; ready: Promise<void> } | undefined;
  let stopped = false;
  let published = 0;

  function start(): { stop: AbortController; ready: Promise<void> } {
    const stop = new AbortController();
    let markReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      markReady = resolve;
    });
    const run = { stop, ready };
    void (async () => {
      try {
        const head = (await airlock.auditHead())?.seq ?? 0;
        published = Math.max(published, head);
        markReady();
        for await (const e of airlock.events({ after: head, signal: stop.signal })) {
          if (e.type === "escalated" && e.requestId !== undefined) facts.delete(e.requestId);
          published = Math.max(published, e.seq);
          for (const s of [...subscribers]) s.event(e);
        }
        // The engine's tail ends by itself only when the engine closes: each stream's next read
        // then fails with `closed`, which ends it.
        if (!stop.signal.aborted) for (const s of [...subscribers]) s.resync();
      } catch (err) {
        markReady();
        if (stop.signal.aborted) return;
        if (isAirlockError(err, "closed")) {
          // The engine is closed: each stream's next read fails with `closed` and ends it.
          for (const s of [...subscribers]) s.resync();
          return;
        }
        logger.warn({ err }, "the shared event tail failed; restarting it");
        // Abortable: stopping the hub during the pause ends it at once.
        const paused = await sleep(RESTART_MS, true, { ref: false, signal: stop.signal }).catch(
          () => false,
        );
        if (!paused) return;
        if (running === run) running = undefined;
        if (!stopped && subscribers.size > 0) {
          running = start();
          await running.ready;
          // Events between the failure and the new start were not seen: streams read them.
          for (const s of [...subscribers]) s.resync();
        }
      }
    })();
    return run;
  }

  function subscribe(s: Subscriber): { ready: Promise<void>; unsubscribe(): void } {
    subscribers.add(s);
    running ??= start();
    const ready = running.ready;
    return {
      ready,
      unsubscribe() {
        subscribers.delete(s);
        if (subscribers.size === 0 && running) {
          running.stop.abort();
          running = undefined;
        }
      },
    };
  }

  async function* tail(options: TailOptions = {}): AsyncGenerator<AuditEvent> {
    const { requestId, signal } = options;
    let queue: AuditEvent[] = [];
    let mustRead = true;
    let wake: (() => void) | undefined;
    const poke = () => wake?.();
    const sub = subscribe({
      event(e) {
        if (requestId !== undefined && e.requestId !== requestId) return;
        queue.push(e);
        if (queue.length > MAX_QUEUED) {
          queue = [];
          mustRead = true;
        }
        poke();
      },
      resync() {
        mustRead = true;
        poke();
      },
    });
    signal?.addEventListener("abort", poke);
    try {
      // The shared tail knows its start before we read: what it sends from then on is queued, what
      // came before is in the store when we read it.
      await sub.ready;
      let pos = options.after ?? (await airlock.auditHead())?.seq ?? 0;
      while (!signal?.aborted) {
        if (mustRead) {
          mustRead = false;
          for (;;) {
            const page = await airlock.audit({
              after: pos,
              limit: PAGE,
              ...(requestId === undefined ? {} : { requestId }),
            });
            for (const e of page) {
              if (e.seq <= pos) continue;
              pos = e.seq;
              yield e;
              if (signal?.aborted) return;
            }
            if (page.length < PAGE) break;
          }
          continue;
        }
        const next = queue.shift();
        if (next) {
          if (next.seq <= pos) continue;
          pos = next.seq;
          yield next;
          continue;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    } finally {
      signal?.removeEventListener("abort", poke);
      sub.unsubscribe();
    }
  }

  return {
    tail,
    facts(requestId) {
      let known = facts.get(requestId);
      if (!known) {
        known = airlock.get(requestId).then(
          (r) => ({ requester: r.requester, approvers: [...r.approvers] }),
          (err: unknown) => {
            facts.delete(requestId);
            if (isAirlockError(err, "not_found")) return undefined;
            throw err;
          },
        );
        if (facts.size >= MAX_FACTS) facts.clear();
        facts.set(requestId, known);
      }
      return known;
    },
    size: () => subscribers.size,
    position: () => published,
    stop() {
      stopped = true;
      running?.stop.abort();
      running = undefined;
    },
  };
}
