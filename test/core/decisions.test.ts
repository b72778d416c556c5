// Who may decide and how: a reviewer can always say no (reject, or cancel with a reason), a revision
// can be made to need a comment, identities compare in normal form, the audit takes only events that
// change no request, and an approval cannot be executed after it expired.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canDecide } from "../../src/core/state.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { memoryStore } from "../../src/store/memory.js";

const clock = { t: 1_700_000_000_000 };
let engine: Airlock;
beforeEach(async () => {
  clock.t = 1_700_000_000_000;
  engine = await createAirlock({ store: memoryStore(), clock: { now: () => clock.t } });
});
afterEach(async () => {
  await engine.close();
});

const base = { title: "Deploy v2", requester: "agent" } as const;

describe("a reviewer can always say no", () => {
  it("rejects a request whose allowed list leaves out reject", async () => {
    const r = await engine.request({ ...base, allowed: ["approve"] });
    await expect(
      engine.decide(r.id, { outcome: "revise", reviewer: "alice", comment: "x" }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "outcome" });
    const d = await engine.decide(r.id, { outcome: "rejected", reviewer: "alice" });
    expect(d.status).toBe("rejected");
  });

  it("cancels as a reviewer who may decide, with a reason, on the channel it came by", async () => {
    const r = await engine.request({ ...base, approvers: ["ops"], allowed: ["approve"] });
    await expect(
      engine.cancel(r.id, { by: "mallory", reason: "no", asReviewer: {} }),
    ).rejects.toMatchObject({ code: "forbidden" });
    await expect(
      engine.cancel(r.id, { by: "agent", reason: "mine", asReviewer: { groups: ["ops"] } }),
    ).rejects.toMatchObject({ code: "forbidden" });
    await expect(
      engine.cancel(r.id, { by: "dave", reason: "  ", asReviewer: { groups: ["ops"] } }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "reason" });
    expect((await engine.get(r.id)).status).toBe("pending");
    const c = await engine.cancel(r.id, {
      by: "dave",
      reason: "this should never have been asked",
      channel: "web",
      asReviewer: { groups: ["ops"] },
    });
    expect(c.status).toBe("cancelled");
    expect(c.decision).toMatchObject({
      method: "cancel",
      reviewer: "dave",
      channel: "web",
      comment: "this should never have been asked",
    });
  });

  it("the requester's cancellation needs no reason and is recorded as coming by the API", async () => {
    const r = await engine.request({ ...base });
    const c = await engine.cancel(r.id);
    expect(c.decision).toMatchObject({ reviewer: "agent", channel: "api" });
  });

  it("canDecide: pending, not one's own, and listed", async () => {
    const r = await engine.request({ ...base, approvers: ["Ops"] });
    expect(canDecide(r, "dave", ["ops"])).toBe(true);
    expect(canDecide(r, "dave", [])).toBe(false);
    expect(canDecide(r, "Agent", ["ops"])).toBe(false);
    const done = await engine.decide(r.id, {
      outcome: "rejected",
      reviewer: "dave",
      groups: ["OPS"],
    });
    expect(canDecide(done, "dave", ["ops"])).toBe(false);
  });
});

describe("revisionCommentRequired", () => {
  it("refuses a revision without a comment when the request asks for one", async () => {
    const r = await engine.request({ ...base, revisionCommentRequired: true });
    expect(r.revisionCommentRequired).toBe(true);
    for (const comment of [undefined, "", "  \n "]) {
      const err = await engine
        .decide(r.id, {
          outcome: "revise",
          reviewer: "alice",
          ...(comment === undefined ? {} : { comment }),
        })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "invalid_input", field: "comment" });
      expect((err as Error).message).toBe(
        "this request needs a comment with a revision: say what should change",
      );
    }
    const d = await engine.decide(r.id, {
      outcome: "revise",
      reviewer: "alice",
      comment: "drop step 2",
    });
    expect(d.status).toBe("revise");
  });

  it("is off by default: pattern 2 sends a plan back without a word", async () => {
    const r = await engine.request({ ...base });
    expect(r.revisionCommentRequired).toBe(false);
    expect((await engine.decide(r.id, { outcome: "revise", reviewer: "alice" })).status).toBe(
      "revise",
    );
  });
});

describe("identities in normal form", () => {
  it("Alice and alice are one approver toward a quorum", async () => {
    const r = await engine.request({ ...base, quorum: 2 });
    await engine.decide(r.id, { outcome: "approved", reviewer: "Alice" });
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: " alice " }),
    ).rejects.toMatchObject({ code: "conflict" });
    const d = await engine.decide(r.id, { outcome: "approved", reviewer: "bob" });
    expect(d.status).toBe("approved");
    expect(d.decisions.map((x) => x.reviewer)).toEqual(["alice", "bob"]);
  });

  it("lists and counts by requester and approver in normal form", async () => {
    const mine = await engine.request({ ...base, requester: "Build Bot", approvers: ["Ops"] });
    await engine.request({ ...base });
    expect((await engine.list({ requester: "build  BOT" })).items.map((r) => r.id)).toEqual([
      mine.id,
    ]);
    expect(await engine.count({ requester: " Build Bot" })).toBe(1);
    const forOps = await engine.listSummaries({ approver: ["nobody", "OPS"] });
    expect(forOps.items.map((r) => r.id)).toContain(mine.id);
  });

  it("nobody approves their own request under another spelling", async () => {
    const r = await engine.request({ ...base, requester: "Build Bot" });
    expect(r.requester).toBe("build bot");
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "build  BOT" }),
    ).rejects.toMatchObject({ code: "forbidden" });
  });

  it("approvers and groups match in normal form and are stored normalised", async () => {
    const r = await engine.request({ ...base, approvers: ["Ops", "ops ", "Carol"] });
    expect(r.approvers).toEqual(["ops", "carol"]);
    expect(
      (await engine.decide(r.id, { outcome: "approved", reviewer: "CAROL" })).decision?.reviewer,
    ).toBe("carol");
    const byGroup = await engine.request({ ...base, approvers: ["Ops"] });
    const d = await engine.decide(byGroup.id, {
      outcome: "approved",
      reviewer: "dave",
      groups: ["OPS"],
    });
    expect(d.status).toBe("approved");
  });
});

describe("record", () => {
  it("takes only events that change no request", async () => {
    const r = await engine.request({ ...base });
    for (const type of ["decided", "created", "timed_out", "cancelled", "executed", "escalated"]) {
      const err = await engine
        .record({ type, requestId: r.id, actor: "agent", data: { outcome: "approved" } } as never)
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "invalid_input", field: "type" });
      expect((err as Error).message).toMatch("only events that change no request");
    }
    expect((await engine.audit({ requestId: r.id })).map((e) => e.type)).toEqual(["created"]);
    for (const type of ["notified", "viewed"] as const) {
      await engine.record({ type, requestId: r.id, actor: "agent", data: { step: 1 } });
    }
    expect((await engine.get(r.id)).status).toBe("pending");
  });

  it("refuses auto_executed on a request that is not approved", async () => {
    const pending = await engine.request({ ...base });
    const rejected = await engine.request({ ...base });
    await engine.decide(rejected.id, { outcome: "rejected", reviewer: "alice" });
    for (const id of [pending.id, rejected.id]) {
      await expect(
        engine.record({ type: "auto_executed", requestId: id, actor: "agent" }),
      ).rejects.toMatchObject({ code: "conflict" });
    }
    const approved = await engine.request({ ...base, requireApproval: false });
    const e = await engine.record({
      type: "auto_executed",
      requestId: approved.id,
      actor: "agent",
    });
    expect(e.type).toBe("auto_executed");
    // Without a request it is an automatic call that needed no gate at all.
    await engine.record({ type: "auto_executed", actor: "agent", data: { tool: "lookup" } });
  });
});

describe("claimExecution and validUntil", () => {
  it("refuses to execute an approval after it expired", async () => {
    const r = await engine.request({ ...base });
    const d = await engine.decide(r.id, {
      outcome: "approved",
      reviewer: "alice",
      validForMs: 60_000,
    });
    clock.t += 60_001;
    const err = await engine.claimExecution(r.id).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "conflict" });
    expect((err as Error).message).toBe(
      `the approval of ${r.id} expired at ${new Date(d.decision?.validUntil ?? 0).toISOString()}; ask again`,
    );
    expect((await engine.get(r.id)).executedAt).toBeUndefined();
  });

  it("executes within the validity", async () => {
    const r = await engine.request({ ...base });
    await engine.decide(r.id, { outcome: "approved", reviewer: "alice", validForMs: 60_000 });
    clock.t += 60_000;
    expect((await engine.claimExecution(r.id)).execution?.claimedAt).toBe(clock.t);
  });
});
