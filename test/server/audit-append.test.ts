// POST /v1/audit: agents report what they executed without a human; the actor is the token's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

describe("POST /v1/audit", () => {
  it("appends an auto_executed event with the token's principal as actor, redacted", async () => {
    const r = await s.call(s.tokens.agent, "POST", "/v1/audit", {
      type: "auto_executed",
      actor: "someone-else",
      data: { tool: "update_task_status", args: { password: "hunter2" } },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      type: "auto_executed",
      actor: "bot",
      data: {
        tool: "update_task_status",
        args: { password: "[REDACTED]" },
        claimedActor: "someone-else",
      },
    });
    expect((await s.airlock.verifyAudit()).ok).toBe(true);
  });

  it("refuses other types, reviewers, and requests the agent may not see", async () => {
    const wrongType = await s.call(s.tokens.agent, "POST", "/v1/audit", {
      type: "decided",
      data: {},
    });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body).toMatchObject({ field: "type" });
    const reviewer = await s.call(s.tokens.alice, "POST", "/v1/audit", {
      type: "notified",
      data: {},
    });
    expect(reviewer.status).toBe(403);
    const other = await s.call(s.tokens.agent2, "POST", "/v1/requests", { title: "theirs" });
    const hidden = await s.call(s.tokens.agent, "POST", "/v1/audit", {
      type: "notified",
      requestId: other.body.id,
      data: {},
    });
    expect(hidden.status).toBe(404);
    const none = await s.call(undefined, "POST", "/v1/audit", { type: "notified", data: {} });
    expect(none.status).toBe(401);
  });
});
