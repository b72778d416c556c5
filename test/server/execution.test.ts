// POST /v1/requests/:id/execution: the requester claims an approved request for execution, once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/client/index.js";
import { startTestServer, type TestServer } from "./helpers.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

describe("claiming an execution over HTTP", () => {
  it("the requester claims once; the second claim is a 409; others may not claim", async () => {
    const created = await s.call(s.tokens.agent, "POST", "/v1/requests", { title: "ship it" });
    const id = created.body.id as string;
    const early = await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/execution`);
    expect(early.status).toBe(409);
    expect(early.headers.get("content-type")).toContain("application/problem+json");
    await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, { outcome: "approved" });

    const reviewer = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/execution`);
    expect(reviewer.status).toBe(403);
    const stranger = await s.call(s.tokens.agent2, "POST", `/v1/requests/${id}/execution`);
    expect(stranger.status).toBe(404);

    const first = await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/execution`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: "approved", executedBy: "bot" });
    const second = await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/execution`);
    expect(second.status).toBe(409);
    expect(second.body.detail).toMatch(/already executed by bot/);
  });

  it("the client's claimExecution maps the 409 to a conflict", async () => {
    const client = createClient({ url: s.url, token: s.tokens.agent });
    const r = await client.request({ title: "client claim" });
    await s.call(s.tokens.alice, "POST", `/v1/requests/${r.id}/decisions`, { outcome: "approved" });
    expect((await client.claimExecution(r.id)).executedAt).toBeGreaterThan(0);
    await expect(client.claimExecution(r.id)).rejects.toMatchObject({ code: "conflict" });
  });
});
