// Group commit for the SQLite store: the writes queued within one turn of the event loop are
// committed together, in one IMMEDIATE transaction, so 64 agents in flight share one commit (and
// the pages they both touch: the audit tail, the chain head, the index tails) instead of paying one
// each. Each write still runs in a savepoint of its own, in the order it was queued, and gets its own
// result: a write that throws (a taken id) is rolled back alone and the others commit. A storage
// fault (disk full, I/O error) or a failed COMMIT fails the whole batch, which then left nothing
// behind; a lock held by another process is waited for and the whole batch tried again.
import type Database from "better-sqlite3";

/** How many writes one transaction takes at most; the rest wait for the next one. */
const MAX_BATCH = 256;

export interface GroupCommit {
  /** Queues `work` (synchronous statements on the store's connection) for the next commit. */
  run<T>(work: () => T): Promise<T>;
  /** Resolves once every write queued so far has committed or failed. */
  drain(): Promise<void>;
}

interface Item {
  work: () => unknown;
  resolve(value: unknown): void;
  reject(err: unknown): void;
  outcome?: { ok: true; value: unknown } | { ok: false; err: unknown };
}

/** Called inside each batch's transaction: `begin` before its first write, `end` after its last. */
export interface BatchHooks {
  begin(): void;
  end(): void;
}

/** `commit` runs the synchronous batch (it waits out another process's lock and turns storage
 * faults into `store_unavailable`; see `whileLocked`). */
export function groupCommit(
  db: Database.Database,
  commit: (fn: () => void) => Promise<void>,
  hooks?: BatchHooks,
): GroupCommit {
  let queue: Item[] = [];
  let running: Promise<void> | undefined;

  // Nested better-sqlite3 transactions are savepoints: a throwing item is rolled back alone.
  const one = db.transaction((item: Item) => item.work());
  const all = db.transaction((batch: Item[]) => {
    hooks?.begin();
    const only = batch.length === 1 ? batch[0] : undefined;
    if (only) {
      // Alone in its transaction, a write needs no savepoint: its failure rolls back only itself.
      only.outcome = { ok: true, value: only.work() };
    } else {
      for (const item of batch) {
        try {
          item.outcome = { ok: true, value: one(item) };
        } catch (err) {
          if (isStorageFault(err)) throw err;
          item.outcome = { ok: false, err };
        }
      }
    }
    hooks?.end();
  });

  async function loop(): Promise<void> {
    // One turn of the event loop gathers the writes arriving together.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (queue.length > 0) {
      const batch = queue.slice(0, MAX_BATCH);
      queue = queue.slice(batch.length);
      try {
        await commit(() => {
          for (const item of batch) item.outcome = undefined;
          all.immediate(batch);
        });
      } catch (err) {
        // A lone write's own failure is its answer; in a batch, only a storage fault gets here.
        for (const item of batch) item.reject(err);
        continue;
      }
      for (const item of batch) {
        const o = item.outcome;
        if (o?.ok) item.resolve(o.value);
        else item.reject(o ? o.err : new Error("group commit: a write was not run"));
      }
    }
  }

  function start(): void {
    if (running) return;
    running = loop().finally(() => {
      running = undefined;
      if (queue.length > 0) start();
    });
  }

  return {
    run<T>(work: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
        start();
      });
    },
    async drain() {
      while (running) await running;
    },
  };
}

/** SQLite's own failures other than constraints (which belong to one write): they end the batch. */
function isStorageFault(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    typeof code === "string" && code.startsWith("SQLITE_") && !code.startsWith("SQLITE_CONSTRAINT")
  );
}
