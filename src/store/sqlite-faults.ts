// SQLite's storage faults, told apart from bugs: a lock held by another process is waited for on
// timers (so the event loop stays free), and disk full, read-only, I/O errors and a file that cannot
// be opened become `store_unavailable`, which the server answers with 503 and Retry-After.
import { AirlockError, isAirlockError } from "../core/errors.js";

export function isLocked(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
  );
}

/** A storage fault as `store_unavailable`, naming the database and what failed; other errors
 * (constraint violations, bugs) pass unchanged. */
export function sqliteFault(err: unknown, where: string, what: string): unknown {
  if (isAirlockError(err)) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return err;
  const message = (err as Error).message;
  const fault = (text: string) =>
    new AirlockError("store_unavailable", `${text} (${what}): ${message}`, { cause: err });
  if (isLocked(err)) return fault(`${where} is locked by another process`);
  if (code.startsWith("SQLITE_FULL")) {
    return fault(`${where} cannot grow: the disk or its size limit is full`);
  }
  if (code.startsWith("SQLITE_READONLY")) return fault(`${where} is read-only`);
  if (code.startsWith("SQLITE_IOERR")) return fault(`${where} failed to read or write its file`);
  if (code.startsWith("SQLITE_CANTOPEN")) return fault(`${where} cannot be opened`);
  return err;
}

export interface LockWait {
  /** The database, for messages ("the SQLite database at ./airlock.db"). */
  where: string;
  /** What was being done, for messages. */
  what: string;
  /** How long to keep trying while another process holds the lock, in ms. */
  waitMs: number;
  /** Called before each retry; throws when the caller was closed meanwhile. */
  guard?: () => void;
}

/** Runs the synchronous `fn` (whose connection has a short busy_timeout); while another process
 * holds the lock, tries again after a pause on a timer until `waitMs` has passed, then fails with
 * `store_unavailable`. Other faults become `store_unavailable` at once. */
export async function whileLocked<T>(fn: () => T, o: LockWait): Promise<T> {
  const until = Date.now() + o.waitMs;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    try {
      return fn();
    } catch (err) {
      if (!isLocked(err)) throw sqliteFault(err, o.where, o.what);
      const left = until - Date.now();
      if (left <= 0) {
        throw new AirlockError(
          "store_unavailable",
          `${o.where} is locked by another process (${o.what} waited ${o.waitMs} ms for it): try again shortly`,
          { cause: err },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
      o.guard?.();
    }
  }
}
