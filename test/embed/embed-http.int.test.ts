// Embed tokens over real HTTP: who may mint one and for whom, what one opens (its own request's
// three /v1/embed routes, nothing else), how a decision through it is recorded, expiry and tampering,
// and CORS for the configured origins only.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmbedTokens } from "../../src/server/embed/token.js";
import { embedPublicRoutes } from "../../src/server/routes/embed.js";
import { createToken, revokeToken } from "../../src/server/tokens.js";
import { gate, startTestServer, type TestServer } from "../server/helpers.js";

const SECRET = "embed-test-secret-0123456789abcdef";
const CHAT_ORIGIN = "http://127.0.0.1:1";

describe("embed tokens over HTTP", () => {
  let s: TestServer;

  beforeAll(async () => {
    s = await startTestServer({ embedSecret: SECRET, embedOrigins: [CHAT_ORIGIN] });
  });
  afterAll(async () => {
    await s?.close();
  });

  /** A pending request created by agent "bot". */
  async function open(extra: Record<string, unknown> = {}): Promise<string> {
    const r = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("embed", extra));
    expect(r.status).toBe(201);
    return r.body.id;
  }
  const mint = (token: string, id: string, body: Record<string, unknown>) =>
    s.call(token, "POST", `/v1/requests/${id}/embed-token`, body);

  it("lets an app backend and an admin mint, for a reviewer who may decide", async () => {
    const id = await open({ approvers: ["alice"] });
    const byAdmin = await mint(s.tokens.admin, id, { reviewer: "alice" });
    expect(byAdmin.status).toBe(201);
    expect(byAdmin.body.token).toMatch(/^ale_/);
    const byApp = await mint(s.tokens.app, id, { reviewer: "Alice", ttlSeconds: 60 });
    expect(byApp.status).toBe(201);
    expect(byApp.body.expiresAt).toBeGreaterThan(Date.now());
    expect(byApp.body.expiresAt).toBeLessThanOrEqual(Date.now() + 60_000);
    // The default lifetime is 10 minutes.
    expect(byAdmin.body.expiresAt).toBeGreaterThan(byApp.body.expiresAt);
    // Each mint is audited, without the token.
    const audit = await s.call(s.tokens.admin, "GET", `/v1/audit?requestId=${id}`);
    const issued = audit.body.items.filter(
      (e: { type: string; data: { event?: string } }) =>
        e.type === "notified" && e.data.event === "embed token issued",
    );
    expect(issued.map((e: { actor: string }) => e.actor)).toEqual(["root", "chat-app"]);
    expect(issued[1].data).toMatchObject({ reviewer: "alice", channel: "chat" });
    expect(audit.text).not.toContain(byApp.body.token);
  });

  it("never mints for an agent, not even the requester's: every refusal reads the same", async () => {
    const id = await open({ approvers: ["alice", "ops"] });
    const refusals = [
      await mint(s.tokens.agent, id, { reviewer: "alice" }), // the requester's own agent
      await mint(s.tokens.agent, id, { reviewer: "alice", groups: ["ops"] }),
      await mint(s.tokens.dual, id, { reviewer: "alice" }), // an agent's token that also reviews
      await mint(s.tokens.alice, id, { reviewer: "alice" }), // a reviewer's token mints nothing
      await mint(s.tokens.app, id, { reviewer: "bot" }), // the requester as reviewer
      await mint(s.tokens.admin, id, { reviewer: "bot" }),
      await mint(s.tokens.app, id, { reviewer: "bob" }), // not an approver
      await mint(s.tokens.admin, id, { reviewer: "bob" }),
      await mint(s.tokens.app, id, { reviewer: "puppet" }), // no reviewer token
      await mint(s.tokens.admin, id, { reviewer: "carol", groups: ["ops"] }),
      await mint(s.tokens.app, id, { reviewer: "bob", groups: ["ops"] }), // a group bob lacks
    ];
    expect(refusals.map((r) => r.status)).toEqual(refusals.map(() => 403));
    // Nothing in the answer tells which names exist or which groups they hold.
    const minting = refusals.filter((r) => r.body.detail.startsWith("no card token minted"));
    expect(new Set(minting.map((r) => r.body.detail)).size).toBe(1);
    expect(minting.length).toBe(refusals.length);
    for (const r of refusals) {
      expect(r.body.detail).not.toMatch(/holds no reviewer token|not in the group|approvers:/);
    }
    expect((await mint(s.tokens.admin, "req_missing", { reviewer: "alice" })).status).toBe(404);
    // An app reads no requests: a missing one gets the same sentence as any refusal.
    const missing = await mint(s.tokens.app, "req_missing", { reviewer: "alice" });
    expect(missing.status).toBe(403);
    expect(missing.body.detail).toBe(refusals[0]?.body.detail);
    for (const ttlSeconds of [0, 3601, 1.5]) {
      expect((await mint(s.tokens.app, id, { reviewer: "alice", ttlSeconds })).status).toBe(400);
    }
  });

  it("never lets anyone vouch for a puppet's group membership", async () => {
    const id = await open({ approvers: ["ops"] });
    expect((await mint(s.tokens.app, id, { reviewer: "puppet", groups: ["ops"] })).status).toBe(
      403,
    );
    // bob holds a reviewer token, but not in ops.
    expect((await mint(s.tokens.app, id, { reviewer: "bob", groups: ["ops"] })).status).toBe(403);
    // alice's own token says she is in ops: the server's record, not the minter's word; groups
    // not named default to those her tokens hold.
    expect((await mint(s.tokens.app, id, { reviewer: "alice", groups: ["ops"] })).status).toBe(201);
    expect((await mint(s.tokens.app, id, { reviewer: "alice" })).status).toBe(201);
    // Not even an admin's word makes a reviewer of a name the server does not know.
    expect((await mint(s.tokens.admin, id, { reviewer: "carol", groups: ["ops"] })).status).toBe(
      403,
    );
    // The requester picks its request's approvers: naming a made-up one gains nothing.
    const listed = await open({ approvers: ["puppet"] });
    expect((await mint(s.tokens.app, listed, { reviewer: "puppet" })).status).toBe(403);
    // A request open to any reviewer: only names the server knows as reviewers.
    const anyone = await open();
    expect((await mint(s.tokens.app, anyone, { reviewer: "puppet" })).status).toBe(403);
    expect((await mint(s.tokens.app, anyone, { reviewer: "bob" })).status).toBe(201);
  });

  it("opens its own request's three routes and nothing else", async () => {
    const mine = await open({ approvers: ["alice"] });
    const other = await open({ approvers: ["alice"] });
    const token = (await mint(s.tokens.app, mine, { reviewer: "alice" })).body.token as string;

    const read = await s.call(token, "GET", `/v1/embed/requests/${mine}`);
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(mine);
    expect(read.headers.get("cache-control")).toBe("no-store");
    expect((await s.call(token, "GET", `/v1/embed/requests/${mine}/wait?timeout=0`)).status).toBe(
      200,
    );

    const refused: [string, string, unknown?][] = [
      ["GET", `/v1/embed/requests/${other}`],
      ["GET", `/v1/embed/requests/${other}/wait?timeout=0`],
      ["POST", `/v1/embed/requests/${other}/decisions`, { outcome: "approved" }],
      ["GET", `/v1/requests/${mine}`],
      ["GET", `/v1/requests/${mine}/wait?timeout=0`],
      ["POST", `/v1/requests/${mine}/decisions`, { outcome: "approved" }],
      ["POST", `/v1/requests/${mine}/cancel`, {}],
      ["POST", `/v1/requests/${mine}/embed-token`, { reviewer: "alice" }],
      ["GET", "/v1/requests"],
      ["GET", "/v1/events"],
      ["GET", `/v1/audit?requestId=${mine}`],
      ["GET", "/v1/tokens"],
      ["GET", "/metrics"],
      ["GET", "/openapi.json"],
    ];
    for (const [method, path, body] of refused) {
      const r = await s.call(token, method, path, body);
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.headers.get("content-type")).toBe("application/problem+json");
    }
    expect((await s.airlock.get(other)).status).toBe("pending");
    // The inbox does not take it as a sign-in token either.
    const login = await fetch(`${s.url}/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: s.url },
      body: `token=${encodeURIComponent(token)}`,
      redirect: "manual",
    });
    await login.body?.cancel();
    expect(login.headers.get("set-cookie") ?? "").not.toMatch(/session/i);

    // API tokens do not open the embed routes.
    const api = await s.call(s.tokens.alice, "GET", `/v1/embed/requests/${mine}`);
    expect(api.status).toBe(403);
    expect(api.body.detail).toContain("embed token");
  });

  it("decides as the named reviewer through the chat channel, through the state machine", async () => {
    const id = await open({ approvers: ["alice"], items: ["one", "two"] });
    const token = (await mint(s.tokens.app, id, { reviewer: "alice" })).body.token as string;
    // Identity fields come from the token, not the body.
    const forged = await s.call(token, "POST", `/v1/embed/requests/${id}/decisions`, {
      outcome: "approved",
      reviewer: "root",
    });
    expect(forged.status).toBe(400);
    const r = await s.call(token, "POST", `/v1/embed/requests/${id}/decisions`, {
      outcome: "approved",
      selected: ["item-1"],
      comment: "only the first",
    });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("approved");
    expect(r.body.decision).toMatchObject({
      reviewer: "alice",
      channel: "chat",
      selected: ["item-1"],
      comment: "only the first",
    });
    const again = await s.call(token, "POST", `/v1/embed/requests/${id}/decisions`, {
      outcome: "rejected",
    });
    expect(again.status).toBe(409);
    expect(again.body.request.decision.reviewer).toBe("alice");
  });

  it("answers the long-poll when the request is decided elsewhere", async () => {
    const id = await open({ approvers: ["alice"] });
    const token = (await mint(s.tokens.app, id, { reviewer: "alice" })).body.token as string;
    const waiting = s.call(token, "GET", `/v1/embed/requests/${id}/wait?timeout=30`);
    // Decided in another channel (the API, as bob may not: alice's API token).
    const decided = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "rejected",
      comment: "not now",
    });
    expect(decided.status).toBe(200);
    const r = await waiting;
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("rejected");
  });

  it("refuses an expired, tampered or foreign token with 401", async () => {
    const id = await open({ approvers: ["alice"] });
    const same = createEmbedTokens(SECRET);
    const claims = {
      requestId: id,
      reviewer: "alice",
      groups: [],
      expiresAt: Date.now() - 1,
      mintedBy: "chat-app",
      minterTokenId: (await s.tokenStore.list()).find((t) => t.name === "chat-app")?.id ?? "",
      minterRoles: ["app" as const],
    };
    const expired = await s.call(same.mint(claims), "GET", `/v1/embed/requests/${id}`);
    expect(expired.status).toBe(401);
    expect(expired.body.detail).toContain("expired");

    const fresh = { ...claims, expiresAt: Date.now() + 60_000 };
    const foreign = createEmbedTokens("another-secret-0123456789abcdefghij").mint(fresh);
    expect((await s.call(foreign, "GET", `/v1/embed/requests/${id}`)).status).toBe(401);

    // The same payload naming another reviewer, with the original signature.
    const good = same.mint(fresh);
    const [payload, mac] = good.slice(4).split(".");
    const json = JSON.parse(Buffer.from(payload ?? "", "base64url").toString("utf8"));
    const forged = Buffer.from(JSON.stringify({ ...json, sub: "root" })).toString("base64url");
    const tampered = await s.call(`ale_${forged}.${mac}`, "GET", `/v1/embed/requests/${id}`);
    expect(tampered.status).toBe(401);
    expect((await s.call(good, "GET", `/v1/embed/requests/${id}`)).status).toBe(200);
  });

  it("answers CORS on the embed routes for the configured origins only", async () => {
    const id = await open({ approvers: ["alice"] });
    const preflight = (origin: string, path: string) =>
      fetch(`${s.url}${path}`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, content-type",
        },
      });
    const ok = await preflight(CHAT_ORIGIN, `/v1/embed/requests/${id}/decisions`);
    await ok.body?.cancel();
    expect(ok.status).toBe(204);
    expect(ok.headers.get("access-control-allow-origin")).toBe(CHAT_ORIGIN);
    expect(ok.headers.get("access-control-allow-headers")?.toLowerCase()).toContain(
      "authorization",
    );
    expect(ok.headers.get("access-control-allow-methods")).toContain("POST");

    const evil = await preflight("http://127.0.0.1:2", `/v1/embed/requests/${id}/decisions`);
    await evil.body?.cancel();
    expect(evil.headers.get("access-control-allow-origin")).toBeNull();
    // The rest of the API never answers CORS.
    const api = await preflight(CHAT_ORIGIN, `/v1/requests/${id}/decisions`);
    await api.body?.cancel();
    expect(api.headers.get("access-control-allow-origin")).toBeNull();

    const token = (await mint(s.tokens.app, id, { reviewer: "alice" })).body.token as string;
    const read = await s.call(token, "GET", `/v1/embed/requests/${id}`, undefined, {
      origin: CHAT_ORIGIN,
    });
    expect(read.headers.get("access-control-allow-origin")).toBe(CHAT_ORIGIN);
    // Errors carry it too, so the card can show why.
    const refused = await s.call(token, "GET", "/v1/embed/requests/other", undefined, {
      origin: CHAT_ORIGIN,
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("access-control-allow-origin")).toBe(CHAT_ORIGIN);
  });

  it("serves the card's script to anyone, loadable from another origin", async () => {
    const r = await fetch(`${s.url}/embed/airlock-approval.js`);
    const text = await r.text();
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(r.headers.get("cross-origin-resource-policy")).toBe("cross-origin");
    expect(text).toContain('customElements.define("airlock-approval"');
    expect(text).not.toContain("innerHTML");
  });
});

describe("embed options", () => {
  it("without embedOrigins answers no CORS, and checks its options at start", async () => {
    const s = await startTestServer();
    try {
      const r = await fetch(`${s.url}/v1/embed/requests/x`, {
        method: "OPTIONS",
        headers: { origin: CHAT_ORIGIN, "access-control-request-method": "GET" },
      });
      await r.body?.cancel();
      expect(r.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      await s.close();
    }
    expect(() => createEmbedTokens("short")).toThrow(/32 characters/);
    expect(() => embedPublicRoutes(["https://chat.example.com/"])).toThrow(/embedOrigins/);
  });
});

describe("embed token limits", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ embedSecret: SECRET });
  });
  afterAll(async () => {
    await s?.close();
  });
  const open = async () =>
    (await s.call(s.tokens.agent, "POST", "/v1/requests", gate("limits", { approvers: ["ops"] })))
      .body.id as string;
  const mint = (token: string, id: string) =>
    s.call(token, "POST", `/v1/requests/${id}/embed-token`, { reviewer: "alice" });

  it("limits mints to 30 a minute per minting token, and to 50 per request", async () => {
    const id = await open();
    const byApp: number[] = [];
    for (let i = 0; i < 30; i++) byApp.push((await mint(s.tokens.app, id)).status);
    expect(byApp.every((st) => st === 201)).toBe(true);
    const limited = await mint(s.tokens.app, id); // the 31st
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another minter's budget is its own; the request's cap counts every minter's.
    for (let i = 0; i < 20; i++) expect((await mint(s.tokens.admin, id)).status).toBe(201);
    const capped = await mint(s.tokens.admin, id);
    expect(capped.status).toBe(429);
    expect(capped.body.detail).toMatch(/50 card tokens were minted for/);
    // Another request still gets cards from the same admin.
    expect((await mint(s.tokens.admin, await open())).status).toBe(201);
  });

  it("ends a card once its minter's token is revoked", async () => {
    const app = await createToken(s.tokenStore, { name: "other-app", roles: ["app"] });
    const id = await open();
    const card = (await mint(app.token, id)).body.token as string;
    expect((await s.call(card, "GET", `/v1/embed/requests/${id}`)).status).toBe(200);
    await revokeToken(s.tokenStore, app.record.id);
    const after = await s.call(card, "POST", `/v1/embed/requests/${id}/decisions`, {
      outcome: "approved",
    });
    expect(after.status).toBe(401);
    expect(after.body.detail).toMatch(/no longer stands/);
    expect((await s.airlock.get(id)).status).toBe("pending");
  });
});
