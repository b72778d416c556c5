// The engine's view of the audit log as a live feed. Every change, our own or another process's, is
// read back from the store in `seq` order ("pumped"), so subscribers see each event exactly once and
// in order, whichever process wrote it. Other processes' commits are noticed through the store's
// change signal, which is only listened to while somebody is waiting or subscribed.
import type { Logger } from "pino";
import { rerunner } from "../core/rerun.js";
import type { AuditEvent } from "../core/schemas.js";
import type { Store } from "../core/store.js";

export interface FeedSource {
  head(): Promise<number>;
  readAfter(seq: number, limit: number): Promise<AuditEvent[]>;
  onExternalChange(listener: () => void): () => void;
  onError(err: unknown): void;
  /** A read for subscribers failed after a commit (see `settle`); it is retried in `retryInMs`. */
  onReadError?(err: unknown, retryInMs: number): void;
}

export type FeedListener = (event: AuditEvent) => void;

export interface Feed {
  /** Reads and dispatches everything new. Resolves once the events written so far are dispatched.
   * `written` are the events the caller just appended: with nobody listening nothing is read and the
   * position moves past them; when they follow on from the position they are dispatched as they are. */
  pump(written?: AuditEvent[]): Promise<void>;
  /** `pump` for a writer whose change is already committed: it never rejects, so the writer reports
   * what it committed. A failed read is reported (`onReadError`) and retried in the background, with
   * a backoff of at most RETRY_MAX_MS, until it succeeds or the feed stops. */
  settle(written?: AuditEvent[]): Promise<void>;
  subscribe(listener: FeedListener): () => void;
  /** The seq of the last dispatched event. */
  position(): number;
  start(): Promise<void>;
  stop(): void;
}

const PAGE = 1000;
const IDLE_UNWATCH_MS = 1000;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5000;

export function createFeed(source: FeedSource): Feed {
  const listeners = new Set<FeedListener>();
  let lastSeq = 0;
  const drainer = rerunner(drain, () => stopped);
  let unwatch: (() => void) | undefined;
  let stopped = false;
  let idleTimer: NodeJS.Timeout | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryDelay = RETRY_MIN_MS;

  async function drain() {
    for (;;) {
      const events = await source.readAfter(lastSeq, PAGE);
      for (const e of events) if (e.seq > lastSeq) dispatch(e);
      if (events.length < PAGE) return;
    }
  }

  function dispatch(e: AuditEvent) {
    lastSeq = e.seq;
    for (const l of [...listeners]) {
      try {
        l(e);
      } catch (err) {
        source.onError(err);
      }
    }
  }

  function pump(written?: AuditEvent[]): Promise<void> {
    if (stopped) return Promise.resolve();
    const last = written?.[written.length - 1]?.seq;
    if (listeners.size === 0 && !drainer.busy) {
      if (last !== undefined && last > lastSeq) lastSeq = last;
      return Promise.resolve();
    }
    // Our own events follow straight on from what was dispatched: no other writer came between, so
    // dispatch them as they are instead of reading them back.
    if (!drainer.busy && written?.length && written[0]?.seq === lastSeq + 1) {
      for (const e of written) dispatch(e);
      return Promise.resolve();
    }
    // A pump under way may have read before our write: then it runs once more after it.
    return drainer.run();
  }

  async function settle(written?: AuditEvent[]): Promise<void> {
    try {
      await pump(written);
    } catch (err) {
      retryLater(err);
    }
  }

  function retryLater(err: unknown) {
    if (stopped || retryTimer) return;
    const delay = retryDelay;
    retryDelay = Math.min(retryDelay * 2, RETRY_MAX_MS);
    (source.onReadError ?? source.onError)(err, delay);
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      pump().then(() => {
        retryDelay = RETRY_MIN_MS;
      }, retryLater);
    }, delay);
    retryTimer.unref();
  }

  function watch() {
    if (unwatch || stopped) return;
    unwatch = source.onExternalChange(() => {
      void pump().catch(source.onError);
    });
  }

  return {
    pump,
    settle,
    position: () => lastSeq,
    subscribe(listener) {
      listeners.add(listener);
      watch();
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && unwatch && !idleTimer) {
          // Keep watching a little longer: waiters come and go quickly, and starting and stopping
          // the store's change signal for each one costs more than the wait.
          idleTimer = setTimeout(() => {
            idleTimer = undefined;
            if (listeners.size === 0 && unwatch) {
              unwatch();
              unwatch = undefined;
            }
          }, IDLE_UNWATCH_MS);
          idleTimer.unref();
        }
      };
    },
    async start() {
      lastSeq = await source.head();
    },
    stop() {
      stopped = true;
      if (idleTimer) clearTimeout(idleTimer);
      idleTimer = undefined;
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = undefined;
      unwatch?.();
      unwatch = undefined;
      listeners.clear();
    },
  };
}

/** The feed of a store's audit log, reporting its errors to `logger`. */
export function storeFeed(
  store: Pick<Store, "auditHead" | "listAudit" | "onExternalChange">,
  logger: Logger,
): Feed {
  return createFeed({
    head: async () => (await store.auditHead())?.seq ?? 0,
    readAfter: (seq, limit) => store.listAudit({ after: seq, limit }),
    onExternalChange: (l) => store.onExternalChange(l),
    onError: (err) => logger.error({ err }, "airlock background error"),
    onReadError: (err, retryInMs) =>
      logger.warn(
        { err, retry_in_ms: retryInMs },
        "could not read the audit log to notify subscribers; the change is committed, retrying",
      ),
  });
}
