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

  it("is refused to agents through a deadline that approves, even inside an escalation", async () => {
    const direct = await s.call(s.tokens.agent, "POST", "/v1/requests", {
      title: "x",
      timeoutMs: 1,
      onTimeout: "approve",
    });
    expect(direct.status).toBe(403);
    expect(direct.headers.get("content-type")).toContain("application/problem+json");
    expect(direct.body).toMatchObject({ field: "onTimeout" });
    const nested = await s.call(s.tokens.agent, "POST", "/v1/requests", {
      title: "x",
      timeoutMs: 1,
      onTimeout: { escalate: { approvers: ["ops"], timeoutMs: 1, onTimeout: "approve" } },
    });
    expect(nested.status).toBe(403);
    expect(nested.body).toMatchObject({ field: "onTimeout" });
    const escalating = await s.call(s.tokens.agent, "POST", "/v1/requests", {
      title: "x",
      timeoutMs: 60_000,
      onTimeout: { escalate: { approvers: ["ops"], timeoutMs: 60_000 } },
    });
    expect(escalating.status).toBe(201);
    const admin = await s.call(s.tokens.admin, "POST", "/v1/requests", {
      title: "x",
      timeoutMs: 60_000,
      onTimeout: "approve",
    });
    expect(admin.status).toBe(201);
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
