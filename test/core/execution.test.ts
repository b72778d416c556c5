// One approval, one execution: claimExecution is a compare-and-set, and hitlTool uses it.
import { afterEach, describe, expect, it } from "vitest";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { hitlTool } from "../../src/tools/hitl-tool.js";
import { isHitlPending } from "../../src/tools/results.js";

let engine: Airlock;
afterEach(async () => {
  await engine?.close();
});

describe("claimExecution", () => {
  it("claims an approved request once; racing claims have one winner; it is audited", async () => {
    engine = await createAirlock({ store: sqliteStore(":memory:") });
    const r = await engine.request({ title: "pay", requester: "bot" });
    await expect(engine.claimExecution(r.id)).rejects.toMatchObject({ code: "conflict" });
    await engine.decide(r.id, { outcome: "approved", reviewer: "alice" });
    const results = await Promise.allSettled([
      engine.claimExecution(r.id, { by: "worker-1" }),
      engine.claimExecution(r.id, { by: "worker-2" }),
      engine.claimExecution(r.id, { by: "worker-3" }),
    ]);
    expect(results.filter((x) => x.status === "fulfilled")).toHaveLength(1);
    for (const x of results) {
      if (x.status === "rejected") expect(x.reason).toMatchObject({ code: "conflict" });
    }
    const stored = await engine.get(r.id);
    expect(stored.status).toBe("approved");
    expect(stored.executedAt).toBeGreaterThan(0);
    const executed = (await engine.audit({ requestId: r.id })).filter((e) => e.type === "executed");
    expect(executed).toHaveLength(1);
    expect(executed[0]?.actor).toBe(stored.executedBy);
    expect((await engine.verifyAudit()).ok).toBe(true);
  });

  it("a rejected request cannot be claimed", async () => {
    engine = await createAirlock({ store: sqliteStore(":memory:") });
    const r = await engine.request({ title: "pay", requester: "bot" });
    await engine.decide(r.id, { outcome: "rejected", reviewer: "alice" });
    await expect(engine.claimExecution(r.id)).rejects.toMatchObject({ code: "conflict" });
  });

  it("hitlTool: resuming one approval twice runs the tool once", async () => {
    engine = await createAirlock({ store: sqliteStore(":memory:") });
    let runs = 0;
    const tool = hitlTool(
      async function pay(args: { amount: number }) {
        runs++;
        return { paid: args.amount };
      },
      { autoThreshold: 100, quickThreshold: 0, airlock: engine },
    );
    const pending = await tool({ amount: 5 });
    if (!isHitlPending(pending)) throw new Error("expected a pending marker");
    const id = pending.hitl_result.approvalId as string;
    await engine.decide(id, { outcome: "approved", reviewer: "alice" });
    const [a, b] = await Promise.all([tool.resume(id), tool.resume(id)]);
    expect(runs).toBe(1);
    const outcomes = [a, b].map((x) => ("rejected" in x ? x.code : "ran"));
    expect(outcomes.sort()).toEqual(["already_executed", "ran"]);
    expect(await tool.resume(id)).toMatchObject({
      rejected: true,
      retry: false,
      code: "already_executed",
    });
    expect(runs).toBe(1);
  });
});
