// Callers waiting for a request to settle. A waiter is woken by a terminal event for its request in
// the feed (another process decided) or directly with the stored request (this engine decided), and
// the feed is only subscribed to while somebody waits.
import { AirlockError, NotFoundError, TimeoutError } from "../core/errors.js";
import type { ApprovalRequest, AuditEvent } from "../core/schemas.js";
import { isPending, TERMINAL_EVENT_TYPES } from "../core/state.js";
import type { Feed } from "./feed.js";

export interface WaitOptions {
  signal?: AbortSignal;
  /** How long this caller waits (not the gate's deadline). Rejects with code `timeout`. */
  timeoutMs?: number;
}

export interface Waiters {
  /** Resolves with the request once it is no longer pending. */
  wait(id: string, options: WaitOptions): Promise<ApprovalRequest>;
  /** Wakes the waiters of a request this engine just settled, with the stored request. */
  settled(stored: ApprovalRequest): void;
  /** Rejects every wait with code `closed`. */
  close(): void;
}

type Wake = (settled?: ApprovalRequest) => void;

export function createWaiters(
  feed: Pick<Feed, "subscribe">,
  read: (id: string) => Promise<ApprovalRequest | undefined>,
): Waiters {
  const byId = new Map<string, Set<Wake>>();
  const closers = new Set<() => void>();
  let unsubscribe: (() => void) | undefined;

  function onEvent(e: AuditEvent) {
    if (e.requestId && TERMINAL_EVENT_TYPES.has(e.type)) {
      for (const w of [...(byId.get(e.requestId) ?? [])]) w();
    }
  }

  function add(id: string, wake: Wake): () => void {
    let set = byId.get(id);
    if (!set) {
      set = new Set();
      byId.set(id, set);
    }
    set.add(wake);
    unsubscribe ??= feed.subscribe(onEvent);
    return () => {
      set.delete(wake);
      if (set.size === 0) byId.delete(id);
      if (byId.size === 0 && unsubscribe) {
        unsubscribe();
        unsubscribe = undefined;
      }
    };
  }

  function wait(id: string, { signal, timeoutMs }: WaitOptions): Promise<ApprovalRequest> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    // Listen first, then read: a decision landing in between still wakes us, and one read suffices.
    return new Promise<ApprovalRequest>((resolve, reject) => {
      let done = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = (err: unknown, value?: ApprovalRequest) => {
        if (done) return;
        done = true;
        remove();
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
        read(id).then(
          (r) => {
            if (!r) finish(new NotFoundError("request", id));
            else if (!isPending(r)) finish(undefined, r);
          },
          (err: unknown) => finish(err),
        );
      };
      const onAbort = () => finish(abortError(signal));
      const onClose = () =>
        finish(new AirlockError("closed", "the engine was closed while waiting"));
      const remove = add(id, check);
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
  }

  return {
    wait,
    settled(stored) {
      for (const wake of [...(byId.get(stored.id) ?? [])]) wake(stored);
    },
    close() {
      for (const c of [...closers]) c();
    },
  };
}

export function abortError(signal: AbortSignal | undefined): AirlockError {
  const reason = signal?.reason instanceof Error ? signal.reason.message : "aborted";
  return new AirlockError("aborted", `waiting was aborted: ${reason}`);
}
