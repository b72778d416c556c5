// `engine.events()`: a live tail of the audit log. Each stream reads the store itself from its own
// position, so it sees every event once, in order, including those written by other processes; the
// feed only tells it when to read again.
import type { AuditEvent, EventType } from "../core/schemas.js";
import type { Store } from "../core/store.js";
import type { Feed } from "./feed.js";

export interface EventsOptions {
  requestId?: string;
  types?: EventType[];
  /** Start after this seq (resume); by default only events from now on. */
  after?: number;
  signal?: AbortSignal;
}

const PAGE = 500;

export interface StreamDeps {
  store: Pick<Store, "auditHead" | "listAudit">;
  feed: Pick<Feed, "subscribe">;
  isClosed(): boolean;
  /** Calls `stop` when the engine closes; returns the function that forgets it. */
  onClose(stop: () => void): () => void;
}

export async function* eventStream(
  deps: StreamDeps,
  opts: EventsOptions,
): AsyncGenerator<AuditEvent> {
  let pos = opts.after ?? (await deps.store.auditHead())?.seq ?? 0;
  let wake: (() => void) | undefined;
  let dirty = true;
  const unsubscribe = deps.feed.subscribe(() => {
    dirty = true;
    wake?.();
  });
  const onStop = () => wake?.();
  opts.signal?.addEventListener("abort", onStop);
  const forget = deps.onClose(onStop);
  try {
    while (!deps.isClosed() && !opts.signal?.aborted) {
      if (!dirty) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
        continue;
      }
      dirty = false;
      const page = await deps.store.listAudit({
        after: pos,
        limit: PAGE,
        ...(opts.requestId ? { requestId: opts.requestId } : {}),
      });
      for (const e of page) {
        pos = e.seq;
        if (opts.types && !opts.types.includes(e.type)) continue;
        yield e;
      }
      if (page.length === PAGE) dirty = true;
    }
  } finally {
    unsubscribe();
    forget();
    opts.signal?.removeEventListener("abort", onStop);
  }
}
