// runApproved: verify → claim → run, once; everything short of an approval is a typed result.
// Also the engine's lookups the adapters need: getByKey, pendingUsage, auditHead.
import { afterEach, describe, expect, it, vi } from "vitest";
import { hashArgs } from "../../src/core/hash.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { runApproved } from "../../src/engine/run-approved.js";
import { memoryStore } from "../../src/store/memory.js";
import { sqliteStore } from "../../src/store/sqlite.js";

let engine: Airlock;
afterEach(async () => {
  await engine?.close();
});

async function open(): Promise<Airlock> {
  engine = await createAirlock({ store: sqliteStore(":memory:") });
  return engine;
}

describe("runApproved", () => {
  it("runs once with the approved (edited) args; a second call is already_executed and never runs", async () => {
    const e = await open();
    const r = await e.request({ title: "pay", args: { amount: 5 }, requester: "bot" });
    await e.decide(r.id, { outcome: "approved", reviewer: "alice", editedArgs: { amount: 3 } });
    const run = vi.fn(async (args: Record<string, unknown>) => `paid ${args.amount}`);
    const first = await runApproved(e, r.id, run, { by: "worker" });
    expect(first).toMatchObject({ ok: true, value: "paid 3" });
    expect(first.request.executedBy).toBe("worker");
    const second = await runApproved(e, r.id, run);
    expect(second).toMatchObject({ ok: false, reason: "already_executed" });
    expect(run).toHaveBeenCalledTimes(1);
    expect(run.mock.calls[0]?.[0]).toEqual({ amount: 3 });
  });

  it("racing calls for one approval run the action once", async () => {
    const e = await open();
    const r = await e.request({ title: "pay", requester: "bot" });
    await e.decide(r.id, { outcome: "approved", reviewer: "alice" });
    const run = vi.fn(async () => "done");
    const results = await Promise.all([1, 2, 3].map(() => runApproved(e, r.id, run)));
    expect(results.filter((x) => x.ok)).toHaveLength(1);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it("waits for a pending request, then reports a rejection with the reviewer's words", async () => {
    const e = await open();
    const r = await e.request({ title: "pay", requester: "bot" });
    const run = vi.fn();
    const waiting = runApproved(e, r.id, run);
    await e.decide(r.id, { outcome: "rejected", reviewer: "alice", comment: "too much" });
    const result = await waiting;
    expect(result).toMatchObject({ ok: false, reason: "rejected", request: { id: r.id } });
    if (!result.ok) expect(result.detail).toContain("too much");
    expect(run).not.toHaveBeenCalled();
  });

  it("with wait: false a pending request is reason pending; timed out and cancelled are reasons too", async () => {
    const e = await open();
    const pending = await e.request({ title: "a", requester: "bot" });
    const run = vi.fn();
    expect(await runApproved(e, pending.id, run, { wait: false })).toMatchObject({
      ok: false,
      reason: "pending",
    });
    await e.cancel(pending.id);
    expect(await runApproved(e, pending.id, run)).toMatchObject({ ok: false, reason: "cancelled" });
    const late = await e.request({ title: "b", requester: "bot", timeoutMs: 1 });
    await new Promise((r) => setTimeout(r, 5));
    expect(await runApproved(e, late.id, run)).toMatchObject({ ok: false, reason: "timed_out" });
    expect(run).not.toHaveBeenCalled();
  });

  it("refuses an approval whose args hash does not match, and an expired approval, before claiming", async () => {
    const e = await open();
    const r = await e.request({ title: "pay", args: { amount: 5 }, requester: "bot" });
    const approved = await e.decide(r.id, { outcome: "approved", reviewer: "alice" });
    const run = vi.fn();
    const forged = { ...approved, args: { amount: 500 } };
    expect(await runApproved(e, forged, run)).toMatchObject({ ok: false, reason: "args_mismatch" });
    const d = approved.decision;
    if (!d) throw new Error("no decision");
    const expired = { ...approved, decision: { ...d, validUntil: 1 } };
    expect(await runApproved(e, expired, run)).toMatchObject({ ok: false, reason: "expired" });
    expect(run).not.toHaveBeenCalled();
    // Nothing was claimed: the genuine approval still runs.
    expect((await e.get(r.id)).executedAt).toBeUndefined();
    expect(await runApproved(e, r.id, () => hashArgs({ ok: 1 }))).toMatchObject({ ok: true });
  });

  it("an error from run propagates, and the execution is recorded failed with it", async () => {
    const e = await open();
    const r = await e.request({ title: "pay", requester: "bot" });
    await e.decide(r.id, { outcome: "approved", reviewer: "alice" });
    await expect(
      runApproved(e, r.id, () => {
        throw new Error("bank down");
      }),
    ).rejects.toThrow("bank down");
    const failed = await e.get(r.id);
    expect(failed.executedAt).toBeUndefined();
    expect(failed.execution).toMatchObject({ state: "failed", error: "Error: bank down" });
    const types = (await e.audit({ requestId: r.id })).map((x) => x.type);
    expect(types.slice(-2)).toEqual(["claimed", "execution_failed"]);
  });
});

describe("engine lookups", () => {
  for (const [name, store] of [
    ["memory", () => memoryStore()],
    ["sqlite", () => sqliteStore(":memory:")],
  ] as const) {
    it(`getByKey finds a request by its key, per requester (${name})`, async () => {
      engine = await createAirlock({ store: store() });
      const a = await engine.request({ key: "k1", title: "a", requester: "Bot" });
      const anon = await engine.request({ key: "k1", title: "b" });
      expect((await engine.getByKey("k1", { requester: "bot" }))?.id).toBe(a.id);
      expect((await engine.getByKey("k1"))?.id).toBe(anon.id);
      expect(await engine.getByKey("k2", { requester: "bot" })).toBeUndefined();
      expect(await engine.getByKey("k1", { requester: "other" })).toBeUndefined();
    });
  }

  it("pendingUsage and auditHead answer without the store", async () => {
    const e = await open();
    expect(await e.auditHead()).toBeUndefined();
    await e.request({ title: "a", requester: "Bot" });
    const usage = await e.pendingUsage("bot");
    expect(usage.count).toBe(1);
    expect(usage.bytes).toBeGreaterThan(0);
    const events = await e.audit();
    expect(await e.auditHead()).toEqual({
      seq: events.at(-1)?.seq,
      hash: events.at(-1)?.hash,
    });
    expect("store" in e).toBe(false);
  });
});
