// The WAL checkpoint thread (src/store/sqlite-checkpointer.ts): it copies committed pages into the
// database file while the committing thread goes on, stops when asked, reports a file it cannot
// open, and never keeps a process alive. With the connection's own automatic checkpoint turned off,
// the database file can only grow through the thread, which is what these tests watch.
import { statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { verifyAuditLog } from "../../src/audit/verify.js";
import { createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import * as threads from "../../src/store/sqlite-checkpointer.js";
import { startCheckpointer } from "../../src/store/sqlite-checkpointer.js";
import { request } from "../audit/fixtures.js";
import { eventually, startLineChild, tempDir } from "../helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tmpDb(): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return join(t.dir, "a.db");
}

/** Whether `check` became true within 10 s (polled by the suite's helper). */
async function becomes(check: () => boolean): Promise<boolean> {
  return eventually(check).then(
    () => true,
    () => check(),
  );
}

/** A thread on `path` (synchronous = NORMAL) whose errors go to `errors`. */
function startOn(path: string, errors: Error[]) {
  return startCheckpointer({
    path,
    synchronous: 1,
    busyTimeoutMs: 25,
    onError: (e) => errors.push(e),
  });
}

/** A WAL database whose connection never checkpoints by itself, holding about 2 MB in its WAL. */
function walOnlyDb(path: string): Database.Database {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("wal_autocheckpoint = 0");
  db.exec("CREATE TABLE t (n INTEGER PRIMARY KEY, body TEXT NOT NULL)");
  const ins = db.prepare("INSERT INTO t (body) VALUES (?)");
  db.transaction(() => {
    for (let i = 0; i < 500; i++) ins.run(`${i}:${"x".repeat(4000)}`);
  })();
  return db;
}

describe("the checkpoint thread", () => {
  it("copies committed pages into the database file once told of a commit", async () => {
    const path = tmpDb();
    const db = walOnlyDb(path);
    cleanups.push(() => {
      db.close();
    });
    const before = statSync(path).size;
    expect(before).toBeLessThan(100_000); // everything is still in the WAL

    const errors: Error[] = [];
    const c = startOn(path, errors);
    cleanups.push(() => c.stop());
    c.committed();
    expect(await becomes(() => statSync(path).size > 2_000_000)).toBe(true);
    await c.stop();
    expect(errors).toEqual([]);

    // What was copied is what was committed.
    const other = new Database(path, { readonly: true });
    cleanups.push(() => {
      other.close();
    });
    expect(other.prepare("SELECT COUNT(*) AS n FROM t").get()).toEqual({ n: 500 });
  });

  it("waits for a commit before checkpointing, and stops at once when asked", async () => {
    const path = tmpDb();
    const db = walOnlyDb(path);
    cleanups.push(() => {
      db.close();
    });
    const c = startOn(path, []);
    await new Promise((r) => setTimeout(r, 300));
    expect(statSync(path).size).toBeLessThan(100_000); // not told of a commit: nothing copied
    await c.stop();
    await c.stop(); // a second stop is a no-op
    c.committed(); // and a commit after stopping wakes nothing
    expect(statSync(path).size).toBeLessThan(100_000);
  });

  it("stops every time when stopped right after a commit (100 times)", async () => {
    const path = tmpDb();
    const db = walOnlyDb(path);
    cleanups.push(() => {
      db.close();
    });
    const errors: Error[] = [];
    for (let i = 0; i < 100; i++) {
      const c = startOn(path, errors);
      c.committed();
      // Now, or after the thread is up and gathering, or while it checkpoints.
      if (i % 3 === 1) await new Promise((r) => setImmediate(r));
      if (i % 3 === 2) await new Promise((r) => setTimeout(r, 8));
      await c.stop();
    }
    expect(errors).toEqual([]);
  });

  it("reports a file it cannot open, naming the thread, and exits", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const path = join(t.dir, "missing.db");
    const errors: Error[] = [];
    const c = startOn(path, errors);
    expect(await becomes(() => errors.length > 0)).toBe(true);
    expect(errors[0]?.message).toMatch(
      /^the SQLite checkpoint thread stopped: .*(unable to open|SQLITE_CANTOPEN)/,
    );
    await c.stop(); // resolves: the thread has already exited
  });
});

describe("the SQLite store's checkpoint thread", () => {
  it("starts after a few hundred commits and copies the WAL while gates go on; all verifies", async () => {
    const path = tmpDb();
    const errors: Error[] = [];
    const engine = await createAirlock({
      store: sqliteStore(path, {
        onError: (e) => errors.push(e),
        // Only the thread may copy pages into the database file.
        configure: (d) => d.pragma("wal_autocheckpoint = 0"),
      }),
    });
    let closed = false;
    cleanups.push(async () => {
      if (!closed) await engine.close();
    });
    const start = statSync(path).size;
    const ids: string[] = [];
    for (let i = 0; i < 400; i++) {
      const r = await engine.request({
        title: `gate ${i}`,
        requester: "agent",
        timeoutMs: 600_000,
      });
      await engine.decide(r.id, { outcome: i % 2 ? "approved" : "rejected", reviewer: "alice" });
      ids.push(r.id);
    }
    expect(await becomes(() => statSync(path).size > start + 100_000)).toBe(true);
    await engine.close();
    closed = true;
    expect(errors).toEqual([]);

    const store = sqliteStore(path);
    cleanups.push(() => store.close());
    expect((await store.getRequest(ids[399] as string))?.status).toBe("approved");
    expect((await store.getRequest(ids[398] as string))?.status).toBe("rejected");
    expect((await verifyAuditLog(store)).ok).toBe(true);
  });

  it("is not started when turned off", async () => {
    const path = tmpDb();
    const engine = await createAirlock({
      store: sqliteStore(path, {
        checkpointThread: false,
        configure: (d) => d.pragma("wal_autocheckpoint = 0"),
      }),
    });
    cleanups.push(() => engine.close());
    const start = statSync(path).size;
    for (let i = 0; i < 300; i++) {
      await engine.request({ title: `gate ${i}`, requester: "agent", timeoutMs: 600_000 });
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(statSync(path).size).toBe(start);
  });

  it("does not keep a process alive whose store was left open", async () => {
    const path = tmpDb();
    const child = startLineChild(join(import.meta.dirname, "checkpoint-exit-child.ts"), [path]);
    cleanups.push(() => {
      child.child.kill("SIGKILL");
    });
    // The thread ran: it copied pages, which nothing else in the child does.
    expect(await child.line("copied", 25_000)).toBe("copied");
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      child.exited,
      new Promise<"still running">((r) => {
        timer = setTimeout(() => r("still running"), 20_000);
      }),
    ]);
    clearTimeout(timer);
    expect(code).toBe(0);
    expect(child.lines.filter((l) => l.startsWith("error"))).toEqual([]);
  });

  it("a process killed while the thread checkpoints loses no committed write; the log verifies", async () => {
    const path = tmpDb();
    const child = startLineChild(join(import.meta.dirname, "checkpoint-crash-child.ts"), [path]);
    cleanups.push(() => {
      child.child.kill("SIGKILL");
    });
    // Well past the thread's start (200 commits), with checkpoints running every few ms.
    await child.until((l) => l.length >= 1_500, 25_000, "commit 1,500 writes");
    child.child.kill("SIGKILL");
    expect(await child.exited).toBeNull();
    // Every line the child printed before it died, not only those read so far.
    const out = child.child.stdout;
    if (out && !out.closed) await new Promise((r) => out.once("close", r));
    expect(child.lines.filter((l) => l.startsWith("error"))).toEqual([]);
    const committed = child.lines
      .filter((l) => l.startsWith("committed "))
      .map((l) => l.slice("committed ".length));
    expect(committed.length).toBeGreaterThanOrEqual(1_500);
    // The thread had copied pages into the database file (the child's connection never does).
    expect(statSync(path).size).toBeGreaterThan(500_000);

    const store = sqliteStore(path);
    cleanups.push(() => store.close());
    for (const id of committed) expect((await store.getRequest(id))?.status, id).toBe("rejected");
    const verified = await verifyAuditLog(store);
    expect(verified.ok).toBe(true);
    // Every printed write is there, and at most the one in flight beyond them.
    expect(verified.count).toBeGreaterThanOrEqual(committed.length * 2);
    expect(verified.count).toBeLessThanOrEqual(committed.length * 2 + 2);
  });

  it("resolves a relative path when the store opens, not when the thread starts", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const elsewhere = tempDir();
    cleanups.push(elsewhere.cleanup);
    const cwd = process.cwd();
    cleanups.push(() => process.chdir(cwd));
    process.chdir(t.dir);
    const errors: Error[] = [];
    const store = sqliteStore("gates.db", {
      onError: (e) => errors.push(e),
      configure: (d) => d.pragma("wal_autocheckpoint = 0"),
    });
    cleanups.push(() => store.close());
    process.chdir(elsewhere.dir);
    const path = join(t.dir, "gates.db");
    const start = statSync(path).size;
    for (let i = 0; i < 250; i++) {
      const id = `req-${String(i).padStart(4, "0")}`;
      await store.insertRequest(request(id), [
        { type: "created", requestId: id, actor: "writer", at: 1, data: {} },
      ]);
    }
    expect(await becomes(() => statSync(path).size > start)).toBe(true);
    expect(errors).toEqual([]);
  });

  it("goes on committing, and says why, when the thread cannot start", async () => {
    const path = tmpDb();
    const errors: Error[] = [];
    const store = sqliteStore(path, {
      onError: (e) => errors.push(e),
      configure: (d) => d.pragma("wal_autocheckpoint = 0"),
    });
    cleanups.push(() => store.close());
    // No threads at all in this process, as in some sandboxes: starting one throws.
    const spy = vi.spyOn(threads, "startCheckpointer").mockImplementation(() => {
      throw new Error("threads are not available here");
    });
    cleanups.push(() => spy.mockRestore());
    for (let i = 0; i < 250; i++) {
      const id = `req-${String(i).padStart(4, "0")}`;
      await store.insertRequest(request(id), [
        { type: "created", requestId: id, actor: "writer", at: 1, data: {} },
      ]);
    }
    expect(spy).toHaveBeenCalledTimes(1);
    expect(errors.map((e) => e.message)).toEqual([
      "the SQLite checkpoint thread could not start: threads are not available here",
    ]);
    expect(await store.getRequest("req-0249")).toBeDefined();
    expect((await verifyAuditLog(store)).ok).toBe(true);
  });
});
