// Keeps long-lived answers (event streams, long-polls, the inbox's live updates) honest about the
// credential that opened them: each holds a signal that aborts once its token no longer
// authenticates. Tokens revoked through this server's API are noticed at once (`recheck()`); tokens
// revoked elsewhere (the CLI on the same database, another server process) at the next check, every
// `checkMs`. One timer for the whole server, one token lookup per distinct token per check.
import { setMaxListeners } from "node:events";
import type { Logger } from "pino";
import type { TokenStore } from "./tokens.js";

export interface CredentialWatch {
  /** A signal that aborts once the token with this SHA-256 stops authenticating. Call `release()`
   * when the answer that holds it ends. */
  watch(tokenHash: string): { signal: AbortSignal; release(): void };
  /** Checks every watched token now (after a revocation through this server). */
  recheck(): Promise<void>;
  /** Tokens being watched (for tests and diagnostics). */
  size(): number;
  stop(): void;
}

interface Entry {
  controller: AbortController;
  holders: number;
}

export function createCredentialWatch(
  tokens: TokenStore,
  logger: Logger,
  checkMs: number,
): CredentialWatch {
  const entries = new Map<string, Entry>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  async function checkAll(): Promise<void> {
    for (const [hash, entry] of [...entries]) {
      if (entry.controller.signal.aborted) continue;
      let valid = true;
      try {
        valid = (await tokens.findByHash(hash)) !== undefined;
      } catch (err) {
        // The token store cannot answer: keep the stream (a storage fault is not a revocation).
        logger.debug({ err }, "could not re-check a token of an open stream");
      }
      if (!valid) {
        entry.controller.abort(new Error("the token was revoked"));
        entries.delete(hash);
      }
    }
    if (entries.size === 0) stopTimer();
  }

  function recheck(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await checkAll();
        } while (again);
      } finally {
        running = undefined;
      }
    })();
    return running;
  }

  function startTimer() {
    if (timer || stopped) return;
    timer = setInterval(() => void recheck(), checkMs);
    timer.unref();
  }

  function stopTimer() {
    if (timer) clearInterval(timer);
    timer = undefined;
  }

  return {
    watch(tokenHash) {
      let entry = entries.get(tokenHash);
      if (!entry) {
        const controller = new AbortController();
        // Every stream of one token listens to it: many listeners are normal, not a leak.
        setMaxListeners(0, controller.signal);
        entry = { controller, holders: 0 };
        entries.set(tokenHash, entry);
      }
      const held = entry;
      held.holders++;
      startTimer();
      let released = false;
      return {
        signal: held.controller.signal,
        release() {
          if (released) return;
          released = true;
          held.holders--;
          if (held.holders === 0 && entries.get(tokenHash) === held) entries.delete(tokenHash);
          if (entries.size === 0) stopTimer();
        },
      };
    },
    recheck,
    size: () => entries.size,
    stop() {
      stopped = true;
      stopTimer();
    },
  };
}
