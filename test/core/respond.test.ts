// The `respond` decision (issue 33): a reviewer answers a request instead of approving or rejecting
// it; the answer (`response`) is checked against the request's `responseSchema`, settles the request
// as `responded`, is audited (redacted) and reaches the waiting agent; nothing is approved.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { computeMetrics } from "../../src/core/metrics.js";
import { viewDigestOf } from "../../src/core/review-view.js";
import { DECISION_KINDS, decisionKind, methodsFor } from "../../src/core/state.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { runApproved } from "../../src/engine/run-approved.js";
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

const responseSchema = {
  type: "object",
  properties: {
    budget: { type: "integer", minimum: 0, title: "What is the budget, in dollars?" },
    audience: { type: "string", title: "Who reads the report?" },
  },
  required: ["budget"],
  additionalProperties: false,
};

const base = { title: "Plan the research", requester: "agent" } as const;

describe("the rules of respond", () => {
  it("is its own kind: outcome responded, method respond, allowed only where the request opts in", () => {
    expect(DECISION_KINDS.respond).toEqual({
      outcome: "responded",
      method: "respond",
      methods: [],
      allowed: "respond",
    });
    expect(decisionKind({ outcome: "responded" })).toBe("respond");
    expect(methodsFor("responded")).toEqual(["respond"]);
  });

  it("is not in the default allowed list; a responseSchema with no list opts in", async () => {
    const plain = await engine.request(base);
    expect(plain.allowed).not.toContain("respond");
    await expect(
      engine.decide(plain.id, { outcome: "responded", reviewer: "alice", response: "yes" }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "outcome" });
    expect((await engine.get(plain.id)).status).toBe("pending");

    const opted = await engine.request({ ...base, responseSchema });
    expect(opted.allowed).toEqual(["approve", "reject", "revise", "select", "edit", "respond"]);
    expect(opted.responseSchema).toEqual(responseSchema);
  });

  it("refuses a responseSchema the allowed list could never use, and one that is no schema", async () => {
    await expect(
      engine.request({ ...base, allowed: ["approve", "reject"], responseSchema }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "responseSchema" });
    await expect(
      engine.request({ ...base, allowed: ["respond"], responseSchema: { type: 42 } }),
    ).rejects.toMatchObject({
      code: "invalid_input",
      field: "responseSchema",
      message: expect.stringMatching(/not a JSON Schema Airlock can check a response against/),
    });
  });

  it("needs a response with outcome responded, and takes one with no other outcome", async () => {
    const r = await engine.request({ ...base, allowed: ["approve", "reject", "respond"] });
    await expect(
      engine.decide(r.id, { outcome: "responded", reviewer: "alice" }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "response" });
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "alice", response: "hi" }),
    ).rejects.toMatchObject({
      code: "invalid_input",
      field: "response",
      message: "a response can only come with outcome `responded`, not `approved`",
    });
    await expect(
      engine.decide(r.id, {
        outcome: "responded",
        reviewer: "alice",
        response: "x",
        editedArgs: { a: 1 },
      }),
    ).rejects.toMatchObject({ field: "editedArgs" });
    await expect(
      engine.decide(r.id, { outcome: "responded", reviewer: "alice", response: 1, method: "edit" }),
    ).rejects.toMatchObject({ field: "method" });
    expect((await engine.get(r.id)).status).toBe("pending");
  });

  it("checks the response against the request's schema, naming the path in words", async () => {
    const r = await engine.request({ ...base, allowed: ["approve", "respond"], responseSchema });
    await expect(
      engine.decide(r.id, {
        outcome: "responded",
        reviewer: "alice",
        response: { budget: "lots" },
      }),
    ).rejects.toMatchObject({
      code: "invalid_input",
      field: "response.budget",
      message:
        'The response does not fit the request\'s response schema: budget: expected a number, got the text "lots"',
    });
    await expect(
      engine.decide(r.id, { outcome: "responded", reviewer: "alice", response: "just text" }),
    ).rejects.toMatchObject({ field: "response" });
    expect((await engine.get(r.id)).status).toBe("pending");
  });

  it("refuses a response that is not JSON, too deep or too large", async () => {
    const r = await engine.request({ ...base, allowed: ["respond"] });
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < 70; i++) {
      const next: Record<string, unknown> = {};
      at.a = next;
      at = next;
    }
    for (const response of [deep, { n: Number.NaN }, new Date(0), "x".repeat(70_000)]) {
      await expect(
        engine.decide(r.id, { outcome: "responded", reviewer: "alice", response }),
      ).rejects.toMatchObject({ code: "invalid_input" });
    }
    expect((await engine.get(r.id)).status).toBe("pending");
  });
});

describe("a response settles the request", () => {
  it("as responded, with the answer in the decision, the audit (redacted) and the waiter", async () => {
    const r = await engine.request({ ...base, allowed: ["approve", "respond"], responseSchema });
    const waiting = engine.waitFor(r.id);
    const answer = { budget: 500, audience: "the CTO" };
    const decided = await engine.decide(r.id, {
      outcome: "responded",
      reviewer: "alice",
      response: answer,
      comment: "keep it short",
      viewDigest: viewDigestOf(r),
    });
    expect(decided.status).toBe("responded");
    expect(decided.decision).toMatchObject({
      outcome: "responded",
      method: "respond",
      response: answer,
      reviewer: "alice",
      comment: "keep it short",
    });
    // Nothing was approved: no args hash to execute.
    expect(decided.decision?.argsHash).toBeUndefined();
    const settled = await waiting;
    expect(settled.status).toBe("responded");
    expect(settled.decision?.response).toEqual(answer);

    // A second decision loses, naming the response that won.
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "bob" }),
    ).rejects.toMatchObject({ code: "conflict", message: /alice \(responded, respond\)/ });

    const event = (await engine.audit({ requestId: r.id })).find((e) => e.type === "decided");
    expect(event?.data).toMatchObject({
      outcome: "responded",
      method: "respond",
      response: answer,
    });
  });

  it("redacts sensitive keys of a response in the audit, and keeps them in the decision", async () => {
    const r = await engine.request({ ...base, allowed: ["respond"] });
    await engine.decide(r.id, {
      outcome: "responded",
      reviewer: "alice",
      response: { apiKey: "sk-123", note: "use the staging key" },
    });
    const event = (await engine.audit({ requestId: r.id })).find((e) => e.type === "decided");
    const response = event?.data.response as Record<string, unknown>;
    expect(response.note).toBe("use the staging key");
    expect(response.apiKey).not.toBe("sk-123");
    expect((await engine.get(r.id)).decision?.response).toEqual({
      apiKey: "sk-123",
      note: "use the staging key",
    });
  });

  it("goes through the same authority as any decision: never the requester, only approvers, the view bound", async () => {
    const r = await engine.request({ ...base, approvers: ["ops"], allowed: ["respond"] });
    await expect(
      engine.decide(r.id, { outcome: "responded", reviewer: "agent", response: "mine" }),
    ).rejects.toMatchObject({ code: "forbidden" });
    await expect(
      engine.decide(r.id, { outcome: "responded", reviewer: "mallory", response: "x" }),
    ).rejects.toMatchObject({ code: "forbidden" });
    await expect(
      engine.decide(r.id, {
        outcome: "responded",
        reviewer: "dave",
        groups: ["ops"],
        response: "x",
        viewDigest: "0".repeat(64),
      }),
    ).rejects.toMatchObject({ code: "view_changed", message: /^view_changed/ });
    const ok = await engine.decide(r.id, {
      outcome: "responded",
      reviewer: "dave",
      groups: ["ops"],
      response: null,
    });
    expect(ok.status).toBe("responded");
    expect(ok.decision?.response).toBeNull();
  });

  it("settles a quorum request at the first response: an answer is not a vote", async () => {
    const r = await engine.request({ ...base, quorum: 2, allowed: ["approve", "respond"] });
    await engine.decide(r.id, { outcome: "approved", reviewer: "alice" });
    const answered = await engine.decide(r.id, {
      outcome: "responded",
      reviewer: "bob",
      response: "wait for the audit first",
    });
    expect(answered.status).toBe("responded");
    expect(answered.decisions.map((d) => d.outcome)).toEqual(["approved", "responded"]);
  });

  it("is shown in the review view (allowed and the schema) and changes its digest", async () => {
    const plain = await engine.request({ ...base, allowed: ["approve"] });
    const asking = await engine.request({
      ...base,
      allowed: ["approve", "respond"],
      responseSchema,
    });
    expect(viewDigestOf(plain)).not.toBe(viewDigestOf(asking));
    const { reviewViewOf } = await import("../../src/core/review-view.js");
    expect(reviewViewOf(asking)).toMatchObject({
      allowed: ["approve", "respond"],
      responseSchema,
    });
    expect(reviewViewOf(plain).responseSchema).toBeUndefined();
  });

  it("lets the agent follow up with a new version (revisionOf) of the answered request", async () => {
    const first = await engine.request({ ...base, allowed: ["approve", "respond"] });
    await engine.decide(first.id, { outcome: "responded", reviewer: "alice", response: "EU only" });
    const second = await engine.request({ ...base, title: "Plan (EU)", revisionOf: first.id });
    expect(second.revisionOf).toBe(first.id);
  });
});

describe("what runs and what is counted", () => {
  it("runApproved never runs the action on a response, and hands back the answer", async () => {
    const r = await engine.request({ ...base, allowed: ["approve", "respond"] });
    await engine.decide(r.id, {
      outcome: "responded",
      reviewer: "alice",
      response: { go: "later" },
    });
    let ran = false;
    const result = await runApproved(engine, r.id, () => {
      ran = true;
      return "done";
    });
    expect(ran).toBe(false);
    expect(result.ok).toBe(false);
    if (result.ok || result.reason !== "responded") throw new Error("expected a response");
    // The discriminated union gives `response` only on this branch.
    expect(result.response).toEqual({ go: "later" });
    expect(result.detail).toMatch(/answered by alice instead of approved/);
    await expect(engine.claimExecution(r.id)).rejects.toMatchObject({ code: "conflict" });
  });

  it("counts responses apart from approvals, rejections and revisions", async () => {
    const a = await engine.request({ ...base, action: "plan", allowed: ["approve", "respond"] });
    const b = await engine.request({ ...base, action: "plan", allowed: ["approve", "respond"] });
    clock.t += 60_000;
    await engine.decide(a.id, { outcome: "approved", reviewer: "alice" });
    await engine.decide(b.id, { outcome: "responded", reviewer: "alice", response: "?" });
    const m = await engine.metrics();
    expect(m.byOutcome).toMatchObject({ approved: 1, responded: 1 });
    expect(m.approvalRate).toBeCloseTo(0.5);
    expect(m.responseRate).toBeCloseTo(0.5);
    expect(m.revisionRate).toBe(0);
    expect(m.reviewDurationMs?.p50).toBe(60_000);
    const rows = computeMetrics(
      [{ action: "plan", status: "responded", method: "respond", createdAt: 0, decidedAt: 10 }],
      0,
    );
    expect(rows.responseRate).toBe(1);
    expect(rows.reviewDurationMs?.p50).toBe(10);
  });
});
