// The embed routes answer only the statuses their definitions document (the same walk as
// test/server/routes.test.ts, with embed tokens added), and the server serves exactly them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { problemStatuses } from "../../src/server/openapi.js";
import type { RouteSpec } from "../../src/server/route.js";
import { EMBED_ROUTES } from "../../src/server/routes/embed.js";
import { gate, startTestServer, type TestServer } from "../server/helpers.js";

const LIMIT = 4096;
const ROUTES = EMBED_ROUTES as RouteSpec[];

describe("embed route statuses", () => {
  let s: TestServer;
  const seen = new Map<string, Set<number>>();
  const key = (spec: RouteSpec) => `${spec.method.toUpperCase()} ${spec.path}`;

  beforeAll(async () => {
    s = await startTestServer({ bodyLimitBytes: LIMIT });
  });
  afterAll(async () => {
    await s?.close();
  });

  async function probe(
    spec: RouteSpec,
    token: string | undefined,
    options: { id?: string; query?: string; body?: string; type?: string } = {},
  ): Promise<number> {
    const path = spec.path.replace("{id}", encodeURIComponent(options.id ?? "missing"));
    const headers: Record<string, string> = {};
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (options.body !== undefined) headers["content-type"] = options.type ?? "application/json";
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
    const set = seen.get(key(spec)) ?? new Set<number>();
    set.add(res.status);
    seen.set(key(spec), set);
    return res.status;
  }

  it("answers only documented statuses", async () => {
    const { agent, alice, admin, app } = s.tokens;
    const open = async () =>
      (await s.call(agent, "POST", "/v1/requests", gate("walk", { approvers: ["alice"] }))).body
        .id as string;
    const mint = async (id: string) =>
      (await s.call(app, "POST", `/v1/requests/${id}/embed-token`, { reviewer: "alice" })).body
        .token as string;
    for (const spec of ROUTES) {
      const id = await open();
      const other = await open();
      const embed = await mint(id);
      const tokens = [agent, alice, admin, app, embed];
      await probe(spec, undefined, { id });
      await probe(spec, "alk_not-a-token", { id });
      await probe(spec, "ale_not.a-token", { id });
      for (const token of tokens) await probe(spec, token, { id });
      await probe(spec, embed, { id: other });
      await probe(spec, admin, { id: "missing" });
      if (spec.query) {
        for (const field of Object.keys(spec.query.shape)) {
          await probe(spec, embed, { id, query: `?${field}=%00not-valid%00` });
        }
      }
      if (spec.body) {
        for (const token of tokens) {
          await probe(spec, token, { id, body: "plain text", type: "text/plain" });
          await probe(spec, token, { id, body: "{ not json" });
          await probe(spec, token, { id, body: "[1]" });
          await probe(spec, token, { id, body: JSON.stringify({ unknownField: 1 }) });
          await probe(spec, token, {
            id,
            body: JSON.stringify({ comment: "x".repeat(LIMIT * 2) }),
          });
        }
      }
    }
    const [mintRoute, , , decide] = ROUTES as [RouteSpec, RouteSpec, RouteSpec, RouteSpec];
    const r = await open();
    const token = await mint(r);
    const body = (b: unknown) => JSON.stringify(b);
    await probe(mintRoute, admin, { id: "missing", body: body({ reviewer: "alice" }) });
    await probe(mintRoute, app, { id: r, body: body({ reviewer: "bot" }) });
    await probe(mintRoute, app, { id: r, body: body({ reviewer: "alice" }) });
    await probe(decide, token, { id: r, body: body({ outcome: "approved", selected: ["nope"] }) });
    await probe(decide, token, { id: r, body: body({ outcome: "revise" }) });
    await probe(decide, token, { id: r, body: body({ outcome: "approved" }) });
    await probe(decide, token, { id: r, body: body({ outcome: "rejected" }) });

    const undocumented: string[] = [];
    for (const spec of ROUTES) {
      const documented = new Set([
        ...Object.keys(spec.responses).map(Number),
        ...problemStatuses(spec),
      ]);
      for (const status of seen.get(key(spec)) ?? []) {
        if (!documented.has(status)) undocumented.push(`${key(spec)} answered ${status}`);
      }
    }
    expect(undocumented).toEqual([]);
    // The probes reached what they aim at.
    expect(seen.get("POST /v1/requests/{id}/embed-token")).toEqual(
      new Set([201, 400, 401, 403, 404, 413, 415]),
    );
    for (const status of [200, 400, 401, 403, 409, 413, 415]) {
      expect(seen.get("POST /v1/embed/requests/{id}/decisions")?.has(status), String(status)).toBe(
        true,
      );
    }
  });

  it("serves exactly these routes under /v1/embed, and 429 and 503 where documented", async () => {
    const served = s.server.app.routes
      .filter((r) => r.method !== "ALL" && /^\/v1\/(embed\/|requests\/:id\/embed)/.test(r.path))
      .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`);
    expect(new Set(served)).toEqual(new Set(ROUTES.map(key)));

    const limited = await startTestServer({ rateLimit: { max: 1, windowMs: 60_000 } });
    try {
      for (const spec of ROUTES) {
        const path = spec.path.replace("{id}", "missing");
        const token = limited.tokens.admin;
        await limited.call(token, spec.method.toUpperCase(), path);
        expect((await limited.call(token, spec.method.toUpperCase(), path)).status).toBe(429);
        expect(problemStatuses(spec)).toContain(429);
      }
      const closing = limited.server.close();
      for (const spec of ROUTES) {
        const path = spec.path.replace("{id}", "missing");
        const r = await limited.server.app.request(path, { method: spec.method.toUpperCase() });
        expect(r.status, key(spec)).toBe(503);
        expect(problemStatuses(spec)).toContain(503);
      }
      await closing;
    } finally {
      await limited.close();
    }
  });
});
