// Tokens stored before an agent's token could no longer carry a deciding role (agent + admin, agent +
// reviewer) act as agents alone: nothing they hold decides, mints tokens or cards, cancels another's
// request as a reviewer, claims another's execution, lets a request approve itself by its deadline,
// or signs in to the inbox.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gate, legacyToken, startTestServer, type TestServer } from "./helpers.js";

let s: TestServer;
let boss: string;
beforeAll(async () => {
  s = await startTestServer();
  boss = await legacyToken(s.tokenStore, "boss", ["agent", "admin"], ["ops"]);
});
afterAll(async () => {
  await s?.close();
});

describe("a stored agent + admin token", () => {
  it("creates requests as an agent, but decides, approves by deadline and manages tokens never", async () => {
    const own = await s.call(boss, "POST", "/v1/requests", gate("boss's own"));
    expect(own.status).toBe(201);
    const others = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("bot's"));
    for (const id of [own.body.id, others.body.id]) {
      const r = await s.call(boss, "POST", `/v1/requests/${id}/decisions`, { outcome: "approved" });
      expect([403, 404]).toContain(r.status);
    }
    const minted = await s.call(boss, "POST", "/v1/tokens", {
      name: "puppet",
      roles: ["reviewer"],
    });
    expect(minted.status).toBe(403);
    expect((await s.call(boss, "GET", "/v1/tokens")).status).toBe(403);
    const selfApproving = await s.call(
      boss,
      "POST",
      "/v1/requests",
      gate("approves itself", { timeoutMs: 1000, onTimeout: "approve" }),
    );
    expect(selfApproving.status).toBe(403);
    const skip = await s.call(boss, "POST", "/v1/requests", gate("no human", { level: "auto" }));
    expect(skip.status).toBe(403);
    const card = await s.call(boss, "POST", `/v1/requests/${others.body.id}/embed-token`, {
      reviewer: "alice",
    });
    expect(card.status).toBe(403);
    expect((await s.airlock.get(others.body.id)).status).toBe("pending");
    expect((await s.airlock.get(own.body.id)).status).toBe("pending");
  });

  it("cannot cancel or claim another agent's request", async () => {
    const others = await s.call(
      s.tokens.agent,
      "POST",
      "/v1/requests",
      gate("bot's, ops", { approvers: ["ops"] }),
    );
    const cancel = await s.call(boss, "POST", `/v1/requests/${others.body.id}/cancel`, {
      reason: "mine now",
    });
    expect([403, 404]).toContain(cancel.status);
    const dualCancel = await s.call(
      s.tokens.dual,
      "POST",
      `/v1/requests/${others.body.id}/cancel`,
      {
        reason: "as a reviewer of ops",
      },
    );
    expect([403, 404]).toContain(dualCancel.status);
    expect((await s.airlock.get(others.body.id)).status).toBe("pending");
    await s.call(s.tokens.alice, "POST", `/v1/requests/${others.body.id}/decisions`, {
      outcome: "approved",
    });
    const claim = await s.call(boss, "POST", `/v1/requests/${others.body.id}/execution`);
    expect([403, 404]).toContain(claim.status);
    expect((await s.airlock.get(others.body.id)).executedAt).toBeUndefined();
  });

  it("cannot sign in to the inbox", async () => {
    const form = await fetch(`${s.url}/login`);
    const html = await form.text();
    const cookie = (form.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
    for (const token of [boss, s.tokens.dual]) {
      const res = await fetch(`${s.url}/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
        body: new URLSearchParams({ token, next: "/", _csrf: csrf }).toString(),
        redirect: "manual",
      });
      const page = await res.text();
      expect(res.status).toBe(401);
      expect(page).toMatch(/an agent&#39;s token never does|an agent's token never does/);
    }
  });
});
