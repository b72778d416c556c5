// The SQLite token table shares the database file with the store: while another process holds its
// write lock, saving or revoking a token waits on timers (the server keeps answering) and then
// fails with `store_unavailable`, instead of blocking the event loop for seconds.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createToken } from "../../src/server/tokens.js";
import { sqliteTokenStore } from "../../src/server/tokens-sqlite.js";
import { tempDir, watchEventLoop } from "../helpers.js";
import { startChild } from "../postgres/child.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("SQLite token store under another process's write lock", () => {
  it("waits on timers, answers lookups meanwhile, then fails with store_unavailable", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const db = join(t.dir, "airlock.db");
    const tokens = sqliteTokenStore(db);
    cleanups.push(() => tokens.close());
    const alice = await createToken(tokens, { name: "alice", roles: ["reviewer"], groups: [] });

    const holder = startChild("../store/lock-child.ts", { DB: db });
    cleanups.push(() => holder.stop());
    await holder.next("locked");

    const loop = watchEventLoop();
    const revoke = tokens.revoke(alice.record.id, Date.now()).then(
      () => undefined,
      (e: unknown) => e,
    );
    // A lookup is a read: WAL readers do not wait for the writer.
    expect((await tokens.list()).map((r) => r.name)).toEqual(["alice"]);
    const err = await revoke;
    const maxGap = loop.stop();
    expect(err).toMatchObject({
      code: "store_unavailable",
      message: expect.stringMatching(/token table .* is locked by another process/),
    });
    // Loosely: the event loop was never held for anything near the lock's duration.
    expect(maxGap).toBeLessThan(500);

    holder.send({ type: "release" });
    await holder.next("released");
    expect((await tokens.revoke(alice.record.id, Date.now()))?.revokedAt).toBeTypeOf("number");
  });
});
