// Following Airlock requests as they settle, for the adapters' resumers: tail Airlock's events when the
// API has them (the engine), else poll `list` (the HTTP client); on start, catch up with the requests
// settled while nobody followed (newest first, bounded). Each settled request goes to `consider`, whose
// work runs one at a time per key in this process; `stop()` waits for the tail, the catch-up and the
// work in flight;
// work that has not started when stopping begins does not run.
import type { Airlock, AirlockApi, ApprovalRequest, Status } from "../../index.js";

/** What following needs of Airlock. `events` wakes the follower at once; without it, it polls. */
export type FollowApi = Pick<AirlockApi, "get" | "list"> & { events?: Airlock["events"] };

/** Work for one settled request: runs after the work queued under the same `key` before it. */
export interface SettledWork {
  key: string;
  run: () => Promise<void>;
}

export interface FollowSettledOptions {
  airlock: FollowApi;
  /** Given each settled request seen; returns the work to run for it, or nothing. */
  consider: (request: ApprovalRequest) => SettledWork | undefined;
  /** Narrows the catch-up and the polling to one requester's requests. */
  requester?: string | undefined;
  /** Within one catch-up or poll pass, only the newest request per key is given to `consider`. */
  passKey?: (request: ApprovalRequest) => string | undefined;
  /** How many settled requests the start-up catch-up reads (newest first). @default 1000 */
  catchUpLimit?: number | undefined;
  /** Poll interval when `airlock` has no `events`. @default 1000 */
  pollMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /** A failed read: `requestId` when reading that request failed. Not called once stopping. */
  onError?: (err: unknown, requestId?: string) => void;
}

export interface Follower {
  /** Resolves when the catch-up of requests settled before the start is done. */
  readonly ready: Promise<void>;
  /** Stops listening and waits for work in flight. Safe to call twice. */
  stop(): Promise<void>;
}

const SETTLED: Status[] = ["approved", "rejected", "revise", "timed_out", "cancelled"];

export function followSettled(options: FollowSettledOptions): Follower {
  const { airlock } = options;
  const stopper = new AbortController();
  const onAbort = () => stopper.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const chains = new Map<string, Promise<void>>();
  const inFlight = new Set<Promise<void>>();
  const reportError = (err: unknown) => {
    if (!stopper.signal.aborted) options.onError?.(err);
  };

  function take(request: ApprovalRequest): void {
    if (request.status === "pending") return;
    const work = options.consider(request);
    if (!work) return;
    const { key } = work;
    const next = (chains.get(key) ?? Promise.resolve()).then(async () => {
      if (!stopper.signal.aborted) await work.run();
    });
    const settled = next.catch(() => undefined);
    chains.set(key, settled);
    inFlight.add(settled);
    void settled.finally(() => {
      inFlight.delete(settled);
      if (chains.get(key) === settled) chains.delete(key);
    });
  }

  async function catchUp(limit: number): Promise<void> {
    let cursor: string | undefined;
    let read = 0;
    const seen = new Set<string>();
    while (read < limit && !stopper.signal.aborted) {
      const page = await airlock.list({
        status: SETTLED,
        ...(options.requester !== undefined ? { requester: options.requester } : {}),
        order: "newest",
        limit: Math.min(100, limit - read),
        ...(cursor ? { cursor } : {}),
      });
      for (const r of page.items) {
        const key = options.passKey?.(r);
        if (key !== undefined) {
          if (seen.has(key)) continue;
          seen.add(key);
        }
        take(r);
      }
      read += page.items.length;
      if (!page.nextCursor || page.items.length === 0) break;
      cursor = page.nextCursor;
    }
  }

  let tail: Promise<void>;
  let ready: Promise<void>;
  const events = airlock.events;
  if (typeof events === "function") {
    const stream = events
      .call(airlock, { types: ["decided", "timed_out", "cancelled"], signal: stopper.signal })
      [Symbol.asyncIterator]();
    // The first read fixes where the stream starts; the catch-up covers everything before it.
    const first = stream.next();
    tail = (async () => {
      let step = await first;
      while (!step.done) {
        const id = step.value.requestId;
        if (id) {
          try {
            take(await airlock.get(id));
          } catch (err) {
            options.onError?.(err, id);
          }
        }
        step = await stream.next();
      }
    })().catch(reportError);
    ready = catchUp(options.catchUpLimit ?? 1000).catch(reportError);
  } else {
    ready = catchUp(options.catchUpLimit ?? 1000).catch(reportError);
    const pollMs = options.pollMs ?? 1000;
    tail = (async () => {
      await ready;
      while (!stopper.signal.aborted) {
        await sleep(pollMs, stopper.signal);
        if (!stopper.signal.aborted) await catchUp(100).catch(reportError);
      }
    })();
  }

  let stopping: Promise<void> | undefined;
  return {
    ready,
    stop() {
      stopping ??= (async () => {
        stopper.abort();
        options.signal?.removeEventListener("abort", onAbort);
        await tail;
        await ready;
        await Promise.allSettled([...inFlight]);
      })();
      return stopping;
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(finish, ms);
    function finish() {
      clearTimeout(timer);
      signal.removeEventListener("abort", finish);
      resolve();
    }
    signal.addEventListener("abort", finish, { once: true });
  });
}
