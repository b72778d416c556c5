// Every status a route answers is in the OpenAPI document: each documented route is sent the inputs
// that make it fail (no token, the wrong role, a missing id, a bad query, a body that is not JSON,
// malformed, too large or breaking a rule, a second decision, a rate limit, a shutdown), and every
// status seen must be documented for that route.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_ROUTES, openApiDocument, problemStatuses } from "../../src/server/openapi.js";
import type { RouteSpec } from "../../src/server/route.js";
import { gate, startTestServer, type TestServer } from "./helpers.js";

const LIMIT = 4096;

describe("route statuses", () => {
  let s: TestServer;
  const seen = new Map<string, Set<number>>();
  const key = (spec: RouteSpec) => `${spec.method.toUpperCase()} ${spec.path}`;
  const record = (spec: RouteSpec, status: number) => {
    const set = seen.get(key(spec)) ?? new Set<number>();
    set.add(status);
    seen.set(key(spec), set);
  };

  beforeAll(async () => {
    s = await startTestServer({ bodyLimitBytes: LIMIT });
  });
  afterAll(async () => {
    await s?.close();
  });

  /** Sends one call for `spec` with `id` in its path and records the status. */
  async function probe(
    spec: RouteSpec,
    token: string | undefined,
    options: { id?: string; query?: string; body?: string; type?: string } = {},
  ): Promise<number> {
    const path = spec.path.replace("{id}", encodeURIComponent(options.id ?? "missing"));
    const headers: Record<string, string> = {};
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (options.body !== undefined) headers["content-type"] = options.type ?? "application/json";
    // A long-poll returns at once; an event stream is read no further than its status.
    let query = options.query ?? "";
    if (spec.path.endsWith("/wait") && !query.includes("timeout=")) {
      query += `${query ? "&" : "?"}timeout=0`;
    }
    const res = await fetch(`${s.url}${path}${query}`, {
      method: spec.method.toUpperCase(),
      headers,
      ...(options.body === undefined ? {} : { body: options.body }),
    });
    await res.body?.cancel();
    record(spec, res.status);
    return res.status;
  }

  it("answers only documented statuses, for every documented route", async () => {
    const { agent, alice, admin } = s.tokens;
    for (const spec of API_ROUTES) {
      // A fresh pending request per route, created by the agent, decidable by alice.
      const created = await s.call(agent, "POST", "/v1/requests", gate(`for ${spec.path}`));
      const id: string = created.body.id;
      await probe(spec, undefined, { id });
      await probe(spec, "alk_not-a-token", { id });
      for (const token of [agent, alice, admin]) await probe(spec, token, { id });
      await probe(spec, admin, { id: "missing" });
      if (spec.query) {
        for (const field of Object.keys(spec.query.shape)) {
          await probe(spec, admin, { id, query: `?${field}=%00not-valid%00&limit=-1` });
        }
        await probe(spec, admin, { id, query: "?requestId=missing" });
      }
      if (spec.body) {
        for (const token of [agent, alice, admin]) {
          await probe(spec, token, { id, body: "plain text", type: "text/plain" });
          await probe(spec, token, { id, body: "{ not json" });
          await probe(spec, token, { id, body: "[1]" });
          await probe(spec, token, { id, body: JSON.stringify({ unknownField: 1 }) });
          await probe(spec, token, { id, body: JSON.stringify({ title: "x".repeat(LIMIT * 2) }) });
        }
      }
    }
    // Rules of a visible request: decided twice, a reviewer cancelling without a reason, a claim
    // of an undecided request, a selection of items that do not exist.
    const byPath = (method: string, path: string) =>
      API_ROUTES.find((r) => r.method === method && r.path === path) as RouteSpec;
    const decide = byPath("post", "/v1/requests/{id}/decisions");
    const cancel = byPath("post", "/v1/requests/{id}/cancel");
    const execution = byPath("post", "/v1/requests/{id}/execution");
    const r = (await s.call(agent, "POST", "/v1/requests", gate("rules"))).body.id as string;
    await probe(decide, admin, { id: "missing", body: JSON.stringify({ outcome: "approved" }) });
    await probe(cancel, admin, { id: "missing", body: "{}" });
    await probe(execution, agent, { id: r });
    await probe(cancel, alice, { id: r, body: "{}" });
    await probe(decide, alice, {
      id: r,
      body: JSON.stringify({ outcome: "approved", selected: ["nope"] }),
    });
    await probe(decide, alice, { id: r, body: JSON.stringify({ outcome: "approved" }) });
    await probe(decide, alice, { id: r, body: JSON.stringify({ outcome: "rejected" }) });
    await probe(cancel, agent, { id: r, body: "{}" });
    await probe(execution, agent, { id: r });
    await probe(execution, agent, { id: r });

    const undocumented: string[] = [];
    for (const spec of API_ROUTES) {
      const documented = new Set([
        ...Object.keys(spec.responses).map(Number),
        ...problemStatuses(spec),
      ]);
      for (const status of seen.get(key(spec)) ?? []) {
        if (!documented.has(status)) undocumented.push(`${key(spec)} answered ${status}`);
      }
    }
    expect(undocumented).toEqual([]);
    // The probes reached what they aim at (so the check above is not empty).
    expect(seen.get("POST /v1/requests/{id}/cancel")).toContain(415);
    expect(seen.get("POST /v1/requests/{id}/cancel")).toContain(413);
    for (const status of [400, 401, 403, 404, 409, 413, 415, 422]) {
      expect(seen.get("POST /v1/requests/{id}/decisions")?.has(status), String(status)).toBe(true);
    }
  });

  it("documents the statuses in /openapi.json as the routes declare them", async () => {
    const doc = openApiDocument() as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    for (const spec of API_ROUTES) {
      const op = doc.paths[spec.path]?.[spec.method];
      expect(op, key(spec)).toBeDefined();
      const statuses = Object.keys(op?.responses ?? {})
        .map(Number)
        .sort((a, b) => a - b);
      const expected = [...Object.keys(spec.responses).map(Number), ...problemStatuses(spec)];
      expect(statuses).toEqual([...new Set(expected)].sort((a, b) => a - b));
    }
    // And the server serves exactly the document's routes: nothing documented answers "no route".
    const { admin } = s.tokens;
    for (const spec of API_ROUTES) {
      if (spec.path === "/v1/events") continue; // a stream: covered by the stream tests
      const r = await s.call(admin, spec.method.toUpperCase(), spec.path.replace("{id}", "x"));
      expect(r.body?.code, key(spec)).not.toBe("route_not_found");
    }
  });

  it("answers 429 and 503 on every route only where documented", async () => {
    const limited = await startTestServer({ rateLimit: { max: 1, windowMs: 60_000 } });
    try {
      for (const spec of API_ROUTES) {
        if (spec.public) continue;
        const path = spec.path.replace("{id}", "missing");
        // One token for all: its only request is spent by the first call of the first route.
        const token = limited.tokens.admin;
        await limited.call(token, spec.method.toUpperCase(), path);
        const r = await limited.call(token, spec.method.toUpperCase(), path);
        expect(r.status, key(spec)).toBe(429);
        expect(problemStatuses(spec)).toContain(429);
      }
      const closing = limited.server.close();
      for (const spec of API_ROUTES) {
        const path = spec.path.replace("{id}", "missing");
        const r = await limited.server.app.request(path, { method: spec.method.toUpperCase() });
        expect(r.status, key(spec)).toBe(503);
        const documented = [...Object.keys(spec.responses).map(Number), ...problemStatuses(spec)];
        expect(documented, key(spec)).toContain(503);
      }
      await closing;
    } finally {
      await limited.close();
    }
  });
});
