// Issue 13 on the server: one decision reads the request few times (and metrics never read it back),
// lookup by idempotency key, security headers on every answer, the inbox's origin check, options in
// milliseconds, prom-client's default metrics, rate limits shared through PostgreSQL.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/core/store.js";
import { createServer } from "../../src/server/server.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { eventually, tempDir } from "../helpers.js";
import { gate, startTestServer, type TestServer } from "./helpers.js";

/** A store that counts the reads of one request (by id or by key). */
function countingStore(inner: Store) {
  const counts = { getRequest: 0, getRequestByKey: 0 };
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop === "getRequest" || prop === "getRequestByKey") {
        return (...args: unknown[]) => {
          counts[prop] += 1;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store, counts };
}

async function metricsText(s: TestServer, until: string): Promise<string> {
  let text = "";
  await eventually(
    async () => {
      text = (await s.call(s.tokens.admin, "GET", "/metrics")).text;
      return text.includes(until);
    },
    { timeoutMs: 2_000 },
  ).catch(() => {}); // the caller's expectations say what is missing
  return text;
}

let open: TestServer | undefined;
let cleanup: (() => void) | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
  cleanup?.();
  cleanup = undefined;
});

describe("one decision, few hops", () => {
  it("reads no request for an API decision on a gate this engine just wrote (its compare-and-set starts from the copy it remembers), one otherwise, and metrics read none", async () => {
    const t = tempDir("airlock-hops-");
    cleanup = t.cleanup;
    const file = join(t.dir, "a.db");
    const { store, counts } = countingStore(sqliteStore(file));
    const s = await startTestServer({ store });
    open = s;
    const created = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Count reads"));
    await metricsText(s, "airlock_requests_created_total 1");
    counts.getRequest = 0;
    const decided = await s.call(
      s.tokens.alice,
      "POST",
      `/v1/requests/${created.body.id}/decisions`,
      { outcome: "approved" },
    );
    expect(decided.status).toBe(200);
    // The decision reaches the metrics (and its review is timed) without another read.
    const text = await metricsText(
      s,
      'airlock_review_duration_seconds_count{outcome="approved"} 1',
    );
    expect(text).toContain('airlock_review_duration_seconds_count{outcome="approved"} 1');
    expect(counts.getRequest).toBe(0);
    // An admin is credited with the approvers inside the compare-and-set (core/authority.ts), so
    // its decision reads nothing more either.
    const other = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("By an admin"));
    counts.getRequest = 0;
    const byAdmin = await s.call(
      s.tokens.admin,
      "POST",
      `/v1/requests/${other.body.id}/decisions`,
      {
        outcome: "rejected",
      },
    );
    expect(byAdmin.status).toBe(200);
    expect(counts.getRequest).toBe(0);
    // A second server on the same database never saw the gate: it reads it once, for the compare-and-set.
    const third = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Elsewhere"));
    const second = countingStore(sqliteStore(file));
    const s2 = await startTestServer({ store: second.store });
    try {
      const elsewhere = await s2.call(
        s2.tokens.alice,
        "POST",
        `/v1/requests/${third.body.id}/decisions`,
        { outcome: "approved" },
      );
      expect(elsewhere.status).toBe(200);
      expect(elsewhere.body.status).toBe("approved");
      expect(second.counts.getRequest).toBe(1);
    } finally {
      await s2.close();
    }
  });
});

async function signedIn(s: TestServer, token: string): Promise<{ cookie: string; csrf: string }> {
  const form = await fetch(`${s.url}/login`);
  const loginCookie = (form.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const loginCsrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? "";
  const res = await fetch(`${s.url}/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: loginCookie },
    body: new URLSearchParams({ token, next: "/", _csrf: loginCsrf }).toString(),
    redirect: "manual",
  });
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const page = await (await fetch(`${s.url}/`, { headers: { cookie } })).text();
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? "" };
}

describe("one inbox decision, few hops", () => {
  it("reads the request once per decision in the inbox (the form needs it; the compare-and-set starts from the engine's copy)", async () => {
    const t = tempDir("airlock-hops-");
    cleanup = t.cleanup;
    const { store, counts } = countingStore(sqliteStore(join(t.dir, "a.db")));
    const s = await startTestServer({ store });
    open = s;
    const created = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Count reads"));
    const { cookie, csrf } = await signedIn(s, s.tokens.alice);
    await metricsText(s, "airlock_requests_created_total 1");
    counts.getRequest = 0;
    const res = await fetch(`${s.url}/requests/${created.body.id}/decide`, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf, action: "approve" }).toString(),
      redirect: "manual",
    });
    expect(res.status).toBe(303);
    await metricsText(s, 'airlock_review_duration_seconds_count{outcome="approved"} 1');
    expect(counts.getRequest).toBe(1);
  });
});

describe("GET /v1/requests?key=", () => {
  it("finds the caller's request by its idempotency key, and nobody else's", async () => {
    const s = await startTestServer();
    open = s;
    const created = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Keyed"), {
      "idempotency-key": "job-42",
    });
    expect(created.status).toBe(201);
    const mine = await s.call(s.tokens.agent, "GET", "/v1/requests?key=job-42");
    expect(mine.status).toBe(200);
    expect(mine.body.items.map((r: { id: string }) => r.id)).toEqual([created.body.id]);
    // Keys are per requester: another agent's same key finds nothing (and cannot name bot's).
    expect((await s.call(s.tokens.agent2, "GET", "/v1/requests?key=job-42")).body).toEqual({
      items: [],
    });
    expect(
      (await s.call(s.tokens.agent2, "GET", "/v1/requests?key=job-42&requester=bot")).body,
    ).toEqual({ items: [] });
    // An admin (or a reviewer who may see it) names the requester.
    const admin = await s.call(s.tokens.admin, "GET", "/v1/requests?key=job-42&requester=bot");
    expect(admin.body.items).toHaveLength(1);
    const alice = await s.call(s.tokens.alice, "GET", "/v1/requests?key=job-42&requester=bot");
    expect(alice.body.items).toHaveLength(1);
    expect((await s.call(s.tokens.agent, "GET", "/v1/requests?key=other")).body).toEqual({
      items: [],
    });
    const bad = await s.call(s.tokens.agent, "GET", `/v1/requests?key=${"k".repeat(201)}`);
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe("key");
  });
});

describe("security headers and origin checks", () => {
  it("sends nosniff and frame rules on API answers, problems and the inbox alike", async () => {
    const s = await startTestServer();
    open = s;
    for (const r of [
      await s.call(s.tokens.agent, "GET", "/v1/requests"),
      await s.call(undefined, "GET", "/v1/requests"),
      await s.call(undefined, "GET", "/healthz"),
      await s.call(undefined, "GET", "/no-such-route"),
      await s.call(undefined, "GET", "/login"),
    ]) {
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
      expect(r.headers.get("x-frame-options")).toBe("DENY");
    }
    // The inbox keeps its own stricter policies.
    const login = await s.call(undefined, "GET", "/login");
    expect(login.headers.get("referrer-policy")).toBe("same-origin");
    expect(login.headers.get("content-security-policy")).toBeTruthy();
  });

  it("refuses an inbox form posted from another site, before reading it", async () => {
    const s = await startTestServer();
    open = s;
    const form = await fetch(`${s.url}/login`);
    const html = await form.text();
    const cookie = (form.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
    const post = (headers: Record<string, string>) =>
      fetch(`${s.url}/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie, ...headers },
        body: new URLSearchParams({ token: s.tokens.alice, next: "/", _csrf: csrf }).toString(),
        redirect: "manual",
      });
    const foreign = await post({ origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(await foreign.text()).toContain("CSRF");
    const crossSite = await post({ "sec-fetch-site": "cross-site" });
    expect(crossSite.status).toBe(403);
    // The same site, or a client that sends neither header (curl), goes on to the token check.
    expect((await post({ origin: new URL(s.url).origin })).status).toBe(303);
    expect((await post({})).status).toBe(303);
  });
});

describe("options and metrics", () => {
  it("takes the long-poll cap in milliseconds, and refuses a bad one by name", async () => {
    const s = await startTestServer({ maxWaitMs: 200 });
    open = s;
    const bad = { airlock: s.airlock, auth: { tokens: s.tokenStore }, maxWaitMs: 0 };
    expect(() => createServer(bad)).toThrow(/maxWaitMs/);
    const created = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Wait"));
    const started = Date.now();
    const r = await s.call(
      s.tokens.agent,
      "GET",
      `/v1/requests/${created.body.id}/wait?timeout=30`,
    );
    expect(r.body.status).toBe("pending");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("exposes prom-client's default process metrics", async () => {
    const s = await startTestServer();
    open = s;
    const text = (await s.call(s.tokens.admin, "GET", "/metrics")).text;
    expect(text).toMatch(/process_cpu_user_seconds_total \d/);
    expect(text).toMatch(/nodejs_eventloop_lag_seconds \d/);
    expect(text).toMatch(/process_resident_memory_bytes \d+/);
  });
});
