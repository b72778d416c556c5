// An agent cannot wave its own request through the gate; an admin can, and it is recorded as auto.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

describe("skipping the human", () => {
  it("is refused to agents, with the field named", async () => {
    const a = await s.call(s.tokens.agent, "POST", "/v1/requests", {
      title: "x",
      requireApproval: false,
    });
    expect(a.status).toBe(403);
    expect(a.headers.get("content-type")).toContain("application/problem+json");
    expect(a.body).toMatchObject({ field: "requireApproval" });
    const b = await s.call(s.tokens.agent, "POST", "/v1/requests", { title: "x", level: "auto" });
    expect(b.status).toBe(403);
    expect(b.body).toMatchObject({ field: "level" });
    const listed = await s.call(s.tokens.agent, "GET", "/v1/requests");
    expect(listed.body.items).toHaveLength(0);
  });

  it("is allowed to admins and recorded as method auto", async () => {
    const r = await s.call(s.tokens.admin, "POST", "/v1/requests", {
      title: "y",
      requireApproval: false,
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: "approved", decision: { method: "auto" } });
  });
});
