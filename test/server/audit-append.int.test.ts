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

  it("refuses auto_executed on a request that is not approved (409), accepts it on an approved one", async () => {
    for (const settle of ["pending", "rejected", "cancelled"] as const) {
      const id = (
        await s.call(s.tokens.agent, "POST", "/v1/requests", {
          title: `Not approved (${settle})`,
          approvers: ["ops"],
        })
      ).body.id;
      if (settle === "rejected") {
        await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
          outcome: "rejected",
        });
      }
      if (settle === "cancelled") await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/cancel`);
      const r = await s.call(s.tokens.agent, "POST", "/v1/audit", {
        type: "auto_executed",
        requestId: id,
        data: { tool: "deploy" },
      });
      expect(r.status, settle).toBe(409);
      expect(r.headers.get("content-type")).toBe("application/problem+json");
      expect(r.body.code).toBe("conflict");
      expect(r.body.detail).toContain("not approved");
      const trail = await s.call(s.tokens.agent, "GET", `/v1/audit?requestId=${id}`);
      expect(trail.body.items.map((e: { type: string }) => e.type)).not.toContain("auto_executed");
    }
    const approved = (
      await s.call(s.tokens.agent, "POST", "/v1/requests", {
        title: "Approved",
        approvers: ["ops"],
      })
    ).body.id;
    await s.call(s.tokens.alice, "POST", `/v1/requests/${approved}/decisions`, {
      outcome: "approved",
    });
    const ok = await s.call(s.tokens.agent, "POST", "/v1/audit", {
      type: "auto_executed",
      requestId: approved,
      data: { tool: "deploy" },
    });
    expect(ok.status).toBe(201);
    // Progress notes stay allowed on a pending request.
    const progress = await s.call(s.tokens.agent, "POST", "/v1/audit", {
      type: "notified",
      requestId: (await s.call(s.tokens.agent, "POST", "/v1/requests", { title: "p" })).body.id,
      data: { step: 1 },
    });
    expect(progress.status).toBe(201);
  });
});
