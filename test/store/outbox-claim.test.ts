// The SQLite outbox shared by several connections to one file: concurrent claimers get each row
// exactly once, and a claim or settle that meets another connection's write lock waits on timers and
// then fails with store_unavailable, as every other write does.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { OutboxDraft, OutboxMessage } from "../../src/core/outbox.js";
import type { Store } from "../../src/core/store.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tmpFile(): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return join(t.dir, "airlock.db");
}

function open(file: string, options: Parameters<typeof sqliteStore>[1] = {}): Store {
  const store = sqliteStore(file, options);
  cleanups.push(() => store.close());
  return store;
}

const drafts = (n: number): OutboxDraft[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `msg_${String(i).padStart(4, "0")}`,
    target: i % 2 ? "slack" : "email",
    topic: "test",
    payload: { i },
    availableAt: 1000 + (i % 7),
  }));

/** Claims and settles in a loop until `total` rows are claimed by all claimers together, bounded
 * in rounds and time. Returns the ids this claimer got. */
async function claimer(
  store: Store,
  owner: string,
  claimed: { count: number },
  total: number,
): Promise<string[]> {
  const got: string[] = [];
  const stopAt = Date.now() + 30_000;
  for (let round = 0; round < 2000 && claimed.count < total && Date.now() < stopAt; round++) {
    const batch: OutboxMessage[] = await store.claimOutbox({
      now: 2000,
      limit: 7,
      leaseMs: 600_000,
      owner,
    });
    claimed.count += batch.length;
    for (const m of batch) {
      got.push(m.id);
      expect(m).toMatchObject({ leaseOwner: owner, attempts: 1 });
      expect(await store.settleOutbox(m.id, owner, { status: "delivered" })).toBe(true);
    }
    // Let the other claimer in between rounds.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return got;
}

describe("SQLite outbox across connections", () => {
  it("two connections to one file claiming 200 rows in loops get each row exactly once", async () => {
    const file = tmpFile();
    const a = open(file);
    const b = open(file);
    expect(await a.enqueueOutbox(drafts(200))).toBe(200);
    const claimed = { count: 0 };
    const [gotA, gotB] = await Promise.all([
      claimer(a, "A", claimed, 200),
      claimer(b, "B", claimed, 200),
    ]);
    const all = [...gotA, ...gotB];
    expect(all).toHaveLength(200);
    expect(new Set(all).size).toBe(200);
    // Both took part (each round takes at most 7 of the 200).
    expect(gotA.length).toBeGreaterThan(0);
    expect(gotB.length).toBeGreaterThan(0);
    const rows = await b.listOutbox({ limit: 1000 });
    expect(rows.every((m) => m.status === "delivered" && m.attempts === 1)).toBe(true);
    expect(await a.claimOutbox({ now: 10_000_000, limit: 10, leaseMs: 10, owner: "A" })).toEqual(
      [],
    );
  });

  it("a claim or settle meeting another connection's write lock fails with store_unavailable, then works", async () => {
    const file = tmpFile();
    const store = open(file, { lockWaitMs: 150, busyTimeoutMs: 5 });
    await store.enqueueOutbox(drafts(2));
    const [first] = await store.claimOutbox({ now: 2000, limit: 1, leaseMs: 1000, owner: "A" });
    if (!first) throw new Error("nothing claimed");

    const holder = new Database(file);
    cleanups.push(() => {
      if (holder.open) holder.close();
    });
    holder.pragma("busy_timeout = 5");
    holder.exec("BEGIN IMMEDIATE");
    await expect(
      store.claimOutbox({ now: 2000, limit: 5, leaseMs: 1000, owner: "A" }),
    ).rejects.toMatchObject({ code: "store_unavailable", message: /locked by another process/ });
    await expect(store.settleOutbox(first.id, "A", { status: "delivered" })).rejects.toMatchObject({
      code: "store_unavailable",
    });
    await expect(store.enqueueOutbox(drafts(3))).rejects.toMatchObject({
      code: "store_unavailable",
    });
    // Reads go on meanwhile.
    expect(await store.listOutbox({})).toHaveLength(2);
    holder.exec("COMMIT");
    holder.close();

    expect(await store.settleOutbox(first.id, "A", { status: "delivered" })).toBe(true);
    const rest = await store.claimOutbox({ now: 2000, limit: 5, leaseMs: 1000, owner: "A" });
    expect(rest.map((m) => m.attempts)).toEqual([1]);
    expect(await store.enqueueOutbox(drafts(3))).toBe(1);
  });
});
