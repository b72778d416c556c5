// What the server knows about its storage, learnt from the answers it gives: a request that fails
// with `store_unavailable` (disk full, database read-only or locked, connection lost) starts a fault
// "episode", logged once with its cause; later failures of the same episode are only counted. The
// episode ends when a write succeeds again or when no failure was seen for `quietMs`, and its end
// is logged too. `/healthz` reads `state()`: it costs nothing and never touches the store.
import type { Logger } from "pino";

export interface StorageState {
  ok: boolean;
  /** When the current fault episode started (epoch ms). */
  since?: number;
  /** The last failure's message. */
  detail?: string;
  /** Failures seen in this episode. */
  failures?: number;
}

export interface StorageHealth {
  /** Records a storage failure. Returns true when it starts an episode (and was logged). */
  fault(err: unknown): boolean;
  /** Records a successful write: ends the episode, if any. */
  recovered(): void;
  state(): StorageState;
}

export function createStorageHealth(
  logger: Logger,
  quietMs: number,
  now: () => number = Date.now,
): StorageHealth {
  let episode: { since: number; last: number; detail: string; failures: number } | undefined;

  function end(reason: string) {
    if (!episode) return;
    logger.warn(
      { failures: episode.failures, fault_ms: now() - episode.since, reason },
      "storage available again",
    );
    episode = undefined;
  }

  function expire() {
    if (episode && now() - episode.last >= quietMs) end(`no failure for ${quietMs} ms`);
  }

  return {
    fault(err) {
      expire();
      const detail = err instanceof Error ? err.message : String(err);
      const t = now();
      if (episode) {
        episode.failures++;
        episode.last = t;
        episode.detail = detail;
        return false;
      }
      episode = { since: t, last: t, detail, failures: 1 };
      const cause = err instanceof Error && err.cause !== undefined ? err.cause : undefined;
      logger.error(
        { err, cause },
        "storage unavailable: answering 503 with Retry-After until it recovers (logged once per episode)",
      );
      return true;
    },
    recovered() {
      end("a write succeeded");
    },
    state() {
      expire();
      if (!episode) return { ok: true };
      return {
        ok: false,
        since: episode.since,
        detail: episode.detail,
        failures: episode.failures,
      };
    },
  };
}
