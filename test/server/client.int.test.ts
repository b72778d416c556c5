// The remote client end to end against the real server: same API as the engine, same errors.
import { createServer as createTcpServer, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/client/index.js";
import { isAirlockError } from "../../src/core/errors.js";
import type { AirlockApi } from "../../src/engine/api.js";
import { createAirlock } from "../../src/engine/engine.js";
import { createServer } from "../../src/server/server.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { call, startTestServer, type TestServer } from "./helpers.js";

const servers: TestServer[] = [];
async function start(options: Parameters<typeof startTestServer>[0] = {}) {
  const s = await startTestServer(options);
  servers.push(s);
  return s;
}
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function rejection(p: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await p;
  } catch (err) {
    return err as Record<string, unknown>;
  }
  throw new Error("expected a rejection");
}

describe("createClient", () => {
  it("request → waitFor in the client, decided over HTTP by a reviewer", async () => {
    const s = await start();
    const agent: AirlockApi = createClient({ url: s.url, token: s.tokens.agent });
    const created = await agent.request({
      title: "Run 3 searches",
      items: ["q1", "q2", "q3"],
      approvers: ["ops"],
      requester: "bot",
    });
    expect(created).toMatchObject({ status: "pending", requester: "bot" });

    const waiting = agent.waitFor(created.id, { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 100));
    const decided = await call(
      s.url,
      s.tokens.alice,
      "POST",
      `/v1/requests/${created.id}/decisions`,
      {
        outcome: "approved",
        selected: ["item-1", "item-3"],
      },
    );
    expect(decided.status).toBe(200);
    const done = await waiting;
    expect(done.status).toBe("approved");
    expect(done.decision).toMatchObject({ reviewer: "alice", selected: ["item-1", "item-3"] });
  });

  it("offers get, list, decide and cancel like the engine", async () => {
    const s = await start();
    const agent = createClient({ url: `${s.url}/`, token: s.tokens.agent });
    const alice = createClient({ url: s.url, token: s.tokens.alice });
    const a = await agent.request({ title: "A", approvers: ["ops"], key: "client-a" });
    const again = await agent.request({ title: "A", approvers: ["ops"], key: "client-a" });
    expect(again.id).toBe(a.id);
    const b = await agent.request({ title: "B", approvers: ["ops"] });

    expect((await alice.get(a.id)).title).toBe("A");
    const page = await alice.list({ status: "pending", limit: 1 });
    expect(page.items.map((r) => r.id)).toEqual([b.id]);
    const next = await alice.list({ status: ["pending"], limit: 1, cursor: page.nextCursor });
    expect(next.items.map((r) => r.id)).toEqual([a.id]);

    const decided = await alice.decide(a.id, {
      outcome: "rejected",
      reviewer: "alice",
      comment: "no",
    });
    expect(decided.decision).toMatchObject({ outcome: "rejected", comment: "no" });
    const cancelled = await agent.cancel(b.id, { reason: "not needed" });
    expect(cancelled.status).toBe("cancelled");
    expect(await agent.waitFor(a.id)).toMatchObject({ status: "rejected" });
  });

  it("maps problems back to the engine's errors and codes", async () => {
    const s = await start();
    const agent = createClient({ url: s.url, token: s.tokens.agent });
    const alice = createClient({ url: s.url, token: s.tokens.alice });

    const missing = await rejection(agent.get("req_missing"));
    expect(missing).toMatchObject({ code: "not_found", name: "NotFoundError" });
    expect(isAirlockError(missing, "not_found")).toBe(true);

    const r = await agent.request({ title: "Pick", items: ["x", "y"], approvers: ["ops"] });
    const bad = await rejection(
      alice.decide(r.id, { outcome: "approved", reviewer: "alice", selected: ["zz"] }),
    );
    expect(bad).toMatchObject({
      code: "invalid_input",
      field: "selected",
      name: "InvalidInputError",
    });

    const malformed = await rejection(agent.request({ title: "" }));
    expect(malformed).toMatchObject({ code: "invalid_input", field: "title" });

    await alice.decide(r.id, { outcome: "approved", reviewer: "alice" });
    const conflict = await rejection(
      alice.decide(r.id, { outcome: "rejected", reviewer: "alice" }),
    );
    expect(conflict).toMatchObject({ code: "conflict", name: "ConflictError" });
    expect(conflict.decision).toMatchObject({ outcome: "approved", reviewer: "alice" });

    const role = await rejection(agent.decide(r.id, { outcome: "approved", reviewer: "bot" }));
    expect(role).toMatchObject({ code: "forbidden", name: "ForbiddenError" });

    const badToken = createClient({ url: s.url, token: "alk_wrong" });
    expect(await rejection(badToken.list())).toMatchObject({ code: "forbidden" });

    const wrongBase = createClient({ url: `${s.url}/api`, token: s.tokens.agent });
    expect(await rejection(wrongBase.list())).toMatchObject({ code: "not_found" });
  });

  it("waitFor times out on its own timeoutMs, across several long-polls", async () => {
    const s = await start();
    const agent = createClient({ url: s.url, token: s.tokens.agent, pollMs: 200 });
    const r = await agent.request({ title: "Slow" });
    const started = Date.now();
    const err = await rejection(agent.waitFor(r.id, { timeoutMs: 700 }));
    expect(err).toMatchObject({ code: "timeout", name: "TimeoutError" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(650);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("waitFor keeps polling until the decision arrives", async () => {
    const s = await start();
    const agent = createClient({ url: s.url, token: s.tokens.agent, pollMs: 150 });
    const r = await agent.request({ title: "Later", approvers: ["ops"] });
    const waiting = agent.waitFor(r.id, { timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 600));
    await call(s.url, s.tokens.alice, "POST", `/v1/requests/${r.id}/decisions`, {
      outcome: "revise",
      comment: "smaller",
    });
    expect(await waiting).toMatchObject({ status: "revise" });
  });

  it("waitFor honours its AbortSignal", async () => {
    const s = await start();
    const agent = createClient({ url: s.url, token: s.tokens.agent });
    const r = await agent.request({ title: "Abort me" });
    const controller = new AbortController();
    const waiting = agent.waitFor(r.id, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("user pressed Ctrl-C")), 100);
    const err = await rejection(waiting);
    expect(err).toMatchObject({ code: "aborted" });
    expect(String(err.message)).toContain("Ctrl-C");
  });

  it("waitFor rides out a server restart and resumes on the new server", async () => {
    const s = await start();
    const agent = createClient({ url: s.url, token: s.tokens.agent, pollMs: 300 });
    const r = await agent.request({ title: "Survive a restart", approvers: ["ops"] });
    const waiting = agent.waitFor(r.id, { timeoutMs: 15_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await s.server.close();

    // A second server process on the same port and database file.
    const port = Number(new URL(s.url).port);
    const airlock2 = await createAirlock({ store: sqliteStore(s.dbPath) });
    const server2 = createServer({ airlock: airlock2, auth: { tokens: s.tokenStore } });
    try {
      await new Promise((resolve) => setTimeout(resolve, 400));
      await server2.listen({ port, host: "127.0.0.1" });
      const decided = await call(s.url, s.tokens.alice, "POST", `/v1/requests/${r.id}/decisions`, {
        outcome: "approved",
      });
      expect(decided.status).toBe(200);
      expect(await waiting).toMatchObject({ status: "approved" });
    } finally {
      await server2.close();
      await airlock2.close();
    }
  });

  it("refuses a malformed url or an empty token at once", () => {
    expect(() => createClient({ url: "127.0.0.1:7420", token: "t" })).toThrow(/url/);
    expect(() => createClient({ url: "ftp://127.0.0.1", token: "t" })).toThrow(/http/);
    expect(() => createClient({ url: "http://127.0.0.1:7420", token: "" })).toThrow(/token/);
  });

  it("reports an unreachable server as store_unavailable", async () => {
    const s = await start();
    const url = s.url;
    await s.server.close();
    const agent = createClient({ url, token: s.tokens.agent });
    const err = await rejection(agent.list());
    expect(err).toMatchObject({ code: "store_unavailable" });
    expect(String(err.message)).toContain(url);
  });

  it("gives up on a server that accepts but never answers, after requestTimeoutMs", async () => {
    // It holds the connections it accepts, so they can be destroyed at the end (close() alone
    // leaves accepted sockets open).
    const accepted: Socket[] = [];
    const silent = createTcpServer((socket) => {
      accepted.push(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      const agent = createClient({
        url: `http://127.0.0.1:${port}`,
        token: "t",
        requestTimeoutMs: 200,
        retries: 0,
      });
      const started = Date.now();
      const err = await rejection(agent.list());
      expect(err).toMatchObject({ code: "store_unavailable" });
      expect(String(err.message)).toContain("200 ms");
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      for (const socket of accepted) socket.destroy();
      silent.close();
    }
  });
});

describe("createClient options", () => {
  it("a bad option throws InvalidInputError naming it, p-queue style; durations are ms", () => {
    const base = { url: "http://127.0.0.1:1", token: "t" };
    for (const [options, message] of [
      [{ pollMs: 0 }, "Expected `pollMs` to be a number above 0, got `0` (number)"],
      [{ retries: 1.5 }, "Expected `retries` to be a whole number from 0 up, got `1.5` (number)"],
      [{ maxRetryDelayMs: -1 }, "Expected `maxRetryDelayMs` to be a number from 0 and up"],
      [{ url: "ftp://x" }, "Expected `url` to be an http or https address, got `ftp://x` (string)"],
      [{ token: "" }, "Expected `token` to be the API token (a non-empty string)"],
    ] as const) {
      let thrown: unknown;
      try {
        createClient({ ...base, ...options });
      } catch (err) {
        thrown = err;
      }
      expect(isAirlockError(thrown, "invalid_input")).toBe(true);
      expect((thrown as Error).message).toContain(message);
    }
  });
});

describe("createClient getByKey", () => {
  // Against a recorded answer: GET /v1/requests?key=K answers { items: [request] } or no items.
  function answering(items: unknown[]) {
    const urls: string[] = [];
    const f = (async (input: RequestInfo | URL) => {
      urls.push(String(input));
      return new Response(JSON.stringify({ items }), {
        status: 200,
        headers: { "content-type": "application/json" },
      });
    }) as typeof fetch;
    return { fetch: f, urls };
  }

  it("asks GET /v1/requests?key= (and requester when given) and returns the item or undefined", async () => {
    const found = answering([{ id: "req_1", key: "k 1", status: "pending" }]);
    const c = createClient({ url: "http://127.0.0.1:1", token: "t", fetch: found.fetch });
    expect(await c.getByKey("k 1", { requester: "bot" })).toMatchObject({ id: "req_1" });
    const url = new URL(found.urls[0] ?? "");
    expect(url.pathname).toBe("/v1/requests");
    expect(url.searchParams.get("key")).toBe("k 1");
    expect(url.searchParams.get("requester")).toBe("bot");

    const none = answering([]);
    const d = createClient({ url: "http://127.0.0.1:1", token: "t", fetch: none.fetch });
    expect(await d.getByKey("missing")).toBeUndefined();
    expect(new URL(none.urls[0] ?? "").searchParams.has("requester")).toBe(false);
  });
});

/** A fetch that answers the first `failures` calls with a problem, then passes calls to the server. */
function flaky(failures: { status: number; code: string; retryAfter?: string }[]): {
  fetch: typeof fetch;
  calls: string[];
} {
  const calls: string[] = [];
  const queue = [...failures];
  const f = (async (input: RequestInfo | URL, init?: RequestInit) => {
    calls.push(`${init?.method ?? "GET"} ${new URL(String(input)).pathname}`);
    const next = queue.shift();
    if (!next) return fetch(input, init);
    return new Response(
      JSON.stringify({ status: next.status, code: next.code, detail: `injected ${next.code}` }),
      {
        status: next.status,
        headers: {
          "content-type": "application/problem+json",
          ...(next.retryAfter === undefined ? {} : { "retry-after": next.retryAfter }),
        },
      },
    );
  }) as typeof fetch;
  return { fetch: f, calls };
}

describe("createClient retries", () => {
  it("retries a create with a key through 503 store_unavailable, waiting as long as Retry-After says", async () => {
    const s = await start();
    const { fetch: f, calls } = flaky([
      { status: 503, code: "store_unavailable", retryAfter: "1" },
      { status: 429, code: "rate_limited" },
    ]);
    const agent = createClient({ url: s.url, token: s.tokens.agent, fetch: f });
    const started = Date.now();
    const r = await agent.request({ title: "Through a fault", key: "retry-key" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(r.status).toBe("pending");
    expect(calls).toEqual(["POST /v1/requests", "POST /v1/requests", "POST /v1/requests"]);
    expect((await s.airlock.list({})).items).toHaveLength(1);
  });

  it("retries get and list, but not a create without a key, a quota, or past its bound", async () => {
    const s = await start();
    const id = (await s.airlock.request({ title: "x", requester: "bot" })).id;

    const once = flaky([{ status: 503, code: "store_unavailable" }]);
    const a = createClient({ url: s.url, token: s.tokens.agent, fetch: once.fetch });
    expect((await a.get(id)).id).toBe(id);
    expect(once.calls).toHaveLength(2);
    const listed = flaky([{ status: 503, code: "unavailable" }]);
    const b = createClient({ url: s.url, token: s.tokens.agent, fetch: listed.fetch });
    expect((await b.list()).items).toHaveLength(1);
    expect(listed.calls).toHaveLength(2);

    // Without a key a repeat could create a second request: tried once.
    const noKey = flaky([{ status: 503, code: "store_unavailable" }]);
    const c = createClient({ url: s.url, token: s.tokens.agent, fetch: noKey.fetch });
    expect(await rejection(c.request({ title: "no key" }))).toMatchObject({
      code: "store_unavailable",
    });
    expect(noKey.calls).toHaveLength(1);

    // A quota frees only when requests are decided: not retried.
    const quota = flaky([{ status: 429, code: "quota_exceeded" }]);
    const d = createClient({ url: s.url, token: s.tokens.agent, fetch: quota.fetch });
    expect(await rejection(d.request({ title: "q", key: "q" }))).toMatchObject({
      problemCode: "quota_exceeded",
    });
    expect(quota.calls).toHaveLength(1);

    // Bounded: `retries` more attempts, then the error.
    const always = flaky(Array(10).fill({ status: 503, code: "store_unavailable" }));
    const e = createClient({ url: s.url, token: s.tokens.agent, fetch: always.fetch, retries: 2 });
    expect(await rejection(e.get(id))).toMatchObject({ code: "store_unavailable" });
    expect(always.calls).toHaveLength(3);

    // A Retry-After beyond maxRetryDelayMs is not waited for.
    const long = flaky([{ status: 503, code: "store_unavailable", retryAfter: "120" }]);
    const g = createClient({ url: s.url, token: s.tokens.agent, fetch: long.fetch });
    const started = Date.now();
    expect(await rejection(g.get(id))).toMatchObject({ code: "store_unavailable" });
    expect(long.calls).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
