// Authentication, the role × route matrix, object-level visibility (no leaks) and rate limits.
import type { IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  gate,
  openEvents,
  type SseEvent,
  startTestServer,
  type TestServer,
  take,
} from "./helpers.js";

let s: TestServer;
/** Created by agent "bot" for group ops: visible to bot, alice (ops), dual (ops), root. */
let ours: string;
/** Created by agent "bot2" for group finance: visible to bot2, bob (finance), root only. */
let theirs: string;

beforeAll(async () => {
  s = await startTestServer();
  ours = (
    await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Ours", { approvers: ["ops"] }))
  ).body.id;
  theirs = (
    await s.call(
      s.tokens.agent2,
      "POST",
      "/v1/requests",
      gate("Theirs", { approvers: ["finance"] }),
    )
  ).body.id;
});
afterAll(async () => {
  await s.close();
});

type Role = "agent" | "reviewer" | "admin";
const tokenOf = (role: Role) =>
  role === "agent" ? s.tokens.agent : role === "reviewer" ? s.tokens.alice : s.tokens.admin;

/** A fresh pending request by bot for ops, for routes that change it. */
async function fresh(): Promise<string> {
  return (
    await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Fresh", { approvers: ["ops"] }))
  ).body.id;
}
async function freshTheirs(): Promise<string> {
  return (
    await s.call(
      s.tokens.agent2,
      "POST",
      "/v1/requests",
      gate("Fresh theirs", { approvers: ["finance"] }),
    )
  ).body.id;
}

interface Case {
  name: string;
  method: string;
  path: () => Promise<string> | string;
  body?: () => Promise<unknown> | unknown;
  expected: Record<Role, number>;
}

const cases: Case[] = [
  {
    name: "create",
    method: "POST",
    path: () => "/v1/requests",
    body: () => gate("Matrix"),
    expected: { agent: 201, reviewer: 403, admin: 201 },
  },
  {
    name: "list",
    method: "GET",
    path: () => "/v1/requests",
    expected: { agent: 200, reviewer: 200, admin: 200 },
  },
  {
    name: "read visible",
    method: "GET",
    path: () => `/v1/requests/${ours}`,
    expected: { agent: 200, reviewer: 200, admin: 200 },
  },
  {
    name: "read hidden",
    method: "GET",
    path: () => `/v1/requests/${theirs}`,
    expected: { agent: 404, reviewer: 404, admin: 200 },
  },
  {
    name: "wait visible",
    method: "GET",
    path: () => `/v1/requests/${ours}/wait?timeout=0`,
    expected: { agent: 200, reviewer: 200, admin: 200 },
  },
  {
    name: "wait hidden",
    method: "GET",
    path: () => `/v1/requests/${theirs}/wait?timeout=0`,
    expected: { agent: 404, reviewer: 404, admin: 200 },
  },
  {
    name: "decide visible",
    method: "POST",
    path: async () => `/v1/requests/${await fresh()}/decisions`,
    body: () => ({ outcome: "approved" }),
    expected: { agent: 403, reviewer: 200, admin: 200 },
  },
  {
    name: "decide hidden",
    method: "POST",
    path: async () => `/v1/requests/${await freshTheirs()}/decisions`,
    body: () => ({ outcome: "approved" }),
    expected: { agent: 403, reviewer: 404, admin: 200 },
  },
  {
    name: "cancel visible",
    method: "POST",
    path: async () => `/v1/requests/${await fresh()}/cancel`,
    // A reviewer who may decide may cancel too, but only with a reason (see the cancel tests).
    expected: { agent: 200, reviewer: 422, admin: 200 },
  },
  {
    name: "cancel visible, with a reason",
    method: "POST",
    path: async () => `/v1/requests/${await fresh()}/cancel`,
    body: () => ({ reason: "the agent offered no way to say no" }),
    expected: { agent: 200, reviewer: 200, admin: 200 },
  },
  {
    name: "cancel hidden",
    method: "POST",
    path: async () => `/v1/requests/${await freshTheirs()}/cancel`,
    expected: { agent: 404, reviewer: 404, admin: 200 },
  },
  {
    name: "audit of visible",
    method: "GET",
    path: () => `/v1/audit?requestId=${ours}`,
    expected: { agent: 200, reviewer: 200, admin: 200 },
  },
  {
    name: "audit of hidden",
    method: "GET",
    path: () => `/v1/audit?requestId=${theirs}`,
    expected: { agent: 404, reviewer: 404, admin: 200 },
  },
  {
    name: "whole audit",
    method: "GET",
    path: () => "/v1/audit",
    expected: { agent: 403, reviewer: 403, admin: 200 },
  },
  {
    name: "audit verify",
    method: "GET",
    path: () => "/v1/audit/verify",
    expected: { agent: 403, reviewer: 403, admin: 200 },
  },
  {
    name: "events",
    method: "GET",
    path: () => "/v1/events",
    expected: { agent: 200, reviewer: 200, admin: 200 },
  },
  {
    name: "events of visible",
    method: "GET",
    path: () => `/v1/events?requestId=${ours}`,
    expected: { agent: 200, reviewer: 200, admin: 200 },
  },
  {
    name: "events of hidden",
    method: "GET",
    path: () => `/v1/events?requestId=${theirs}`,
    expected: { agent: 404, reviewer: 404, admin: 200 },
  },
  {
    name: "token list",
    method: "GET",
    path: () => "/v1/tokens",
    expected: { agent: 403, reviewer: 403, admin: 200 },
  },
  {
    name: "token create",
    method: "POST",
    path: () => "/v1/tokens",
    body: () => ({ name: "new", roles: ["agent"] }),
    expected: { agent: 403, reviewer: 403, admin: 201 },
  },
  {
    name: "token revoke",
    method: "DELETE",
    path: async () => {
      const created = await s.call(s.tokens.admin, "POST", "/v1/tokens", {
        name: "victim",
        roles: ["agent"],
      });
      return `/v1/tokens/${created.body.id}`;
    },
    expected: { agent: 403, reviewer: 403, admin: 200 },
  },
  {
    name: "metrics",
    method: "GET",
    path: () => "/metrics",
    expected: { agent: 403, reviewer: 403, admin: 200 },
  },
  {
    name: "openapi",
    method: "GET",
    path: () => "/openapi.json",
    expected: { agent: 200, reviewer: 200, admin: 200 },
  },
];

describe("role × route matrix", () => {
  for (const c of cases) {
    for (const role of ["agent", "reviewer", "admin"] as const) {
      it(`${role} → ${c.name}: ${c.expected[role]}`, async () => {
        const path = await c.path();
        const body = c.body ? await c.body() : undefined;
        if (path.startsWith("/v1/events")) {
          // A stream never ends by itself: look at the status and headers, then hang up.
          const stop = new AbortController();
          const res = await fetch(s.url + path, {
            headers: { authorization: `Bearer ${tokenOf(role)}` },
            signal: stop.signal,
          });
          expect(res.status).toBe(c.expected[role]);
          if (res.status === 200)
            expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
          stop.abort();
          return;
        }
        const r = await s.call(tokenOf(role), c.method, path, body);
        expect(r.status).toBe(c.expected[role]);
        if (r.status >= 400) expect(r.headers.get("content-type")).toBe("application/problem+json");
      });
    }
  }

  it("lets admins decide requests they are not an approver of, and records them as reviewer", async () => {
    const id = await freshTheirs();
    const r = await s.call(s.tokens.admin, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "rejected",
    });
    expect(r.body.decision.reviewer).toBe("root");
  });
});

describe("authentication", () => {
  const routes: [string, string][] = [
    ["POST", "/v1/requests"],
    ["GET", "/v1/requests"],
    ["GET", "/v1/requests/x"],
    ["GET", "/v1/requests/x/wait"],
    ["POST", "/v1/requests/x/decisions"],
    ["POST", "/v1/requests/x/cancel"],
    ["GET", "/v1/events"],
    ["GET", "/v1/audit"],
    ["GET", "/v1/audit/verify"],
    ["GET", "/v1/tokens"],
    ["POST", "/v1/tokens"],
    ["DELETE", "/v1/tokens/x"],
    ["GET", "/metrics"],
    ["GET", "/openapi.json"],
    ["GET", "/no-such-route"],
  ];

  // The web inbox (served under / with its own session cookie) is tested in test/inbox.
  it("answers 401 with a Bearer challenge on every API route but /healthz, without a token", async () => {
    for (const [method, path] of routes) {
      const r = await s.call(
        undefined,
        method,
        path,
        method === "GET" || method === "DELETE" ? undefined : {},
      );
      expect(r.status, `${method} ${path}`).toBe(401);
      expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(r.body.code).toBe("unauthorized");
    }
    const health = await s.call(undefined, "GET", "/healthz");
    expect(health.status).toBe(200);
    expect(health.body).toEqual({
      status: "ok",
      ok: true,
      shuttingDown: false,
      storage: { ok: true },
    });
  });

  it("answers 401 for an unknown token, a malformed header and a revoked token", async () => {
    expect((await s.call("alk_not-a-real-token", "GET", "/v1/requests")).status).toBe(401);
    const basic = await fetch(`${s.url}/v1/requests`, {
      headers: { authorization: "Basic Ym90OmJvdA==" },
    });
    expect(basic.status).toBe(401);
    await basic.text();

    const created = await s.call(s.tokens.admin, "POST", "/v1/tokens", {
      name: "temp",
      roles: ["agent"],
    });
    expect((await s.call(created.body.token, "GET", "/v1/requests")).status).toBe(200);
    await s.call(s.tokens.admin, "DELETE", `/v1/tokens/${created.body.id}`);
    const revoked = await s.call(created.body.token, "GET", "/v1/requests");
    expect(revoked.status).toBe(401);
    expect(revoked.body.detail).toMatch(/revoked/);
  });
});

describe("object-level visibility", () => {
  it("answers a hidden request exactly like a missing one", async () => {
    const hidden = await s.call(s.tokens.alice, "GET", `/v1/requests/${theirs}`);
    const missing = await s.call(
      s.tokens.alice,
      "GET",
      "/v1/requests/req_00000000000000000000000000",
    );
    expect(hidden.status).toBe(missing.status);
    expect(hidden.body.code).toBe(missing.body.code);
    expect(hidden.body.detail.replace(theirs, "ID")).toBe(
      missing.body.detail.replace("req_00000000000000000000000000", "ID"),
    );
    expect(hidden.text).not.toContain("Theirs");
  });

  it("lists only what each caller may see", async () => {
    const open = (await s.call(s.tokens.agent2, "POST", "/v1/requests", gate("Open to all"))).body
      .id;
    const ids = async (token: string, query = "") =>
      (
        (await s.call(token, "GET", `/v1/requests?limit=500${query}`)).body.items as {
          id: string;
          requester: string;
        }[]
      ).map((r) => r.id);

    const bot = await ids(s.tokens.agent);
    expect(bot).toContain(ours);
    expect(bot).not.toContain(theirs);
    expect(bot).not.toContain(open);
    // An agent asking for someone else's requests still gets only its own (none of these).
    expect(await ids(s.tokens.agent, "&requester=bot2")).toEqual([]);

    const alice = await ids(s.tokens.alice);
    expect(alice).toContain(ours);
    expect(alice).toContain(open);
    expect(alice).not.toContain(theirs);
    // Asking for another group's queue yields only requests open to everyone.
    const asFinance = await ids(s.tokens.alice, "&approver=finance");
    expect(asFinance).not.toContain(theirs);
    expect(asFinance).toContain(open);

    const bob = await ids(s.tokens.bob);
    expect(bob).toContain(theirs);
    expect(bob).not.toContain(ours);

    const root = await ids(s.tokens.admin);
    expect(root).toEqual(expect.arrayContaining([ours, theirs, open]));
  });

  it("streams only the events of visible requests", async () => {
    const stop = new AbortController();
    try {
      const stream = await openEvents(s.url, s.tokens.alice, {
        signal: stop.signal,
        query: "?types=created",
      });
      await s.call(
        s.tokens.agent2,
        "POST",
        "/v1/requests",
        gate("Hidden from alice", { approvers: ["finance"] }),
      );
      const seen = await s.call(
        s.tokens.agent,
        "POST",
        "/v1/requests",
        gate("Shown to alice", { approvers: ["ops"] }),
      );
      const [first] = await take(stream, 1);
      const event = JSON.parse((first as SseEvent).data);
      expect(event.requestId).toBe(seen.body.id);
      expect(event.data.title).toBe("Shown to alice");
    } finally {
      stop.abort();
    }
  });
});

describe("rate limits", () => {
  it("answers 429 with Retry-After once a token exceeds its rate; other tokens are unaffected", async () => {
    const limited = await startTestServer({ rateLimit: { max: 3, windowMs: 60_000 } });
    try {
      for (let i = 0; i < 3; i++) {
        const r = await limited.call(limited.tokens.agent, "GET", "/v1/requests");
        expect(r.status).toBe(200);
        expect(r.headers.get("ratelimit-remaining")).toBe(String(2 - i));
      }
      const over = await limited.call(limited.tokens.agent, "GET", "/v1/requests");
      expect(over.status).toBe(429);
      expect(over.headers.get("content-type")).toBe("application/problem+json");
      expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(over.body).toMatchObject({ code: "rate_limited", status: 429 });
      expect((await limited.call(limited.tokens.alice, "GET", "/v1/requests")).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it("answers 429 to an address after repeated failed authentications, and still serves valid tokens from it", async () => {
    const limited = await startTestServer({ authFailureLimit: { max: 2, windowMs: 60_000 } });
    try {
      expect((await call(limited.url, "bad-1", "GET", "/v1/requests")).status).toBe(401);
      expect((await call(limited.url, "bad-2", "GET", "/v1/requests")).status).toBe(401);
      const blocked = await call(limited.url, "bad-3", "GET", "/v1/requests");
      expect(blocked.status).toBe(429);
      expect(blocked.body.code).toBe("rate_limited");
      expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      // The address is over its limit, yet a valid credential is served: the limit slows down
      // guessing, it never locks out a client (behind a proxy all clients share one address).
      const admin = await call(limited.url, limited.tokens.admin, "GET", "/v1/requests");
      expect(admin.status).toBe(200);
      const agent = await call(
        limited.url,
        limited.tokens.agent,
        "POST",
        "/v1/requests",
        gate("t"),
      );
      expect(agent.status).toBe(201);
      expect((await call(limited.url, "bad-4", "GET", "/v1/requests")).status).toBe(429);
    } finally {
      await limited.close();
    }
  });

  it("does not count requests that carry no credential at all (public paths, probes)", async () => {
    const limited = await startTestServer({ authFailureLimit: { max: 2, windowMs: 60_000 } });
    try {
      for (let i = 0; i < 10; i++) {
        expect((await call(limited.url, undefined, "GET", "/robots.txt")).status).toBe(200);
        expect((await call(limited.url, undefined, "GET", "/healthz")).status).toBe(200);
        expect((await call(limited.url, undefined, "GET", "/v1/requests")).status).toBe(401);
      }
      // None of those counted: a wrong token is still answered 401, not 429.
      expect((await call(limited.url, "bad-1", "GET", "/v1/requests")).status).toBe(401);
      expect((await call(limited.url, limited.tokens.admin, "GET", "/v1/requests")).status).toBe(
        200,
      );
    } finally {
      await limited.close();
    }
  });

  it("counts failed authentications per client address", async () => {
    const limited = await startTestServer({ authFailureLimit: { max: 2, windowMs: 60_000 } });
    const from = (remoteAddress: string) => ({
      incoming: { socket: { remoteAddress } } as unknown as IncomingMessage,
    });
    const ask = (token: string, address: string) =>
      limited.server.app.request(
        "/v1/requests",
        { headers: { authorization: `Bearer ${token}` } },
        from(address),
      );
    try {
      expect((await ask("bad-1", "10.0.0.1")).status).toBe(401);
      expect((await ask("bad-2", "10.0.0.1")).status).toBe(401);
      expect((await ask("bad-3", "10.0.0.1")).status).toBe(429);
      expect((await ask("bad-3", "10.0.0.2")).status).toBe(401);
      expect((await ask(limited.tokens.admin, "10.0.0.1")).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
