// Checkpoints the SQLite WAL on a worker thread, so the page copying a checkpoint does (WAL → database
// file) is off the thread that commits. SQLite's automatic checkpoint runs inside the commit that
// fills the WAL past `wal_autocheckpoint` pages: with every gate writing ~25 pages that was a
// checkpoint every ~40 round trips, and about a fifth of the round trip's time.
//
// The connection's own automatic checkpoint stays on, as the finisher: a checkpoint running beside
// a stream of commits never catches up with the last frame, and SQLite only rewinds the WAL to its
// start after a checkpoint that did. When the WAL fills, the commit's own checkpoint finds nearly
// everything copied already, copies the rest and lets the next write rewind. So the WAL stays as
// bounded as before, and a thread that fails costs speed, never data or correctness.
//
// Durability is SQLite's: a checkpoint syncs as the `synchronous` setting says (passed on), and a
// checkpoint cut short by a crash is redone from the WAL on the next open.
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

export interface CheckpointerOptions {
  /** The database file (in WAL mode). */
  path: string;
  /** The committing connection's `PRAGMA synchronous` (0–3), which a checkpoint's syncs follow. */
  synchronous: number;
  /** How long the thread's checkpoint waits for a lock before trying later. */
  busyTimeoutMs: number;
  /** Commits arriving within this many ms of the first are checkpointed together. @default 5 */
  gatherMs?: number;
  /** A thread that could not open the file or failed otherwise: it stops; commits go on. */
  onError?: (err: Error) => void;
}

export interface Checkpointer {
  /** Tells the thread a commit landed (an atomic add; wakes the thread if it waits). */
  committed(): void;
  /** Stops the thread and waits for it to exit (after the checkpoint it may be running). */
  stop(): Promise<void>;
}

/** Slots of the shared signal: commits so far, and 1 once the thread must stop. */
const COMMITS = 0;
const STOP = 1;
/** How long stop() waits for the thread to end on its own before terminating it. */
const STOP_WAIT_MS = 5_000;

// The worker's code, evaluated as a script: it runs the same from the TypeScript sources (tests) and
// from the build, with no separate file to ship. It is plain JavaScript on purpose.
const WORKER_SOURCE = `
const { workerData, parentPort } = require("node:worker_threads");
const signal = new Int32Array(workerData.signal);
const stopping = () => Atomics.load(signal, ${STOP}) !== 0;
function isBusy(err) {
  const code = String((err && err.code) || "");
  return code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED");
}
function run() {
  const Database = require(workerData.driver);
  const db = new Database(workerData.path, { fileMustExist: true });
  try {
    db.pragma("busy_timeout = " + workerData.busyTimeoutMs);
    let configured = false;
    // From zero, not from the count now: commits made while this thread was starting count too.
    let seen = 0;
    for (;;) {
      Atomics.wait(signal, ${COMMITS}, seen);
      // Let the commits arriving meanwhile gather (a stop cuts this short).
      Atomics.wait(signal, ${STOP}, 0, workerData.gatherMs);
      // The count before the flag: stop() raises the flag first and moves the count after, so
      // either the flag is seen here or the next wait for a commit returns at once.
      seen = Atomics.load(signal, ${COMMITS});
      if (stopping()) return;
      try {
        // Setting synchronous reads the schema, so it may meet a lock too: tried until it is set.
        if (!configured) {
          db.pragma("synchronous = " + workerData.synchronous);
          configured = true;
        }
        db.pragma("wal_checkpoint(PASSIVE)");
      } catch (err) {
        // Another connection holds what a checkpoint needs: try again after the next commit.
        if (!isBusy(err)) throw err;
      }
    }
  } finally {
    db.close();
  }
}
try {
  run();
} catch (err) {
  parentPort.postMessage({ failed: String((err && err.message) || err), code: (err && err.code) || null });
}
`;

/** Starts the thread. It never keeps the process alive: a store left open does not hang an exit. */
export function startCheckpointer(o: CheckpointerOptions): Checkpointer {
  const signal = new Int32Array(new SharedArrayBuffer(8));
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      signal: signal.buffer,
      driver,
      path: o.path,
      synchronous: o.synchronous,
      busyTimeoutMs: o.busyTimeoutMs,
      gatherMs: o.gatherMs ?? 5,
    },
  });
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  const report = (text: string) =>
    o.onError?.(new Error(`the SQLite checkpoint thread stopped: ${text}`));
  worker.on("message", (m: { failed?: string; code?: string | null }) => {
    if (m.failed !== undefined) report(m.code ? `${m.failed} (${m.code})` : m.failed);
  });
  worker.on("error", (err: Error) => report(err.message));
  let stopped = false;
  worker.on("exit", (code) => {
    if (code !== 0 && !stopped) report(`it exited with code ${code}`);
  });
  // After the listeners: adding a "message" listener refers the thread again.
  worker.unref();
  return {
    committed() {
      Atomics.add(signal, COMMITS, 1);
      Atomics.notify(signal, COMMITS, 1);
    },
    async stop() {
      // Held while stopping: an unreferenced thread would let the process exit before it closed.
      worker.ref();
      if (!stopped) {
        stopped = true;
        Atomics.store(signal, STOP, 1);
        // The count changes too, so a thread about to wait for a commit does not wait at all.
        Atomics.add(signal, COMMITS, 1);
        Atomics.notify(signal, COMMITS, 1);
        Atomics.notify(signal, STOP, 1);
      }
      // A checkpoint in progress ends first; one stuck past STOP_WAIT_MS is cut short.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), STOP_WAIT_MS);
      });
      const how = await Promise.race([exited, late]);
      clearTimeout(timer);
      if (how === "late") await worker.terminate();
      await exited;
    },
  };
}
