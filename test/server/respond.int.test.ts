// The `respond` decision over HTTP (issue 33): a reviewer answers a request with a `response`,
// checked against its `responseSchema` (422 naming the path), bound to the view it was shown (409),
// never from the requester's or an agent's token; the bulk route and the TS client carry it too.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/client/index.js";
import { openApiDocument } from "../../src/server/openapi.js";
import { startTestServer, type TestServer } from "./helpers.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
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

async function ask(extra: Record<string, unknown> = {}): Promise<string> {
  const created = await s.call(s.tokens.agent, "POST", "/v1/requests", {
    title: "Research plan: which database?",
    allowed: ["approve", "reject", "respond"],
    responseSchema,
    ...extra,
  });
  expect(created.status, created.text).toBe(201);
  return created.body.id as string;
}

describe("POST /v1/requests/{id}/decisions with outcome responded", () => {
  it("records the answer, which the waiting agent reads from the long-poll", async () => {
    const id = await ask();
    const created = await s.call(s.tokens.agent, "GET", `/v1/requests/${id}`);
    expect(created.body).toMatchObject({
      allowed: ["approve", "reject", "respond"],
      responseSchema,
    });
    const shown = await s.call(s.tokens.alice, "GET", `/v1/requests/${id}/view`);
    expect(shown.body.view).toMatchObject({
      allowed: ["approve", "reject", "respond"],
      responseSchema,
    });

    const waiting = s.call(s.tokens.agent, "GET", `/v1/requests/${id}/wait?timeout=20`);
    const answered = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "responded",
      response: { budget: 500, audience: "the CTO" },
      viewDigest: shown.body.viewDigest,
    });
    expect(answered.status, answered.text).toBe(200);
    expect(answered.body.status).toBe("responded");
    expect(answered.body.decision).toMatchObject({
      outcome: "responded",
      method: "respond",
      reviewer: "alice",
      channel: "api",
      proof: "api_token",
      response: { budget: 500, audience: "the CTO" },
      viewDigest: shown.body.viewDigest,
    });
    const waited = await waiting;
    expect(waited.status).toBe(200);
    expect(waited.body.status).toBe("responded");
    expect(waited.body.decision.response).toEqual({ budget: 500, audience: "the CTO" });

    const audit = await s.call(s.tokens.admin, "GET", `/v1/audit?requestId=${id}`);
    const decided = audit.body.items.find((e: { type: string }) => e.type === "decided");
    expect(decided.data).toMatchObject({
      outcome: "responded",
      response: { budget: 500, audience: "the CTO" },
      viewDigest: shown.body.viewDigest,
    });
  });

  it("answers 422 with the path when the response does not fit the schema", async () => {
    const id = await ask();
    const wrong = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "responded",
      response: { budget: "lots" },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.headers.get("content-type")).toContain("application/problem+json");
    expect(wrong.body.detail).toBe(
      'The response does not fit the request\'s response schema: budget: expected a number, got the text "lots"',
    );
    expect(wrong.body.field).toBe("response.budget");
    const missing = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "responded",
      response: { audience: "me" },
    });
    expect(missing.status).toBe(422);
    expect(missing.body.field).toBe("response.budget");
    const none = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "responded",
    });
    expect(none.status).toBe(422);
    expect(none.body.field).toBe("response");
    const elsewhere = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      response: { budget: 1 },
    });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.field).toBe("response");
    expect((await s.airlock.get(id)).status).toBe("pending");
  });

  it("answers 422 on a request that does not allow respond", async () => {
    const created = await s.call(s.tokens.agent, "POST", "/v1/requests", { title: "Deploy" });
    const id = created.body.id as string;
    expect(created.body.allowed).not.toContain("respond");
    const r = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "responded",
      response: "why now?",
    });
    expect(r.status).toBe(422);
    expect(r.body.detail).toMatch(/does not allow `respond`/);
  });

  it("refuses a response on a view that changed (409), and from the requester's or an agent's token (403)", async () => {
    const id = await ask();
    const stale = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "responded",
      response: { budget: 1 },
      viewDigest: "0".repeat(64),
    });
    expect(stale.status).toBe(409);
    expect(stale.body.detail).toMatch(/^view_changed/);
    // The requester's own token (an agent token) may not answer its own request.
    const own = await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "responded",
      response: { budget: 1 },
    });
    expect(own.status).toBe(403);
    // Nor may another agent's token.
    const other = await s.call(s.tokens.agent2, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "responded",
      response: { budget: 1 },
    });
    expect([403, 404]).toContain(other.status);
    // Nor an approver who is not listed.
    const finance = await ask({ approvers: ["finance"] });
    const notListed = await s.call(s.tokens.alice, "POST", `/v1/requests/${finance}/decisions`, {
      outcome: "responded",
      response: { budget: 1 },
    });
    expect([403, 404]).toContain(notListed.status);
    expect((await s.airlock.get(id)).status).toBe("pending");
    expect((await s.airlock.get(finance)).status).toBe("pending");
  });

  it("refuses a request whose responseSchema nobody could answer", async () => {
    const r = await s.call(s.tokens.agent, "POST", "/v1/requests", {
      title: "Deploy",
      allowed: ["approve"],
      responseSchema,
    });
    expect(r.status).toBe(422);
    expect(r.body.field).toBe("responseSchema");
  });
});

describe("POST /v1/decisions with responses", () => {
  it("records a response per item, and refuses a response shared by ids", async () => {
    const a = await ask();
    const b = await ask();
    const r = await s.call(s.tokens.alice, "POST", "/v1/decisions", {
      decisions: [
        { id: a, outcome: "responded", response: { budget: 10 } },
        { id: b, outcome: "responded", response: { budget: "ten" } },
      ],
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.decided).toBe(1);
    expect(r.body.results[0]).toMatchObject({ id: a, ok: true });
    expect(r.body.results[0].request.decision.response).toEqual({ budget: 10 });
    expect(r.body.results[1]).toMatchObject({
      id: b,
      ok: false,
      status: 422,
      field: "response.budget",
    });
    const shared = await s.call(s.tokens.alice, "POST", "/v1/decisions", {
      ids: [b],
      outcome: "responded",
    });
    expect(shared.status).toBe(400);
    expect(shared.body.detail).toMatch(/a response answers one request/);
  });
});

describe("the API's description and the TypeScript client", () => {
  it("documents the outcome, the method, the response and the schema", () => {
    const doc = openApiDocument() as {
      components: { schemas: Record<string, { properties: Record<string, { enum?: string[] }> }> };
    };
    const { schemas } = doc.components;
    expect(schemas.DecisionInput?.properties.outcome?.enum).toContain("responded");
    expect(schemas.DecisionInput?.properties).toHaveProperty("response");
    expect(schemas.RequestInput?.properties).toHaveProperty("responseSchema");
    expect(schemas.ApprovalRequest?.properties.status?.enum).toContain("responded");
    expect(schemas.DecisionsInput).toBeDefined();
  });

  it("answers through createClient and the agent reads the response from waitFor", async () => {
    const agent = createClient({ url: s.url, token: s.tokens.agent });
    const alice = createClient({ url: s.url, token: s.tokens.alice });
    const r = await agent.request({
      title: "Which region?",
      allowed: ["approve", "respond"],
      responseSchema: { type: "string", enum: ["eu", "us"] },
    });
    const waiting = agent.waitFor(r.id, { timeoutMs: 20_000 });
    await expect(
      alice.decide(r.id, { outcome: "responded", reviewer: "alice", response: "mars" }),
    ).rejects.toMatchObject({
      code: "invalid_input",
      field: "response",
      message:
        "The response does not fit the request's response schema: the response: expected one of eu, us",
    });
    await alice.decide(r.id, { outcome: "responded", reviewer: "alice", response: "eu" });
    const settled = await waiting;
    expect(settled.status).toBe("responded");
    expect(settled.decision?.response).toBe("eu");
  });
});
