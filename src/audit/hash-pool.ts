// Verification's hashing on worker threads. Each event's own hash (HMAC-SHA-256 or SHA-256 over its
// canonical text) depends on that event alone; the chain is its links (each event names the hash of
// the one before), which the calling thread checks in order while it reads the next page. So pages
// are sent to the workers as they are read, a bounded number at a time, and the first failure in seq
// order is the same as a check on one thread would report.
//
// The workers run the built hash-worker.js; from the sources (tsx, the tests' runner), where there is
// no such file, `startHashPool` returns undefined and verification hashes on its own thread.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { canonicalJson } from "../core/hash.js";
import type { AuditEvent } from "../core/schemas.js";
import type { AuditPageEvent } from "../core/store.js";
import type { HashVerdict } from "./chain-check.js";

/** What a worker is started with. */
export interface HashPoolSetup {
  key: Uint8Array | null;
  keyedFrom: number | null;
}

/** A page of events as columns: one array per field, cheaper to copy to a worker than objects. */
export interface EventBatch {
  id: number;
  seq: number[];
  requestId: (string | null)[];
  type: string[];
  actor: string[];
  at: number[];
  dataJson: string[];
  prevHash: string[];
  hash: string[];
}

/** The first event of a batch whose hash does not check, if any. */
export interface WorkerAnswer {
  id: number;
  bad?: { seq: number; verdict: Exclude<HashVerdict, "ok"> };
}

export interface HashPool {
  /** Sends a page to a worker; resolves with its first failing event, or undefined. */
  check(events: readonly (AuditEvent | AuditPageEvent)[]): Promise<WorkerAnswer["bad"]>;
  close(): Promise<void>;
}

const WORKER_FILE = new URL("./hash-worker.js", import.meta.url);

/** Whether this copy of Airlock can hash on workers (the built package has the worker's file). */
export function hashWorkersAvailable(): boolean {
  return WORKER_FILE.protocol === "file:" && existsSync(fileURLToPath(WORKER_FILE));
}

/** Starts `workers` threads, or returns undefined when this copy cannot (see above). */
export function startHashPool(o: {
  key: Buffer | undefined;
  keyedFrom: number | undefined;
  workers: number;
}): HashPool | undefined {
  if (o.workers < 1 || !hashWorkersAvailable()) return undefined;
  const setup: HashPoolSetup = { key: o.key ?? null, keyedFrom: o.keyedFrom ?? null };
  const waiting = new Map<number, { resolve(a: WorkerAnswer): void; reject(e: Error): void }>();
  let failed: Error | undefined;
  let closing = false;
  const fail = (err: Error) => {
    failed ??= err;
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  const threads = Array.from({ length: o.workers }, () => {
    const w = new Worker(WORKER_FILE, { workerData: setup });
    w.on("message", (a: WorkerAnswer) => {
      waiting.get(a.id)?.resolve(a);
      waiting.delete(a.id);
    });
    w.on("error", (err: Error) =>
      fail(new Error(`an audit hashing thread failed: ${err.message}`)),
    );
    w.on("exit", (code) => {
      if (!closing) fail(new Error(`an audit hashing thread stopped (exit code ${code})`));
    });
    return w;
  });
  let next = 0;
  return {
    async check(events) {
      if (failed) throw failed;
      const id = ++next;
      const batch = toBatch(id, events);
      const answer = new Promise<WorkerAnswer>((resolve, reject) =>
        waiting.set(id, { resolve, reject }),
      );
      try {
        threads[id % threads.length]?.postMessage(batch);
      } catch (err) {
        waiting.delete(id);
        throw err;
      }
      return (await answer).bad;
    },
    async close() {
      closing = true;
      await Promise.all(threads.map((w) => w.terminate()));
    },
  };
}

function toBatch(id: number, events: readonly (AuditEvent | AuditPageEvent)[]): EventBatch {
  const b: EventBatch = {
    id,
    seq: [],
    requestId: [],
    type: [],
    actor: [],
    at: [],
    dataJson: [],
    prevHash: [],
    hash: [],
  };
  for (const e of events) {
    b.seq.push(e.seq);
    b.requestId.push(e.requestId ?? null);
    b.type.push(e.type);
    b.actor.push(e.actor);
    b.at.push(e.at);
    b.dataJson.push("dataJson" in e ? e.dataJson : canonicalJson(e.data));
    b.prevHash.push(e.prevHash);
    b.hash.push(e.hash);
  }
  return b;
}

/** Pages in flight on a pool, answered in the order they were sent: once more than `limit` are out,
 * sending waits for the oldest, so at most `limit + 1` pages are held at once. */
export function hashQueue(pool: HashPool, limit: number) {
  const inFlight: Promise<WorkerAnswer["bad"]>[] = [];
  return {
    /** Sends a page; when `limit` pages are out, first waits for the oldest: its failure, if any. */
    async add(events: readonly (AuditEvent | AuditPageEvent)[]): Promise<WorkerAnswer["bad"]> {
      const answer = pool.check(events);
      answer.catch(() => {}); // awaited below, in order; this only keeps it from counting as unhandled
      inFlight.push(answer);
      return inFlight.length > limit ? await inFlight.shift() : undefined;
    },
    /** Waits for every page out; the first failure in send order, if any. */
    async drain(): Promise<WorkerAnswer["bad"]> {
      while (inFlight.length > 0) {
        const bad = await inFlight.shift();
        if (bad) {
          inFlight.length = 0;
          return bad;
        }
      }
      return undefined;
    },
  };
}
