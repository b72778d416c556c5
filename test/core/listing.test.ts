// The engine's listing and audit pass-throughs: ordered lists, summaries, counts, and the audit check.
import { afterEach, describe, expect, it } from "vitest";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { memoryStore } from "../../src/store/memory.js";
import { sqliteStore } from "../../src/store/sqlite.js";

let engine: Airlock | undefined;
afterEach(async () => {
  await engine?.close();
});

for (const [name, makeStore] of [
  ["memory", () => memoryStore()],
  ["sqlite", () => sqliteStore(":memory:")],
] as const) {
  describe(`listing through the engine (${name})`, () => {
    it("orders by deadline, lists summaries and counts", async () => {
      const e = await createAirlock({ store: makeStore(), sweeper: false });
      engine = e;
      const late = await e.request({ title: "late", requester: "agent", timeoutMs: 3_600_000 });
      const none = await e.request({ title: "none", requester: "agent" });
      const soon = await e.request({ title: "soon", requester: "agent", timeoutMs: 60_000 });
      const done = await e.request({ title: "done", requester: "agent" });
      await e.decide(done.id, { outcome: "rejected", reviewer: "alice" });

      const queue = await e.list({ status: "pending", order: "deadline" });
      expect(queue.items.map((r) => r.id)).toEqual([soon.id, late.id, none.id]);
      const newest = await e.list({ order: "newest" });
      expect(newest.items.map((r) => r.id)).toEqual([done.id, soon.id, none.id, late.id]);

      const summaries = await e.listSummaries({ status: "pending", order: "deadline" });
      expect(summaries.items.map((s) => [s.id, s.title])).toEqual([
        [soon.id, "soon"],
        [late.id, "late"],
        [none.id, "none"],
      ]);
      expect(summaries.items[0]).not.toHaveProperty("args");

      expect(await e.count({ status: "pending" })).toBe(3);
      expect(await e.count({})).toBe(4);
      expect(await e.count({ status: "rejected" })).toBe(1);
    });

    it("verifies the audit log through verifyAuditLog, statuses included", async () => {
      const e = await createAirlock({ store: makeStore(), sweeper: false });
      engine = e;
      const r = await e.request({ title: "t", requester: "agent" });
      await e.decide(r.id, { outcome: "approved", reviewer: "alice" });
      expect(await e.verifyAudit()).toMatchObject({ ok: true, count: 2 });
    });
  });
}
