// The resumers' tickets over HTTP (POST /v1/tickets, /v1/tickets/finish) against a real server on
// 127.0.0.1: an agent or admin token takes them, a reviewer's is refused; a ticket's scope is the
// token's principal, so one agent neither takes nor blocks another's; the holder is named after the
// principal, and renewing as another principal's holder is refused; a take is no request.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/index.js";
import { startTestServer, type TestServer } from "../server/helpers.js";

let srv: TestServer;
beforeEach(async () => {
  srv = await startTestServer();
});
afterEach(async () => {
  await srv.close();
});

describe("resume tickets over HTTP", () => {
  it("agents take, renew and finish their own tickets; another agent's key is another ticket", async () => {
    const bot = createClient({ url: srv.url, token: srv.tokens.agent });
    const bot2 = createClient({ url: srv.url, token: srv.tokens.agent2 });
    const first = await bot.takeTicket("resume:1", { leaseMs: 60_000 });
    expect(first).toMatchObject({
      taken: true,
      key: "resume:1",
      holder: expect.stringMatching(/^bot#/),
    });
    // A second take by the same principal is another holder: told who holds it.
    expect(await bot.takeTicket("resume:1")).toMatchObject({
      taken: false,
      holder: first.holder,
      finished: false,
    });
    // The same key of another agent is another ticket.
    const theirs = await bot2.takeTicket("resume:1");
    expect(theirs).toMatchObject({ taken: true, holder: expect.stringMatching(/^bot2#/) });
    // Renewed by its holder; not by another principal naming it.
    const renewed = await bot.takeTicket("resume:1", { holder: first.holder, leaseMs: 120_000 });
    expect(renewed).toMatchObject({ taken: true, holder: first.holder });
    expect(renewed.expiresAt).toBeGreaterThan(first.expiresAt);
    await expect(bot2.takeTicket("resume:1", { holder: first.holder })).rejects.toMatchObject({
      code: "forbidden",
    });
    // Another principal's finish finds nothing of its own to finish.
    expect(await bot2.finishTicket("resume:1", { holder: first.holder })).toBe(false);
    expect(await bot.finishTicket("resume:1", { holder: first.holder })).toBe(true);
    expect(await bot.finishTicket("resume:1", { holder: first.holder })).toBe(true);
    expect(await bot.takeTicket("resume:1", { holder: first.holder })).toMatchObject({
      taken: false,
      finished: true,
    });
    // bot2's is still its own, unfinished.
    expect(await bot2.takeTicket("resume:1")).toMatchObject({
      taken: false,
      holder: theirs.holder,
      finished: false,
    });
    // No request was created, and an admin (who sees every request) sees none.
    expect((await createClient({ url: srv.url, token: srv.tokens.admin }).list()).items).toEqual(
      [],
    );
    expect((await srv.airlock.metrics()).total).toBe(0);
  });

  it("a reviewer may not take one; bad input is a problem naming the field", async () => {
    const refused = await srv.call(srv.tokens.alice, "POST", "/v1/tickets", { key: "k" });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    const admin = await srv.call(srv.tokens.admin, "POST", "/v1/tickets", { key: "k" });
    expect(admin.status).toBe(200);
    expect(admin.body).toMatchObject({ taken: true, holder: expect.stringMatching(/^root#/) });
    for (const body of [
      {},
      { key: "" },
      { key: "x".repeat(201) },
      { key: "a\u0000b" },
      { key: "k", leaseMs: 0 },
      { key: "k", requester: "someone-else" },
    ]) {
      const res = await srv.call(srv.tokens.agent, "POST", "/v1/tickets", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("invalid_input");
    }
    const finish = await srv.call(srv.tokens.agent, "POST", "/v1/tickets/finish", { key: "k" });
    expect(finish.status).toBe(400);
    expect(finish.body.field).toBe("holder");
    const noToken = await srv.call(undefined, "POST", "/v1/tickets", { key: "k" });
    expect(noToken.status).toBe(401);
  });
});
