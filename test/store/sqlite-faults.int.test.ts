// Storage faults of the SQLite store become `store_unavailable` with a message that says what is
// wrong (locked by another process, read-only, full), and a lock held by another process never
// freezes the event loop: each attempt waits briefly and the next one is scheduled on a timer.
import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/core/store.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { request } from "../audit/fixtures.js";
import { tempDir, watchEventLoop } from "../helpers.js";
import { startChild } from "../postgres/child.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tmpDb() {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return join(t.dir, "a.db");
}

function open(db: string, options: Parameters<typeof sqliteStore>[1] = {}): Store {
  const s = sqliteStore(db, options);
  cleanups.push(() => s.close());
  return s;
}

const created = (id: string) => [
  { type: "created" as const, requestId: id, actor: "writer", at: 1, data: {} },
];

describe("SQLite storage faults", () => {
  it("another process holding the write lock: store_unavailable within the bound, event loop free, reads answered", async () => {
    const db = tmpDb();
    const store = open(db);
    await store.insertRequest(request("req_before"), created("req_before"));
    const holder = startChild("../store/lock-child.ts", { DB: db });
    cleanups.push(() => holder.stop());
    await holder.next("locked");

    // A timer ticking every 10 ms: while the write waits for the lock, its ticks keep coming.
    const loop = watchEventLoop();
    const started = Date.now();
    const write = store.insertRequest(request("req_blocked"), created("req_blocked"));
    // Reads go on meanwhile (WAL readers do not wait for the writer).
    expect((await store.getRequest("req_before"))?.id).toBe("req_before");
    expect((await store.listSummaries({})).items.map((s) => s.id)).toEqual(["req_before"]);
    const err = await write.then(
      () => undefined,
      (e: unknown) => e,
    );
    const waited = Date.now() - started;
    const maxGap = loop.stop();
    expect(err).toMatchObject({
      code: "store_unavailable",
      message: expect.stringMatching(/is locked by another process .*waited 2000 ms/),
    });
    expect(waited).toBeGreaterThanOrEqual(1900);
    expect(waited).toBeLessThan(4000);
    // Loosely: no tick was held up anywhere near the lock's duration (each attempt blocks ~25 ms).
    expect(maxGap).toBeLessThan(500);

    holder.send({ type: "release" });
    await holder.next("released");
    const ok = await store.insertRequest(request("req_after"), created("req_after"));
    expect(ok.created).toBe(true);
    expect(await store.getRequest("req_blocked")).toBeUndefined();
  });

  it("a write that gets the lock within the bound succeeds", async () => {
    const db = tmpDb();
    const store = open(db);
    await store.migrate();
    const holder = startChild("../store/lock-child.ts", { DB: db });
    cleanups.push(() => holder.stop());
    await holder.next("locked");
    const write = store.insertRequest(request("req_waits"), created("req_waits"));
    setTimeout(() => holder.send({ type: "release" }), 300);
    expect((await write).created).toBe(true);
  });

  it("a read-only database says read-only", async () => {
    const db = tmpDb();
    const first = sqliteStore(db);
    await first.insertRequest(request("req_1"), created("req_1"));
    await first.close();
    try {
      execFileSync("chattr", ["+i", db], { stdio: "ignore" });
    } catch {
      // Without chattr (not root, or a file system without attributes), a read-only file cannot
      // be made for a root process: the mapping is covered by the disk-full test's path.
      return;
    }
    cleanups.push(() => {
      execFileSync("chattr", ["-i", db], { stdio: "ignore" });
    });
    const message = new RegExp(
      `the SQLite database at ${db.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is read-only: the file cannot be written`,
    );
    // Refused at once, not at the first write.
    expect(() => sqliteStore(db)).toThrow(message);
    let err: unknown;
    try {
      sqliteStore(db);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: "store_unavailable" });
    // A folder SQLite cannot create its -wal and -shm files in is read-only too.
    execFileSync("chattr", ["-i", db], { stdio: "ignore" });
    const folder = join(db, "..");
    execFileSync("chattr", ["+i", folder], { stdio: "ignore" });
    cleanups.push(() => {
      execFileSync("chattr", ["-i", folder], { stdio: "ignore" });
    });
    expect(() => sqliteStore(db)).toThrow(/is read-only: its folder .* cannot be written/);
  });

  it("a full disk (here: the page limit) is store_unavailable, and nothing is half-written", async () => {
    const db = tmpDb();
    const first = sqliteStore(db);
    await first.insertRequest(request("req_1"), created("req_1"));
    await first.close();
    const store = open(db, {
      configure: (d) => {
        d.pragma(`max_page_count = ${Number(d.pragma("page_count", { simple: true }))}`);
      },
    });
    const big = request("req_big", { args: { blob: "x".repeat(200_000) } });
    await expect(store.insertRequest(big, created("req_big"))).rejects.toMatchObject({
      code: "store_unavailable",
      message: expect.stringMatching(/cannot grow: the disk or its size limit is full/),
    });
    expect(await store.getRequest("req_big")).toBeUndefined();
    expect(await store.auditHead()).toMatchObject({ seq: 1 });
  });

  it("the WAL file stays bounded under a stream of writes", async () => {
    const db = tmpDb();
    const store = open(db);
    // About 30 MB of documents: with the old settings (checkpoint every ~40 MB, no size limit)
    // the WAL grew past all of it.
    const blob = "y".repeat(30_000);
    for (let i = 0; i < 1000; i++) {
      const id = `req_${String(i).padStart(5, "0")}`;
      await store.insertRequest(request(id, { args: { blob } }), created(id));
    }
    const wal = statSync(`${db}-wal`).size;
    expect(wal).toBeLessThan(10 * 1024 * 1024);
  });
});
