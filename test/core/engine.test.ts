import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { verifyApproval } from "../../src/core/binding.js";
import { hashArgs } from "../../src/core/hash.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";

let engine: Airlock;
beforeEach(async () => {
  engine = await createAirlock({ store: sqliteStore(":memory:") });
});
afterEach(async () => {
  await engine.close();
});

const base = { title: "Deploy v2", requester: "agent" } as const;

describe("request", () => {
  it("creates a pending request with stable item ids and an args hash", async () => {
    const r = await engine.request({
      ...base,
      args: { b: 1, a: [1, 2] },
      items: ["migrate db", { label: "restart api" }, { id: "notify", label: "tell #ops" }],
      timeoutMs: 60_000,
    });
    expect(r.status).toBe("pending");
    expect(r.items.map((i) => i.id)).toEqual(["item-1", "item-2", "notify"]);
    expect(r.argsHash).toBe(hashArgs({ a: [1, 2], b: 1 }));
    expect(r.deadline).toBeGreaterThan(Date.now() + 50_000);
    expect(r.correlationId).toBe(r.id);
    expect(await engine.get(r.id)).toEqual(r);
  });

  it("names the bad field", async () => {
    await expect(engine.request({ ...base, title: "" })).rejects.toMatchObject({
      code: "invalid_input",
      field: "title",
    });
    await expect(
      engine.request({ ...base, status: "approved" } as unknown as Parameters<
        Airlock["request"]
      >[0]),
    ).rejects.toMatchObject({ code: "invalid_input" });
    await expect(engine.request({ ...base, timeoutMs: -5 })).rejects.toMatchObject({
      field: "timeoutMs",
    });
  });

  it("refuses duplicate item ids: selections must never reach the wrong item", async () => {
    await expect(
      engine.request({
        ...base,
        items: [
          { id: "x", label: "a" },
          { id: "x", label: "b" },
        ],
      }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "items.1.id" });
    expect((await engine.list()).items).toHaveLength(0);
  });

  it("is idempotent by key: the same key returns the first request unchanged", async () => {
    const a = await engine.request({ ...base, key: "deploy-42", items: ["x"] });
    const b = await engine.request({ ...base, key: "deploy-42", items: ["x"] });
    expect(b).toEqual(a);
    expect((await engine.list()).items).toHaveLength(1);
    await engine.decide(a.id, { outcome: "approved", reviewer: "alice" });
    const c = await engine.request({ ...base, key: "deploy-42", items: ["x"] });
    expect(c.status).toBe("approved");
  });

  it("a reused key with different content is a conflict", async () => {
    const a = await engine.request({ ...base, key: "k" });
    await expect(engine.request({ ...base, key: "k", title: "other" })).rejects.toMatchObject({
      code: "conflict",
      request: { id: a.id },
    });
  });

  it("requireApproval: false approves at once with method auto", async () => {
    const r = await engine.request({ ...base, requireApproval: false, items: ["q1", "q2"] });
    expect(r.status).toBe("approved");
    expect(r.level).toBe("auto");
    expect(r.decision).toMatchObject({ method: "auto", selected: ["item-1", "item-2"] });
    const events = await engine.audit({ requestId: r.id });
    expect(events.map((e) => e.type)).toEqual(["created", "decided"]);
  });

  it("an explicitly empty item list is a no_items decision, not an approval", async () => {
    const r = await engine.request({ ...base, items: [] });
    expect(r.status).toBe("rejected");
    expect(r.decision?.method).toBe("no_items");
  });

  it("a policy can settle the level", async () => {
    const e2 = await createAirlock({
      store: sqliteStore(":memory:"),
      policy: ({ input }) =>
        input.action === "files.write" ? { level: "auto", reason: "small write" } : undefined,
    });
    const auto = await e2.request({ ...base, action: "files.write" });
    const full = await e2.request({ ...base, action: "deploy" });
    expect(auto.status).toBe("approved");
    expect(auto.decision?.comment).toBe("small write");
    expect(full.status).toBe("pending");
    expect(full.level).toBe("full");
    await e2.close();
  });

  it("validates args against a registered schema", async () => {
    engine.registerSchema("payments.send", z.object({ amount: z.number().max(1000) }));
    await expect(
      engine.request({ ...base, action: "payments.send", args: { amount: 5000 } }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "args.amount" });
  });
});

describe("decide", () => {
  it("approves a selection by id and records the approved args hash", async () => {
    const r = await engine.request({ ...base, items: ["a", "b", "c"], args: { v: 1 } });
    const d = await engine.decide(r.id, {
      outcome: "approved",
      reviewer: "alice",
      selected: ["item-3", "item-1"],
      comment: "not b",
    });
    expect(d.status).toBe("approved");
    expect(d.decision).toMatchObject({
      method: "select",
      selected: ["item-1", "item-3"],
      comment: "not b",
      argsHash: r.argsHash,
    });
  });

  it("refuses an empty selection, unknown ids, and selections without items", async () => {
    const r = await engine.request({ ...base, items: ["a"] });
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "alice", selected: [] }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "selected" });
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "alice", selected: ["1"] }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "selected" });
    const plain = await engine.request({ ...base });
    await expect(
      engine.decide(plain.id, { outcome: "approved", reviewer: "alice", selected: ["x"] }),
    ).rejects.toMatchObject({ code: "invalid_input" });
    expect((await engine.get(r.id)).status).toBe("pending");
  });

  it("nobody approves their own request", async () => {
    const r = await engine.request({ ...base });
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "agent" }),
    ).rejects.toMatchObject({ code: "forbidden" });
  });

  it("only listed approvers (users or groups) decide", async () => {
    const r = await engine.request({ ...base, approvers: ["ops", "carol"] });
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "mallory" }),
    ).rejects.toMatchObject({ code: "forbidden" });
    const byGroup = await engine.decide(r.id, {
      outcome: "rejected",
      reviewer: "dave",
      groups: ["ops"],
    });
    expect(byGroup.status).toBe("rejected");
    expect(byGroup.decision?.method).toBe("reject");
  });

  it("revise ends the gate with the comment", async () => {
    const r = await engine.request({ ...base });
    const d = await engine.decide(r.id, {
      outcome: "revise",
      reviewer: "alice",
      comment: "skip 2",
    });
    expect(d.status).toBe("revise");
    expect(d.decision).toMatchObject({ method: "revise", comment: "skip 2" });
  });

  it("edited args are validated and hashed anew", async () => {
    engine.registerSchema("email.send", z.object({ to: z.string().email() }).strict());
    const r = await engine.request({
      ...base,
      action: "email.send",
      args: { to: "a@example.org" },
    });
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "alice", editedArgs: { to: "nope" } }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "editedArgs.to" });
    const d = await engine.decide(r.id, {
      outcome: "approved",
      reviewer: "alice",
      editedArgs: { to: "b@example.org" },
      validForMs: 60_000,
    });
    expect(d.decision?.method).toBe("edit");
    expect(d.decision?.argsHash).toBe(hashArgs({ to: "b@example.org" }));
    expect(d.decision?.argsHash).not.toBe(r.argsHash);
    expect(verifyApproval(d)).toEqual({ ok: true, args: { to: "b@example.org" } });
    expect(verifyApproval(d, { to: "a@example.org" })).toMatchObject({
      ok: false,
      reason: "args_mismatch",
    });
    expect(verifyApproval(d, undefined, Date.now() + 120_000)).toMatchObject({
      ok: false,
      reason: "expired",
    });
  });

  it("binds Date (and other toJSON) args by their value, as they are stored", async () => {
    const r = await engine.request({
      ...base,
      args: { at: new Date(0), url: new URL("http://127.0.0.1/a") },
    });
    const d = await engine.decide(r.id, { outcome: "approved", reviewer: "alice" });
    expect(verifyApproval(await engine.get(r.id))).toMatchObject({ ok: true });
    expect(
      verifyApproval(d, { at: new Date(0), url: new URL("http://127.0.0.1/a") }),
    ).toMatchObject({
      ok: true,
    });
    expect(
      verifyApproval(d, { at: new Date(1e12), url: new URL("http://127.0.0.1/a") }),
    ).toMatchObject({
      ok: false,
      reason: "args_mismatch",
    });
    expect(
      verifyApproval(d, { at: new Date(0), url: new URL("http://127.0.0.1/b") }),
    ).toMatchObject({
      ok: false,
      reason: "args_mismatch",
    });
  });

  it("an approval cannot be executed for a rejected request", async () => {
    const r = await engine.request({ ...base });
    const d = await engine.decide(r.id, { outcome: "rejected", reviewer: "alice" });
    expect(verifyApproval(d)).toMatchObject({ ok: false, reason: "not_approved" });
  });

  it("concurrent deciders: exactly one wins, the loser gets a conflict carrying the winner", async () => {
    const r = await engine.request({ ...base });
    const results = await Promise.allSettled([
      engine.decide(r.id, { outcome: "approved", reviewer: "alice" }),
      engine.decide(r.id, { outcome: "rejected", reviewer: "bob" }),
      engine.decide(r.id, { outcome: "revise", reviewer: "carol" }),
    ]);
    const won = results.filter((x) => x.status === "fulfilled");
    const lost = results.filter((x): x is PromiseRejectedResult => x.status === "rejected");
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(2);
    const final = await engine.get(r.id);
    for (const l of lost) {
      expect(l.reason).toMatchObject({ code: "conflict", decision: final.decision });
    }
    const terminal = (await engine.audit({ requestId: r.id })).filter((e) => e.type === "decided");
    expect(terminal).toHaveLength(1);
  });

  it("deciding again with the same idempotency key returns the original decision", async () => {
    const r = await engine.request({ ...base });
    const first = await engine.decide(r.id, {
      outcome: "approved",
      reviewer: "alice",
      key: "click-1",
    });
    const again = await engine.decide(r.id, {
      outcome: "approved",
      reviewer: "alice",
      key: "click-1",
    });
    expect(again.decision).toEqual(first.decision);
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "alice", key: "click-2" }),
    ).rejects.toMatchObject({ code: "conflict" });
  });

  it("quorum needs distinct approvers; one rejection rejects", async () => {
    const r = await engine.request({ ...base, quorum: 2, items: ["a", "b", "c"] });
    const one = await engine.decide(r.id, {
      outcome: "approved",
      reviewer: "alice",
      selected: ["item-1", "item-2"],
    });
    expect(one.status).toBe("pending");
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "alice" }),
    ).rejects.toMatchObject({ code: "conflict" });
    const two = await engine.decide(r.id, {
      outcome: "approved",
      reviewer: "bob",
      selected: ["item-2", "item-3"],
    });
    expect(two.status).toBe("approved");
    // Only what every approver selected is approved.
    expect(two.decision?.selected).toEqual(["item-2"]);

    const q = await engine.request({ ...base, quorum: 3 });
    await engine.decide(q.id, { outcome: "approved", reviewer: "alice" });
    const rejected = await engine.decide(q.id, { outcome: "rejected", reviewer: "bob" });
    expect(rejected.status).toBe("rejected");
  });

  it("an edit with a selection needs both edit and select allowed", async () => {
    const r = await engine.request({ ...base, items: ["a", "b"], allowed: ["approve", "edit"] });
    await expect(
      engine.decide(r.id, {
        outcome: "approved",
        reviewer: "alice",
        editedArgs: { v: 2 },
        selected: ["item-1"],
      }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "selected" });
    expect((await engine.get(r.id)).status).toBe("pending");
  });

  it("honours the allowed decisions", async () => {
    const r = await engine.request({ ...base, allowed: ["approve", "reject"] });
    await expect(
      engine.decide(r.id, { outcome: "revise", reviewer: "alice" }),
    ).rejects.toMatchObject({
      code: "invalid_input",
    });
  });

  it("unknown ids are not_found", async () => {
    await expect(
      engine.decide("req_nope", { outcome: "approved", reviewer: "a" }),
    ).rejects.toMatchObject({ code: "not_found" });
    await expect(engine.get("req_nope")).rejects.toMatchObject({ code: "not_found" });
  });

  it("cancel ends a pending request and conflicts afterwards", async () => {
    const r = await engine.request({ ...base });
    const c = await engine.cancel(r.id, { by: "agent", reason: "no longer needed" });
    expect(c.status).toBe("cancelled");
    await expect(engine.cancel(r.id)).rejects.toMatchObject({ code: "conflict" });
    await expect(engine.decide(r.id, { outcome: "approved", reviewer: "x" })).rejects.toMatchObject(
      {
        code: "conflict",
      },
    );
  });
});

describe("waitFor", () => {
  it("returns at once for a request decided before anyone waited", async () => {
    const r = await engine.request({ ...base });
    await engine.decide(r.id, { outcome: "approved", reviewer: "alice" });
    const done = await engine.waitFor(r.id);
    expect(done.status).toBe("approved");
  });

  it("wakes on a decision", async () => {
    const r = await engine.request({ ...base });
    const waiting = engine.waitFor(r.id);
    await engine.decide(r.id, { outcome: "rejected", reviewer: "alice" });
    expect((await waiting).status).toBe("rejected");
  });

  it("times out with code timeout, aborts with code aborted, leaves the request pending", async () => {
    const r = await engine.request({ ...base });
    await expect(engine.waitFor(r.id, { timeoutMs: 30 })).rejects.toMatchObject({
      code: "timeout",
    });
    const ac = new AbortController();
    const p = engine.waitFor(r.id, { signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: "aborted" });
    expect((await engine.get(r.id)).status).toBe("pending");
  });

  it("close rejects pending waits", async () => {
    const e2 = await createAirlock({ store: sqliteStore(":memory:") });
    const r = await e2.request({ ...base });
    const p = e2.waitFor(r.id);
    await e2.close();
    await expect(p).rejects.toMatchObject({ code: "closed" });
  });
});

describe("timeouts", () => {
  it("rejects by default when the deadline passes, enforced by the engine", async () => {
    const r = await engine.request({ ...base, timeoutMs: 40 });
    const done = await engine.waitFor(r.id, { timeoutMs: 5000 });
    expect(done.status).toBe("timed_out");
    expect(done.decision).toMatchObject({ method: "timeout", reviewer: "system" });
  });

  it("onTimeout approve approves", async () => {
    const r = await engine.request({ ...base, timeoutMs: 30, onTimeout: "approve", items: ["a"] });
    const done = await engine.waitFor(r.id, { timeoutMs: 5000 });
    expect(done.status).toBe("approved");
    expect(done.decision).toMatchObject({ method: "timeout", selected: ["item-1"] });
  });

  it("escalates along a chain, each step recorded, then times out", async () => {
    const r = await engine.request({
      ...base,
      approvers: ["oncall"],
      timeoutMs: 30,
      onTimeout: {
        escalate: {
          approvers: ["leads"],
          timeoutMs: 30,
          onTimeout: { escalate: { approvers: ["cto"], timeoutMs: 30 } },
        },
      },
    });
    const done = await engine.waitFor(r.id, { timeoutMs: 5000 });
    expect(done.status).toBe("timed_out");
    expect(done.escalations).toBe(2);
    const types = (await engine.audit({ requestId: r.id })).map((e) => e.type);
    expect(types).toEqual(["created", "escalated", "escalated", "timed_out"]);
  });

  it("after an escalation only the new approvers decide", async () => {
    const r = await engine.request({
      ...base,
      approvers: ["oncall"],
      timeoutMs: 20,
      onTimeout: { escalate: { approvers: ["leads"], timeoutMs: 60_000 } },
    });
    for (let i = 0; i < 200 && (await engine.get(r.id)).escalations === 0; i++) {
      await new Promise((res) => setTimeout(res, 10));
    }
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "x", groups: ["oncall"] }),
    ).rejects.toMatchObject({ code: "forbidden" });
    const d = await engine.decide(r.id, { outcome: "approved", reviewer: "y", groups: ["leads"] });
    expect(d.status).toBe("approved");
  });

  it("a restarted engine times out requests that became overdue while it was down", async () => {
    const now = { t: 1_000_000 };
    const store = sqliteStore(":memory:");
    const e1 = await createAirlock({ store, clock: { now: () => now.t }, sweeper: false });
    const r = await e1.request({ ...base, timeoutMs: 1000 });
    now.t += 5000;
    // A second engine on the same store (the "restart") sweeps overdue requests when it starts.
    const e2 = await createAirlock({ store, clock: { now: () => now.t } });
    expect((await e2.get(r.id)).status).toBe("timed_out");
    await e2.close();
  });
});

describe("audit", () => {
  it("redacts secrets (nested, case-insensitive) but keeps them in the request args", async () => {
    const r = await engine.request({
      ...base,
      args: {
        url: "db",
        Password: "hunter2",
        nested: { api_key: "k", list: [{ authToken: "t" }] },
      },
    });
    const [created] = await engine.audit({ requestId: r.id });
    const text = JSON.stringify(created);
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain('"k"');
    expect(text).not.toContain('"t"');
    expect(created?.data.args).toEqual({
      url: "db",
      Password: "[REDACTED]",
      nested: { api_key: "[REDACTED]", list: [{ authToken: "[REDACTED]" }] },
    });
    expect((await engine.get(r.id)).args.Password).toBe("hunter2");
  });

  it("verifies the chain and detects an edited row", async () => {
    const store = sqliteStore(":memory:");
    const e = await createAirlock({ store });
    const r = await e.request({ ...base });
    await e.decide(r.id, { outcome: "approved", reviewer: "alice" });
    expect(await e.verifyAudit()).toMatchObject({ ok: true, count: 2 });
    await e.close();
  });

  it("streams events live, in order, and resumes after a seq", async () => {
    const seen: string[] = [];
    const ac = new AbortController();
    const stream = (async () => {
      for await (const ev of engine.events({ signal: ac.signal })) {
        seen.push(`${ev.seq}:${ev.type}`);
        if (seen.length === 3) ac.abort();
      }
    })();
    const r = await engine.request({ ...base });
    await engine.record({ type: "viewed", requestId: r.id, actor: "alice", data: {} });
    await engine.decide(r.id, { outcome: "approved", reviewer: "alice" });
    await stream;
    expect(seen).toEqual(["1:created", "2:viewed", "3:decided"]);
    const resumed: number[] = [];
    const ac2 = new AbortController();
    for await (const ev of engine.events({ after: 1, signal: ac2.signal })) {
      resumed.push(ev.seq);
      if (resumed.length === 2) ac2.abort();
    }
    expect(resumed).toEqual([2, 3]);
  });
});

describe("metrics", () => {
  it("computes rates and review durations from the store", async () => {
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await engine.request({ ...base })).id);
    await engine.decide(ids[0] as string, { outcome: "approved", reviewer: "a" });
    await engine.decide(ids[1] as string, { outcome: "approved", reviewer: "a" });
    await engine.decide(ids[2] as string, { outcome: "revise", reviewer: "a" });
    const m = await engine.metrics();
    expect(m.total).toBe(3);
    expect(m.pending).toBe(1);
    expect(m.approvalRate).toBeCloseTo(2 / 3);
    expect(m.revisionRate).toBeCloseTo(1 / 3);
    expect(m.timeoutRate).toBe(0);
    expect(m.reviewDurationMs?.p50).toBeGreaterThanOrEqual(0);
    expect(m.byAction.generic?.total).toBe(3);
  });
});
