// Token stores, token routes, /openapi.json, /metrics, /healthz, and secrets kept out of logs.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { register as globalRegistry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAirlock } from "../../src/engine/engine.js";
import { createServer } from "../../src/server/server.js";
import { createToken, hashToken, memoryTokenStore } from "../../src/server/tokens.js";
import { sqliteTokenStore } from "../../src/server/tokens-sqlite.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { eventually, tempDir } from "../helpers.js";
import { gate, startTestServer, type TestServer } from "./helpers.js";
import { tokenStoreContract } from "./token-contract.js";

const temps: (() => void)[] = [];
afterAll(() => {
  for (const c of temps) c();
});

tokenStoreContract("memory", () => memoryTokenStore());
tokenStoreContract("sqlite", () => {
  const t = tempDir();
  temps.push(t.cleanup);
  return sqliteTokenStore(join(t.dir, "tokens.db"));
});

describe("sqlite token store beside the request store", () => {
  it("shares the database file, keeps tokens across reopening, and stores no secret", async () => {
    const t = tempDir();
    temps.push(t.cleanup);
    const file = join(t.dir, "airlock.db");
    const airlock = await createAirlock({ store: sqliteStore(file) });
    const tokens = sqliteTokenStore(file);
    const { token, record } = await createToken(tokens, { name: "bot", roles: ["agent"] });
    await airlock.request({ title: "Beside tokens", requester: "bot" });
    await tokens.close();
    await airlock.close();

    const reopened = sqliteTokenStore(file);
    expect((await reopened.findByHash(hashToken(token)))?.id).toBe(record.id);
    await reopened.close();
    const again = await createAirlock({ store: sqliteStore(file) });
    expect((await again.list()).items).toHaveLength(1);
    await again.close();

    const bytes = readFileSync(file).toString("latin1") + readWal(file);
    expect(bytes).not.toContain(token);
    expect(bytes).not.toContain(token.slice(4, 30));
  });
});

function readWal(file: string): string {
  try {
    return readFileSync(`${file}-wal`).toString("latin1");
  } catch {
    return "";
  }
}

describe("HTTP meta routes", () => {
  let s: TestServer;
  const logLines: string[] = [];
  beforeAll(async () => {
    const logger = pino({ level: "debug" }, { write: (l: string) => void logLines.push(l) });
    s = await startTestServer({ logger });
  });
  afterAll(async () => {
    await s.close();
  });

  it("creates, lists and revokes tokens; the secret is in the creation answer only", async () => {
    const created = await s.call(s.tokens.admin, "POST", "/v1/tokens", {
      name: "carol",
      roles: ["reviewer"],
      groups: ["ops"],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "carol", roles: ["reviewer"], groups: ["ops"] });
    expect(created.body.token).toMatch(/^alk_/);
    const secret: string = created.body.token;

    const asCarol = await s.call(secret, "GET", "/v1/requests");
    expect(asCarol.status).toBe(200);

    const list = await s.call(s.tokens.admin, "GET", "/v1/tokens");
    expect(list.body.items.map((t: { name: string }) => t.name)).toContain("carol");
    expect(list.text).not.toContain(secret);
    expect(list.text).not.toContain(hashToken(secret));

    const bad = await s.call(s.tokens.admin, "POST", "/v1/tokens", { name: "x", roles: ["root"] });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe("roles.0");
    const missing = await s.call(s.tokens.admin, "DELETE", "/v1/tokens/tok_missing");
    expect(missing.status).toBe(404);

    expect((await s.call(s.tokens.admin, "DELETE", `/v1/tokens/${created.body.id}`)).status).toBe(
      200,
    );
    expect((await s.call(secret, "GET", "/v1/requests")).status).toBe(401);

    // No secret ever reaches the log.
    const log = logLines.join("");
    expect(log).toContain("API token created");
    for (const t of [secret, s.tokens.admin, s.tokens.agent]) expect(log).not.toContain(t);
  });

  it("describes every route in /openapi.json, with schemas generated from the zod schemas", async () => {
    const r = await s.call(s.tokens.agent, "GET", "/openapi.json");
    expect(r.status).toBe(200);
    const doc = r.body;
    expect(doc.openapi).toBe("3.1.0");
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(
      doc.paths as Record<string, Record<string, unknown>>,
    )) {
      for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    // The API's routes (the web inbox's pages are not part of the API document).
    const api = /^\/(v1\/|healthz$|metrics$|openapi\.json$)/;
    const served = s.server.app.routes
      .filter((route) => route.method !== "ALL" && api.test(route.path))
      .map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`);
    expect(served.length).toBeGreaterThan(10);
    for (const route of served) expect(documented, route).toContain(route);
    for (const route of documented) expect(served, route).toContain(route);

    const input = doc.components.schemas.RequestInput;
    expect(input.additionalProperties).toBe(false);
    expect(input.required).toEqual(["title"]);
    expect(Object.keys(input.properties)).not.toContain("status");
    expect(doc.components.schemas.ApprovalRequest.properties.status.enum).toContain("pending");
    expect(doc.paths["/healthz"].get.security).toEqual([]);
    // Statuses and parameters of the limits, quotas and storage faults are documented.
    const names = doc.paths["/v1/requests"].get.parameters.map((p: { name: string }) => p.name);
    expect(names).toEqual(expect.arrayContaining(["limit", "order", "view"]));
    expect(Object.keys(doc.paths["/v1/requests"].post.responses)).toEqual(
      expect.arrayContaining(["413", "429", "503"]),
    );
    expect(Object.keys(doc.paths["/v1/requests/{id}/cancel"].post.responses)).toContain("422");
    expect(Object.keys(doc.paths["/metrics"].get.responses)).toContain("403");
    expect(doc.components.schemas.Health.properties.status.enum).toEqual([
      "ok",
      "degraded",
      "starting",
      "shutting_down",
    ]);
    expect(JSON.stringify(doc)).not.toContain("__shared");
    // Every $ref points at a component that exists.
    for (const m of JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g)) {
      expect(doc.components.schemas[m[1] as string], m[1]).toBeDefined();
    }
  });

  it("serves Prometheus metrics from its own registry", async () => {
    const created = await s.call(
      s.tokens.agent,
      "POST",
      "/v1/requests",
      gate("Metered", { approvers: ["ops"] }),
    );
    await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Still pending"));
    await s.call(s.tokens.alice, "POST", `/v1/requests/${created.body.id}/decisions`, {
      outcome: "approved",
    });
    // The counters follow the audit log: give the tail a moment.
    await eventually(
      async () =>
        (await s.call(s.tokens.admin, "GET", "/metrics")).text.includes(
          'airlock_decisions_total{outcome="approved"',
        ),
      { timeoutMs: 1_000 },
    ).catch(() => {}); // the expectations below say what is missing
    const r = await s.call(s.tokens.admin, "GET", "/metrics");
    expect(r.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(r.text).toMatch(/airlock_decisions_total\{outcome="approved",method="approve_all"\} 1/);
    expect(r.text).toMatch(/airlock_pending_requests [1-9]/);
    expect(r.text).toMatch(/airlock_review_duration_seconds_count\{outcome="approved"\} 1/);
    expect(r.text).toMatch(/airlock_requests_created_total [2-9]/);
    expect(r.text).toMatch(
      /airlock_http_requests_total\{method="POST",route="\/v1\/requests\/:id\/decisions",status="200"\} 1/,
    );
    expect(r.text).toMatch(/process_resident_memory_bytes \d+/);
    // Route patterns, never raw ids, as labels.
    expect(r.text).not.toContain(created.body.id);
    expect(await globalRegistry.metrics()).not.toContain("airlock_");
  });

  it("answers /healthz without a token", async () => {
    const r = await s.call(undefined, "GET", "/healthz");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: "ok", ok: true, shuttingDown: false, storage: { ok: true } });
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect((await s.call(undefined, "GET", "/metrics")).status).toBe(401);
  });

  it("serves /metrics to admins and to the metrics token only (global counts are not for agents or reviewers)", async () => {
    for (const token of [s.tokens.agent, s.tokens.alice, s.tokens.dual]) {
      const r = await s.call(token, "GET", "/metrics");
      expect(r.status).toBe(403);
      expect(r.text).not.toContain("airlock_pending_requests");
    }
    expect((await s.call(s.tokens.admin, "GET", "/metrics")).status).toBe(200);

    const scraped = await startTestServer({ metricsToken: "scrape-secret-0123456789" });
    try {
      const r = await scraped.call("scrape-secret-0123456789", "GET", "/metrics");
      expect(r.status).toBe(200);
      expect(r.text).toContain("airlock_pending_requests");
      // The metrics token opens nothing else, and a wrong one is refused.
      expect((await scraped.call("scrape-secret-0123456789", "GET", "/v1/requests")).status).toBe(
        401,
      );
      expect((await scraped.call("scrape-secret-wrong-000000", "GET", "/metrics")).status).toBe(
        401,
      );
      expect((await scraped.call(scraped.tokens.agent, "GET", "/metrics")).status).toBe(403);
    } finally {
      await scraped.close();
    }
    expect(() =>
      createServer({ airlock: s.airlock, auth: { tokens: s.tokenStore }, metricsToken: "short" }),
    ).toThrow(/metricsToken/);
  });
});
