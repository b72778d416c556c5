// verifyAuditLog over what the engine really writes: every path a request can take (auto approval,
// quorum, revision, cancellation, timeout, escalation, execution) leaves statuses that match the
// audit, so a clean log verifies; and a stored decision changed afterwards does not.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { verifyAuditLog } from "../../src/audit/verify.js";
import { createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { eventually, tempDir } from "../helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("verifyAuditLog over the engine's own writes", () => {
  it("every kind of ending verifies; a flipped outcome does not", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const db = join(t.dir, "a.db");
    const store = sqliteStore(db);
    const engine = await createAirlock({ store });
    cleanups.push(() => engine.close());

    await engine.request({ title: "auto", requireApproval: false });
    const quorum = await engine.request({ title: "two", approvers: ["alice", "bob"], quorum: 2 });
    await engine.decide(quorum.id, { outcome: "approved", reviewer: "alice" });
    await engine.decide(quorum.id, { outcome: "approved", reviewer: "bob" });
    await engine.claimExecution(quorum.id, { by: "agent" });
    const partial = await engine.request({ title: "half", approvers: ["alice", "bob"], quorum: 2 });
    await engine.decide(partial.id, { outcome: "approved", reviewer: "alice" });
    const revise = await engine.request({ title: "again" });
    await engine.decide(revise.id, { outcome: "revise", reviewer: "alice", comment: "more" });
    const rejected = await engine.request({ title: "no" });
    await engine.decide(rejected.id, { outcome: "rejected", reviewer: "alice" });
    const cancelled = await engine.request({ title: "never mind" });
    await engine.cancel(cancelled.id, { reason: "changed plans" });
    const timeout = await engine.request({ title: "slow", timeoutMs: 1 });
    const escalate = await engine.request({
      title: "up",
      timeoutMs: 1,
      onTimeout: { escalate: { approvers: ["boss"], timeoutMs: 60_000 } },
    });
    await engine.waitFor(timeout.id, { timeoutMs: 5000 });
    await eventually(async () => (await engine.get(escalate.id)).escalations > 0, {
      timeoutMs: 2_000,
    }).catch(() => {}); // the assertions below say what is wrong
    expect((await engine.get(escalate.id)).status).toBe("pending");
    await engine.record({ type: "viewed", requestId: rejected.id, actor: "carol", data: {} });

    expect(await verifyAuditLog(store)).toMatchObject({ ok: true, requests: 8 });

    const d = new Database(db);
    d.prepare(
      `UPDATE requests SET status = 'approved', doc = json_set(doc, '$.status', 'approved', '$.decision.outcome', 'approved') WHERE id = ?`,
    ).run(rejected.id);
    d.close();
    const v = await verifyAuditLog(store);
    expect(v.ok ? "" : v.reason).toMatch(
      new RegExp(`${rejected.id} is stored as approved, but its audit log says rejected`),
    );
  });
});

describe("engine.verifyAudit on a keyed store", () => {
  it("uses the key and checkpoint file the store was opened with", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const auditKey = "k".repeat(32);
    const checkpointFile = join(t.dir, "checkpoints");
    const store = sqliteStore(join(t.dir, "a.db"), { auditKey, checkpointFile });
    const engine = await createAirlock({ store });
    cleanups.push(() => engine.close());
    const r = await engine.request({ title: "keyed" });
    await engine.decide(r.id, { outcome: "approved", reviewer: "alice" });

    const result = await engine.verifyAudit();
    expect(result).toMatchObject({ ok: true, keyedFrom: 1 });
    // Without the store's key, the keyed events cannot be checked at all.
    await expect(verifyAuditLog(store)).rejects.toMatchObject({ code: "invalid_input" });
  });
});
