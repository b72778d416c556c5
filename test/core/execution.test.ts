// What became of an approved action: claimed under a lease, then executed or failed as reported
// after the action; a lapsed claim is unknown ("approved, not known to have run"), run again only
// when idempotent, else settled by a person. hitlTool runs through the same path.
import { afterEach, describe, expect, it, vi } from "vitest";
import { actorOf } from "../../src/core/authority.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { runApproved } from "../../src/engine/run-approved.js";
import { memoryStore } from "../../src/store/memory.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { hitlTool } from "../../src/tools/hitl-tool.js";
import { isHitlPending } from "../../src/tools/results.js";

let engine: Airlock;
afterEach(async () => {
  await engine?.close();
});

const alice = actorOf({
  name: "alice",
  groups: ["ops"],
  roles: ["reviewer"],
  proof: "api_token",
  channel: "api",
});
const agent = actorOf({
  name: "bot",
  groups: [],
  roles: ["agent"],
  proof: "api_token",
  channel: "api",
});

async function approvedRequest(e: Airlock, extra: { idempotent?: boolean } = {}) {
  const r = await e.request({ title: "pay", requester: "bot", approvers: ["ops"], ...extra });
  await e.decide(r.id, { outcome: "approved", reviewer: "alice", groups: ["ops"] });
  return r.id;
}

const types = async (e: Airlock, id: string) =>
  (await e.audit({ requestId: id })).map((x) => x.type);

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
    // Claimed is not executed: nothing says the action ran yet.
    expect(stored.executedAt).toBeUndefined();
    expect(stored.execution).toMatchObject({ state: "claimed", attempt: 1 });
    const claimed = (await engine.audit({ requestId: r.id })).filter((e) => e.type === "claimed");
    expect(claimed).toHaveLength(1);
    expect(claimed[0]?.actor).toBe(stored.execution?.claimedBy);
    expect(await types(engine, r.id)).not.toContain("executed");
    expect((await engine.verifyAudit()).ok).toBe(true);
  });

  it("a rejected request cannot be claimed", async () => {
    engine = await createAirlock({ store: sqliteStore(":memory:") });
    const r = await engine.request({ title: "pay", requester: "bot" });
    await engine.decide(r.id, { outcome: "rejected", reviewer: "alice" });
    await expect(engine.claimExecution(r.id)).rejects.toMatchObject({ code: "conflict" });
  });

  it("refuses a lease that is not a whole positive number of milliseconds", async () => {
    engine = await createAirlock({ store: memoryStore() });
    const id = await approvedRequest(engine);
    await expect(engine.claimExecution(id, { leaseMs: 0 })).rejects.toMatchObject({
      code: "invalid_input",
    });
    expect((await engine.get(id)).execution).toBeUndefined();
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
    // The outcome was written after the tool returned.
    expect((await types(engine, id)).slice(-2)).toEqual(["claimed", "executed"]);
  });
});

describe("the outcome, written after the action", () => {
  it("runApproved records executed with the result's digest only once run returned", async () => {
    engine = await createAirlock({ store: memoryStore() });
    const id = await approvedRequest(engine);
    let during: string[] = [];
    const result = await runApproved(engine, id, async () => {
      during = await types(engine, id);
      return { paid: 5 };
    });
    expect(during.at(-1)).toBe("claimed");
    expect(result).toMatchObject({ ok: true, recorded: true });
    const stored = await engine.get(id);
    expect(stored.execution).toMatchObject({ state: "executed", attempt: 1 });
    expect(stored.executedAt).toBeGreaterThanOrEqual(stored.execution?.claimedAt ?? 0);
    const executed = (await engine.audit({ requestId: id })).find((e) => e.type === "executed");
    expect(executed?.data.resultDigest).toBe(stored.execution?.resultDigest);
  });

  it("a long action keeps its claim alive by renewing the lease", async () => {
    engine = await createAirlock({ store: memoryStore() });
    const id = await approvedRequest(engine);
    const result = await runApproved(
      engine,
      id,
      async () => {
        await new Promise((r) => setTimeout(r, 400));
        return "done";
      },
      { leaseMs: 150 },
    );
    expect(result.ok).toBe(true);
    const all = await types(engine, id);
    expect(all).not.toContain("execution_unknown");
    expect(all.at(-1)).toBe("executed");
  });
});

describe("a claim whose process died", () => {
  it("becomes unknown at the end of its lease, by the sweeper alone, and counts in the metrics", async () => {
    engine = await createAirlock({ store: memoryStore() });
    const id = await approvedRequest(engine);
    await engine.claimExecution(id, { leaseMs: 50 }); // and then nothing: the process "died"
    await vi.waitFor(async () => expect((await engine.get(id)).execution?.state).toBe("unknown"), {
      timeout: 3000,
      interval: 20,
    });
    expect((await types(engine, id)).slice(-2)).toEqual(["claimed", "execution_unknown"]);
    expect((await engine.list({ execution: "unknown" })).items.map((r) => r.id)).toEqual([id]);
    expect((await engine.metrics()).executionUnknown).toBe(1);
    // Not idempotent: nobody runs it again on their own.
    let runs = 0;
    const again = await runApproved(engine, id, () => runs++);
    expect(again).toMatchObject({ ok: false, reason: "execution_unknown" });
    expect(runs).toBe(0);
  });

  it("is told to the channels routed for it (webhooks get request.execution_unknown)", async () => {
    engine = await createAirlock({
      store: memoryStore(),
      notifiers: (_r, topic) => (topic === "execution_unknown" ? ["hooks"] : []),
    });
    const id = await approvedRequest(engine);
    await engine.claimExecution(id, { leaseMs: 1 });
    await new Promise((r) => setTimeout(r, 5));
    await engine.sweep();
    const sent = await engine.outbox({ requestId: id });
    expect(sent.map((m) => [m.target, m.topic])).toEqual([["hooks", "execution_unknown"]]);
  });

  it("an outcome that arrives after the lease still records what happened", async () => {
    engine = await createAirlock({ store: memoryStore() });
    const id = await approvedRequest(engine);
    const claimed = await engine.claimExecution(id, { leaseMs: 1 });
    await new Promise((r) => setTimeout(r, 5));
    await engine.sweep();
    expect((await engine.get(id)).execution?.state).toBe("unknown");
    const attempt = claimed.execution?.attempt ?? 0;
    const done = await engine.finishExecution(id, { attempt, ok: true });
    expect(done.execution?.state).toBe("executed");
    const all = await types(engine, id);
    expect(all.slice(-3)).toEqual(["claimed", "execution_unknown", "executed"]);
  });

  it("an idempotent request is claimed and run again; the outcome names the new attempt", async () => {
    engine = await createAirlock({ store: memoryStore() });
    const id = await approvedRequest(engine, { idempotent: true });
    await engine.claimExecution(id, { leaseMs: 1 });
    await new Promise((r) => setTimeout(r, 5));
    let runs = 0;
    // Even before the sweeper marked it, a lapsed claim of an idempotent request is taken over.
    const result = await runApproved(engine, id, () => ++runs);
    expect(result).toMatchObject({ ok: true, value: 1 });
    const stored = await engine.get(id);
    expect(stored.execution).toMatchObject({ state: "executed", attempt: 2 });
    // The first claim's late outcome is refused: its attempt was taken over.
    await expect(engine.finishExecution(id, { attempt: 1, ok: true })).rejects.toMatchObject({
      code: "conflict",
    });
  });

  it("a person settles it: done and abandon end it, and neither an agent nor the requester may", async () => {
    engine = await createAirlock({ store: memoryStore() });
    const a = await approvedRequest(engine);
    const b = await approvedRequest(engine);
    for (const id of [a, b]) await engine.claimExecution(id, { leaseMs: 1 });
    await new Promise((r) => setTimeout(r, 5));
    await engine.sweep();
    await expect(engine.resolveExecution(agent, a, { resolution: "done" })).rejects.toMatchObject({
      code: "forbidden",
    });
    const requester = actorOf({
      name: "bot",
      groups: ["ops"],
      roles: ["reviewer"],
      proof: "api_token",
      channel: "api",
    });
    await expect(
      engine.resolveExecution(requester, a, { resolution: "done" }),
    ).rejects.toMatchObject({ code: "forbidden" });
    const done = await engine.resolveExecution(alice, a, {
      resolution: "done",
      comment: "the bank shows the transfer",
    });
    expect(done.execution).toMatchObject({ state: "executed", resolvedBy: "alice" });
    expect(done.executedBy).toBe("alice");
    const abandoned = await engine.resolveExecution(alice, b, { resolution: "abandon" });
    expect(abandoned.execution?.state).toBe("abandoned");
    await expect(engine.claimExecution(b)).rejects.toMatchObject({ code: "conflict" });
    await expect(engine.resolveExecution(alice, b, { resolution: "retry" })).rejects.toMatchObject({
      code: "conflict",
    });
    expect((await engine.metrics()).executionUnknown).toBe(0);
    expect((await engine.verifyAudit()).ok).toBe(true);
  });
});
