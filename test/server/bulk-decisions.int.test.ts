// POST /v1/decisions: many decisions in one call, each decided on its own with its own result:
// recorded, decided by someone else first (with the winner), the caller's own request, not visible.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { problemStatuses } from "../../src/server/openapi.js";
import { decisionsRoute, MAX_DECISIONS } from "../../src/server/routes/decisions.js";
import { gate, type Reply, startTestServer, type TestServer } from "./helpers.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

const documented = () =>
  new Set([
    ...Object.keys(decisionsRoute.responses).map(Number),
    ...problemStatuses(decisionsRoute),
  ]);

async function bulk(token: string | undefined, body: unknown): Promise<Reply> {
  const r = await s.call(token, "POST", "/v1/decisions", body);
  // Every answer is one the route documents.
  expect(documented().has(r.status), `status ${r.status}: ${r.text}`).toBe(true);
  return r;
}

async function open(token: string, title: string, extra: Record<string, unknown> = {}) {
  const r = await s.call(token, "POST", "/v1/requests", gate(title, extra));
  expect(r.status).toBe(201);
  return r.body.id as string;
}

describe("POST /v1/decisions", () => {
  it("decides each item on its own and reports a conflict, a forbidden and a hidden item", async () => {
    const { agent, alice, bob } = s.tokens;
    const a = await open(agent, "deploy a");
    const b = await open(agent, "deploy b");
    const raced = await open(agent, "deploy raced");
    const own = (await s.airlock.request({ title: "alice's own", requester: "alice" })).id;
    const hidden = await open(agent, "finance only", { approvers: ["finance"] });
    // Someone else decides first.
    const won = await s.call(bob, "POST", `/v1/requests/${raced}/decisions`, {
      outcome: "rejected",
      comment: "not today",
    });
    expect(won.status).toBe(200);

    const r = await bulk(alice, {
      decisions: [
        { id: a, outcome: "approved", comment: "batch" },
        { id: raced, outcome: "approved" },
        { id: own, outcome: "approved" },
        { id: hidden, outcome: "approved" },
        { id: b, outcome: "rejected", comment: "no b" },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.decided).toBe(2);
    expect(r.body.failed).toBe(3);
    const [ra, rraced, rown, rhidden, rb] = r.body.results;
    expect(ra).toMatchObject({ id: a, ok: true, request: { status: "approved" } });
    expect(ra.request.decision).toMatchObject({
      reviewer: "alice",
      comment: "batch",
      channel: "api",
    });
    expect(rraced).toMatchObject({
      id: raced,
      ok: false,
      status: 409,
      code: "conflict",
      decision: { reviewer: "bob", outcome: "rejected", comment: "not today" },
    });
    expect(rown).toMatchObject({ id: own, ok: false, status: 403, code: "forbidden" });
    expect(rown.detail).toMatch(/own|requester|yourself/i);
    // Not an approver: answered like a missing id, and nothing about the request leaks.
    expect(rhidden).toMatchObject({ id: hidden, ok: false, status: 404, code: "not_found" });
    expect(rhidden.decision).toBeUndefined();
    expect(rb).toMatchObject({ id: b, ok: true, request: { status: "rejected" } });

    // Each request got its own decision and its own audit event; the others were left alone.
    for (const id of [a, b]) {
      const events = await s.airlock.audit({ requestId: id });
      expect(events.filter((e) => e.type === "decided")).toHaveLength(1);
    }
    expect((await s.airlock.get(raced)).decision?.reviewer).toBe("bob");
    expect((await s.airlock.get(own)).status).toBe("pending");
    expect((await s.airlock.get(hidden)).status).toBe("pending");
  });

  it("takes one decision shared by a list of ids", async () => {
    const ids = [await open(s.tokens.agent, "x"), await open(s.tokens.agent, "y")];
    const r = await bulk(s.tokens.alice, { ids, outcome: "rejected", comment: "all of them: no" });
    expect(r.status).toBe(200);
    expect(r.body.results.map((x: { ok: boolean }) => x.ok)).toEqual([true, true]);
    for (const id of ids) {
      expect((await s.airlock.get(id)).decision).toMatchObject({
        outcome: "rejected",
        reviewer: "alice",
        comment: "all of them: no",
      });
    }
  });

  it("an admin is credited with the approvers, but never decides its own request", async () => {
    const theirs = await open(s.tokens.agent, "finance thing", { approvers: ["finance"] });
    const r = await bulk(s.tokens.admin, { ids: [theirs, "nope"], outcome: "approved" });
    expect(r.body.results[0]).toMatchObject({ ok: true, request: { status: "approved" } });
    expect(r.body.results[1]).toMatchObject({ id: "nope", ok: false, status: 404 });
  });

  it("refuses bad input whole, with a problem naming what is wrong", async () => {
    const id = await open(s.tokens.agent, "untouched");
    const cases: [unknown, RegExp][] = [
      [{ ids: [id] }, /outcome/],
      [{ ids: [id], outcome: "approved", decisions: [{ id, outcome: "approved" }] }, /either/],
      [{ decisions: [{ id, outcome: "approved" }], comment: "x" }, /inside each item/],
      [{ ids: [id, id], outcome: "approved" }, /listed twice/],
      [{ ids: [], outcome: "approved" }, /ids/],
      [{ decisions: [{ id, outcome: "maybe" }] }, /decisions\.0\.outcome/],
      [{ decisions: [{ id, outcome: "approved", reviewer: "mallory" }] }, /reviewer/],
      [
        { ids: Array.from({ length: MAX_DECISIONS + 1 }, (_, i) => `r${i}`), outcome: "approved" },
        new RegExp(`at most ${MAX_DECISIONS}`),
      ],
    ];
    for (const [body, detail] of cases) {
      const r = await bulk(s.tokens.alice, body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(r.headers.get("content-type")).toContain("application/problem+json");
      expect(r.body.detail).toMatch(detail);
    }
    expect((await s.airlock.get(id)).status).toBe("pending");
  });

  it("is for reviewers and admins, with a token", async () => {
    const id = await open(s.tokens.agent, "agent tries");
    expect((await bulk(undefined, { ids: [id], outcome: "approved" })).status).toBe(401);
    const agent = await bulk(s.tokens.agent, { ids: [id], outcome: "approved" });
    expect(agent.status).toBe(403);
    const plain = await s.call(s.tokens.alice, "POST", "/v1/decisions", "plain", {
      "content-type": "text/plain",
    });
    expect(plain.status).toBe(415);
    const big = await s.call(s.tokens.alice, "POST", "/v1/decisions", {
      ids: [id],
      outcome: "approved",
      comment: "x".repeat(2 * 1024 * 1024),
    });
    expect(big.status).toBe(413);
    expect((await s.airlock.get(id)).status).toBe("pending");
  });
});
