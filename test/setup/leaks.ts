// After each test file: nothing it opened may still be open. Two checks, after the file's own hooks
// (this file's afterAll is registered first, so it runs last):
//   - the resources keeping the process alive (`process.getActiveResourcesInfo()`: servers, sockets
//     of pools and HTTP clients, child processes and their pipes, timers) are no more than when the
//     file started, once a short grace period has let closing sockets and exiting children finish;
//   - every SQLite database opened through better-sqlite3 (each SQLite store, and so each engine on
//     one, and each token store) has been closed.
// A file that leaks fails with the list. AIRLOCK_TEST_LEAKS=warn prints it instead of failing.
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, expect } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Files known to leak, each with what it leaves open: reported on stderr, not failed, until fixed.
 * Remove an entry with its fix. */
const KNOWN_LEAKS: Record<string, string> = {};

/** How long closing things get to finish before what is left counts as a leak. */
const GRACE_MS = 3000;
/** Short-lived requests (a file read, a DNS lookup, a write in flight): not things that stay open. */
const TRANSIENT = new Set([
  "CloseReq",
  "ConnectWrap",
  "FSReqCallback",
  "FSReqPromise",
  "GetAddrInfoReqWrap",
  "Immediate",
  "QueryReqWrap",
  "ShutdownWrap",
  "TTYWrap",
  "WriteWrap",
]);

function counts(): Map<string, number> {
  const out = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) {
    if (!TRANSIENT.has(type)) out.set(type, (out.get(type) ?? 0) + 1);
  }
  return out;
}

function extra(before: Map<string, number>): string[] {
  const found: string[] = [];
  for (const [type, n] of counts()) {
    const more = n - (before.get(type) ?? 0);
    if (more > 0) found.push(`${more} × ${type}`);
  }
  return found;
}

// Every database better-sqlite3 opens passes through `prepare` or `pragma` right away (the stores
// set their pragmas first): both are wrapped to remember the database. The in-process files run
// without isolation (one module graph per worker, this file evaluated again for each test file, the
// wrappers installed once): the set is kept on globalThis, so the wrappers of the first evaluation
// fill the set every later one reads.
const shared = globalThis as { airlockOpenedDatabases?: Set<Database.Database> };
shared.airlockOpenedDatabases ??= new Set<Database.Database>();
const opened = shared.airlockOpenedDatabases;
const proto = Database.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
for (const method of ["prepare", "pragma", "exec"]) {
  const original = proto[method] as (...args: unknown[]) => unknown;
  if ((original as { leakWrapped?: boolean }).leakWrapped) continue;
  const wrapped = function (this: Database.Database, ...args: unknown[]) {
    opened.add(this);
    return original.apply(this, args);
  };
  (wrapped as { leakWrapped?: boolean }).leakWrapped = true;
  proto[method] = wrapped;
}

const before = counts();

afterAll(async () => {
  const deadline = Date.now() + GRACE_MS;
  let handles = extra(before);
  while (handles.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    handles = extra(before);
  }
  const databases = [...opened].filter((db) => db.open).map((db) => db.name);
  opened.clear();
  if (handles.length === 0 && databases.length === 0) return;
  const path = expect.getState().testPath;
  const file = path ? relative(ROOT, path).split("\\").join("/") : "this test file";
  const lines = [
    ...handles.map((h) => `still open after the file (and ${GRACE_MS} ms): ${h}`),
    ...databases.map((name) => `SQLite database never closed: ${name}`),
  ];
  const message = `${file} leaks:\n  ${lines.join("\n  ")}\nClose every engine, store, pool, server and child process the file opens (afterEach/afterAll).`;
  const known = KNOWN_LEAKS[file];
  if (known) process.stderr.write(`${message}\n(known: ${known})\n`);
  else if (process.env.AIRLOCK_TEST_LEAKS === "warn") process.stderr.write(`${message}\n`);
  else throw new Error(message);
});
