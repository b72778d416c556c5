// The PostgreSQL outbox shared by several processes: two store objects with pools of their own (as
// two Airlock processes) claiming the same rows at once get each row exactly once (FOR UPDATE SKIP
// LOCKED and the lease), and every settle by its holder lands.
import { afterAll, expect, it } from "vitest";
import type { OutboxDraft, OutboxMessage } from "../../src/core/outbox.js";
import type { Store } from "../../src/core/store.js";
import { postgresStore } from "../../src/store/postgres.js";
import { makeRequest } from "../../src/testing/index.js";
import { describePg, dropSchema, freshSchema } from "./pg-env.js";

const drafts = (n: number, prefix: string): OutboxDraft[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `${prefix}_${String(i).padStart(4, "0")}`,
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
  const stopAt = Date.now() + 60_000;
  for (let round = 0; round < 2000 && claimed.count < total && Date.now() < stopAt; round++) {
    const batch: OutboxMessage[] = await store.claimOutbox({
      now: 2000,
      limit: 5,
      leaseMs: 600_000,
      owner,
    });
    claimed.count += batch.length;
    // Settle concurrently too: the settles of one batch race the other store's claims.
    const settled = await Promise.all(
      batch.map((m) => {
        got.push(m.id);
        expect(m).toMatchObject({ leaseOwner: owner, attempts: 1 });
        return store.settleOutbox(m.id, owner, { status: "delivered" }, [
          { type: "notified", actor: "system", at: 3000, data: { outbox: m.id } },
        ]);
      }),
    );
    expect(settled.every(Boolean)).toBe(true);
  }
  return got;
}

await describePg("postgres outbox claims across processes", ({ url }) => {
  const schemas: string[] = [];
  const stores: Store[] = [];
  afterAll(async () => {
    for (const s of stores) await s.close();
    for (const s of schemas) await dropSchema(url, s);
  });
  const pair = async () => {
    const schema = freshSchema("airlock_outbox");
    schemas.push(schema);
    const a = postgresStore(url, { schema, max: 4 });
    const b = postgresStore(url, { schema, max: 4 });
    stores.push(a, b);
    await Promise.all([a.migrate(), b.migrate()]);
    return [a, b] as const;
  };

  it("two stores (two pools) claiming 200 rows concurrently in loops get each row exactly once", async () => {
    const [a, b] = await pair();
    expect(await a.enqueueOutbox(drafts(200, "msg"))).toBe(200);
    const claimed = { count: 0 };
    const loops = await Promise.all([
      claimer(a, "A1", claimed, 200),
      claimer(a, "A2", claimed, 200),
      claimer(b, "B1", claimed, 200),
      claimer(b, "B2", claimed, 200),
    ]);
    const all = loops.flat();
    expect(all).toHaveLength(200);
    expect(new Set(all).size).toBe(200);
    const rows = await b.listOutbox({ limit: 1000 });
    expect(rows).toHaveLength(200);
    expect(rows.every((m) => m.status === "delivered" && m.attempts === 1)).toBe(true);
    // One notified event per settle, one chain.
    const events = await a.listAudit({ limit: 1000 });
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(new Set(events.map((e) => e.data.outbox)).size).toBe(200);
  });

  it("claims racing request writes: messages of concurrent transitions are all claimed once", async () => {
    const [a, b] = await pair();
    const requests = Array.from({ length: 40 }, () => makeRequest());
    const claimed = { count: 0 };
    const writes = (async () => {
      for (const r of requests) {
        await a.insertRequest(
          r,
          [],
          [{ id: `${r.id}_c`, target: "slack", topic: "created", requestId: r.id, payload: {} }],
        );
        const next = { ...r, status: "cancelled" as const, version: 2 };
        const res = await b.transition(
          next,
          1,
          [],
          [{ id: `${r.id}_x`, target: "slack", topic: "cancelled", requestId: r.id, payload: {} }],
        );
        expect(res.ok).toBe(true);
      }
    })();
    const claimLoop = async (store: Store, owner: string) => {
      const got: string[] = [];
      const stopAt = Date.now() + 60_000;
      for (let round = 0; round < 5000 && claimed.count < 80 && Date.now() < stopAt; round++) {
        const batch = await store.claimOutbox({
          now: 1e15,
          limit: 3,
          leaseMs: 600_000,
          owner,
        });
        claimed.count += batch.length;
        for (const m of batch) {
          got.push(m.id);
          expect(await store.settleOutbox(m.id, owner, { status: "delivered" })).toBe(true);
        }
        if (batch.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return got;
    };
    const [, gotA, gotB] = await Promise.all([writes, claimLoop(a, "A"), claimLoop(b, "B")]);
    const all = [...gotA, ...gotB];
    expect(all).toHaveLength(80);
    expect(new Set(all).size).toBe(80);
  });
});
