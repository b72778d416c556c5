// Keeps long-lived answers (event streams, long-polls, the inbox's live updates) honest about the
// credential that opened them: each holds a signal that aborts once its token no longer
// authenticates. Tokens revoked through this server's API are noticed at once (`recheck()`); tokens
// revoked elsewhere (the CLI on the same database, another server process) before the next event is
// delivered (`confirm`), and by a periodic check every `checkMs` for answers that deliver nothing
// meanwhile. One timer for the whole server; one token lookup per distinct token per check, shared
// by all of that token's streams.
import { setMaxListeners } from "node:events";
import type { Logger } from "pino";
import { rerunner } from "../core/rerun.js";
import type { TokenStore } from "./tokens.js";

export interface CredentialWatch {
  /** A signal that aborts once the token with this SHA-256 stops authenticating. Call `release()`
   * when the answer that holds it ends. */
  watch(tokenHash: string): { signal: AbortSignal; release(): void };
  /** Checks every watched token now (after a revocation through this server). */
  recheck(): Promise<void>;
  /** Whether the token still authenticates, by a lookup made after event `seq` was published: a
   * stream calls it before delivering that event. Lookups are shared: one made after a later
   * event was published answers for this one too, and the token's other streams wait for the same
   * lookup. A revoked token's signal aborts. */
  confirm(tokenHash: string, seq: number): Promise<boolean>;
  /** A fresh lookup (a long-poll about to answer); aborts the token's signal when it is revoked. */
  stillValid(tokenHash: string): Promise<boolean>;
  /** Tokens being watched (for tests and diagnostics). */
  size(): number;
  stop(): void;
}

interface Entry {
  controller: AbortController;
  holders: number;
  /** Events up to this seq were published before the last lookup that found the token valid. */
  coveredSeq: number;
  inflight: { seq: number; result: Promise<boolean> } | undefined;
}

export function createCredentialWatch(
  tokens: TokenStore,
  logger: Logger,
  checkMs: number,
  /** The seq of the last event published to streams (the server's event hub). */
  published: () => number = () => 0,
): CredentialWatch {
  const entries = new Map<string, Entry>();

  /** True unless the token store says the token is gone; a store that cannot answer is not a
   * revocation. */
  async function lookup(hash: string): Promise<boolean> {
    try {
      return (await tokens.findByHash(hash)) !== undefined;
    } catch (err) {
      logger.debug({ err }, "could not re-check a token of an open stream");
      return true;
    }
  }

  function revoked(hash: string, entry: Entry | undefined) {
    if (!entry) return;
    entry.controller.abort(new Error("the token was revoked"));
    if (entries.get(hash) === entry) entries.delete(hash);
  }
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function checkAll(): Promise<void> {
    for (const [hash, entry] of [...entries]) {
      if (entry.controller.signal.aborted) continue;
      if (!(await lookup(hash))) revoked(hash, entry);
    }
    if (entries.size === 0) stopTimer();
  }

  const checker = rerunner(checkAll);
  const recheck = () => checker.run();

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
        entry = { controller, holders: 0, coveredSeq: 0, inflight: undefined };
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
    async confirm(tokenHash, seq) {
      const entry = entries.get(tokenHash);
      if (!entry) return false; // not watched, or already found revoked
      for (;;) {
        if (entry.controller.signal.aborted) return false;
        if (entry.coveredSeq >= seq) return true;
        const running = entry.inflight;
        if (running && running.seq >= seq) return running.result;
        if (running) {
          await running.result;
          continue;
        }
        // Everything published so far is covered by a lookup that starts now.
        const covers = Math.max(seq, published());
        const result = lookup(tokenHash).then((valid) => {
          entry.inflight = undefined;
          if (valid) entry.coveredSeq = Math.max(entry.coveredSeq, covers);
          else revoked(tokenHash, entry);
          return valid;
        });
        entry.inflight = { seq: covers, result };
        return result;
      }
    },
    async stillValid(tokenHash) {
      const valid = await lookup(tokenHash);
      if (!valid) revoked(tokenHash, entries.get(tokenHash));
      return valid;
    },
    size: () => entries.size,
    stop() {
      stopped = true;
      stopTimer();
    },
  };
}
