// The review view and its digest: GET /v1/requests/{id}/view, and a decision bound to what was shown.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { viewDigestOf } from "../../src/core/review-view.js";
import { startTestServer, type TestServer } from "./helpers.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

describe("the review view", () => {
  it("labels the agent's words, carries the exact args, and its digest binds the decision", async () => {
    const created = await s.call(s.tokens.agent, "POST", "/v1/requests", {
      title: "Pay the coffee invoice",
      summary: "Pay the $5 coffee invoice",
      args: { amount: 50000, to: "IBAN-ATTACKER-777" },
    });
    const id = created.body.id as string;
    const shown = await s.call(s.tokens.alice, "GET", `/v1/requests/${id}/view`);
    expect(shown.status).toBe(200);
    expect(shown.body.view).toMatchObject({
      agentSummary: "Pay the $5 coffee invoice",
      args: { amount: 50000, to: "IBAN-ATTACKER-777" },
      requester: "bot",
    });
    expect(shown.body.viewDigest).toBe(viewDigestOf(await s.airlock.get(id)));
    expect((await s.call(s.tokens.agent2, "GET", `/v1/requests/${id}/view`)).status).toBe(404);

    const wrong = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      viewDigest: "0".repeat(64),
    });
    expect(wrong.status).toBe(409);
    expect(wrong.body.code).toBe("view_changed");
    expect(wrong.body.detail).toMatch(/^view_changed/);
    expect((await s.airlock.get(id)).status).toBe("pending");
    const bad = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      viewDigest: "short",
    });
    expect(bad.status).toBe(400);

    const ok = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      viewDigest: shown.body.viewDigest,
    });
    expect(ok.status).toBe(200);
    expect(ok.body.decision.viewDigest).toBe(shown.body.viewDigest);
    const decided = (await s.airlock.audit({ requestId: id })).find((e) => e.type === "decided");
    expect(decided?.data.viewDigest).toBe(shown.body.viewDigest);
  });

  it("a revision changes the view: a digest of the old one does not decide the new one", async () => {
    const first = await s.call(s.tokens.agent, "POST", "/v1/requests", {
      title: "Deploy",
      args: { version: 1 },
    });
    const oldView = await s.call(s.tokens.alice, "GET", `/v1/requests/${first.body.id}/view`);
    const second = await s.call(s.tokens.agent, "POST", "/v1/requests", {
      title: "Deploy",
      args: { version: 2 },
    });
    const stale = await s.call(s.tokens.alice, "POST", `/v1/requests/${second.body.id}/decisions`, {
      outcome: "approved",
      viewDigest: oldView.body.viewDigest,
    });
    expect(stale.status).toBe(409);
  });
});
