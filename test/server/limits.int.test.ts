// Bounds on what one token can make the server hold or do: per-field size limits, pending quotas
// per requester, bounded list pages, JSON nesting depth, and the configurable per-token rate.
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../src/core/limits.js";
import { DEFAULT_LIMITS } from "../../src/server/limits.js";
import { parseRateLimit } from "../../src/server/rate-limit.js";
import { createServer, type ServerOptions } from "../../src/server/server.js";
import { gate, startTestServer, type TestServer } from "./helpers.js";

const extra: TestServer[] = [];
async function start(options: Parameters<typeof startTestServer>[0]) {
  const s = await startTestServer(options);
  extra.push(s);
  return s;
}
afterEach(async () => {
  for (const s of extra.splice(0)) await s.close();
});

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

describe("per-field size limits", () => {
  it("documents its defaults", () => {
    expect(DEFAULT_LIMITS).toMatchObject({
      argsBytes: 256 * 1024,
      previewBytes: 256 * 1024,
      summaryBytes: 64 * 1024,
    });
  });

  it("answers 413 naming the field when args, preview or summary is over its limit", async () => {
    const t = await start({ limits: { argsBytes: 1000, previewBytes: 2000, summaryBytes: 500 } });
    const cases: [string, Record<string, unknown>][] = [
      ["args", { args: { blob: "x".repeat(1000) } }],
      ["preview", { preview: "p".repeat(2001) }],
      // Counted in bytes, not characters: 200 three-byte characters are 600 bytes.
      ["summary", { summary: "€".repeat(200) }],
    ];
    for (const [field, body] of cases) {
      const r = await t.call(t.tokens.agent, "POST", "/v1/requests", gate("Big", body));
      expect(r.status, field).toBe(413);
      expect(r.headers.get("content-type")).toBe("application/problem+json");
      expect(r.body).toMatchObject({ code: "payload_too_large", field });
      expect(r.body.detail).toContain(`limits.${field}Bytes`);
    }
    const fits = await t.call(
      t.tokens.agent,
      "POST",
      "/v1/requests",
      gate("Fits", { args: { blob: "x".repeat(900) }, preview: "p".repeat(2000) }),
    );
    expect(fits.status).toBe(201);

    // A decision's edited args have the args limit too.
    const id = (
      await t.call(
        t.tokens.agent,
        "POST",
        "/v1/requests",
        gate("Edit me", { approvers: ["ops"], allowed: ["approve", "edit", "reject"] }),
      )
    ).body.id;
    const edited = await t.call(t.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      editedArgs: { blob: "y".repeat(2000) },
    });
    expect(edited.status).toBe(413);
    expect(edited.body.field).toBe("editedArgs");
  });

  it("refuses bad limits at start-up, naming them", () => {
    const make = (options: Partial<ServerOptions>) => () =>
      createServer({ airlock: s.airlock, auth: { tokens: s.tokenStore }, ...options });
    expect(make({ limits: { argsBytes: 0 } })).toThrow(/limits\.argsBytes/);
    expect(make({ limits: { pendingPerRequester: 1.5 } })).toThrow(/limits\.pendingPerRequester/);
    expect(make({ rateLimit: { max: 0, windowMs: 1000 } })).toThrow(/rateLimit/);
  });
});

describe("pending quotas per requester", () => {
  it("answers 429 quota_exceeded past the pending count, saying how many are pending; others are unaffected", async () => {
    const t = await start({ limits: { pendingPerRequester: 3 } });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await t.call(t.tokens.agent, "POST", "/v1/requests", gate(`Q${i}`));
      expect(r.status).toBe(201);
      ids.push(r.body.id);
    }
    const over = await t.call(t.tokens.agent, "POST", "/v1/requests", gate("One too many"));
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ code: "quota_exceeded", pending: 3 });
    expect(over.body.detail).toMatch(/bot has 3 pending requests/);
    // Another agent has its own quota.
    expect((await t.call(t.tokens.agent2, "POST", "/v1/requests", gate("Mine"))).status).toBe(201);
    // Deciding one frees a place.
    await t.call(t.tokens.agent, "POST", `/v1/requests/${ids[0]}/cancel`);
    expect((await t.call(t.tokens.agent, "POST", "/v1/requests", gate("Now fits"))).status).toBe(
      201,
    );
  });

  it("answers 429 quota_exceeded past the pending bytes", async () => {
    const t = await start({ limits: { pendingBytesPerRequester: 20_000 } });
    const body = gate("Heavy", { args: { blob: "z".repeat(8000) } });
    expect((await t.call(t.tokens.agent, "POST", "/v1/requests", body)).status).toBe(201);
    expect((await t.call(t.tokens.agent, "POST", "/v1/requests", body)).status).toBe(201);
    const over = await t.call(t.tokens.agent, "POST", "/v1/requests", body);
    expect(over.status).toBe(429);
    expect(over.body.code).toBe("quota_exceeded");
    expect(over.body.pending).toBe(2);
    expect(over.body.pendingBytes).toBeGreaterThan(16_000);
    expect(over.body.detail).toContain("limits.pendingBytesPerRequester");
  });
});

describe("GET /v1/requests pages", () => {
  it("holds at most 100 requests, whatever limit is asked", async () => {
    const t = await start({});
    for (let i = 0; i < 105; i++) {
      await t.airlock.request({ title: `Row ${i}`, requester: "bot" });
    }
    const page = await t.call(t.tokens.agent, "GET", "/v1/requests?limit=5000");
    expect(page.status).toBe(200);
    expect(page.body.items).toHaveLength(100);
    expect(page.body.nextCursor).toBeDefined();
    const rest = await t.call(
      t.tokens.agent,
      "GET",
      `/v1/requests?limit=5000&cursor=${page.body.nextCursor}`,
    );
    expect(rest.body.items).toHaveLength(5);
  });

  it("lists summaries without args or preview with view=summary, and orders by deadline", async () => {
    const soon = await s.call(
      s.tokens.dual,
      "POST",
      "/v1/requests",
      gate("Soon", {
        args: { secret: "hidden-arg" },
        preview: "hidden-preview",
        timeoutMs: 60_000,
      }),
    );
    const later = await s.call(
      s.tokens.dual,
      "POST",
      "/v1/requests",
      gate("Later", { timeoutMs: 3_600_000 }),
    );
    const r = await s.call(
      s.tokens.dual,
      "GET",
      "/v1/requests?requester=dual&view=summary&order=deadline",
    );
    expect(r.status).toBe(200);
    expect(r.body.items.map((x: { id: string }) => x.id)).toEqual([soon.body.id, later.body.id]);
    expect(r.body.items[0]).toMatchObject({ id: soon.body.id, title: "Soon", status: "pending" });
    expect(r.text).not.toContain("hidden-arg");
    expect(r.text).not.toContain("hidden-preview");
    expect(r.headers.get("cache-control")).toBe("no-store");
    const bad = await s.call(s.tokens.dual, "GET", "/v1/requests?view=everything");
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe("view");
  });
});

describe("JSON nesting depth", () => {
  it(`answers 400 past ${MAX_JSON_DEPTH} levels inside a field, without a 500 or a stack trace in the log`, async () => {
    const lines: string[] = [];
    const logger = pino({ level: "debug" }, { write: (l: string) => void lines.push(l) });
    const t = await start({ logger, bodyLimitBytes: 4 * 1024 * 1024 });
    const deep = await t.call(
      t.tokens.agent,
      "POST",
      "/v1/requests",
      gate("Deep", { args: nested(1800) }),
    );
    expect(deep.status).toBe(400);
    expect(deep.body.code).toBe("invalid_input");
    expect(deep.body.detail).toContain(String(MAX_JSON_DEPTH));

    const id = (await t.call(t.tokens.agent, "POST", "/v1/requests", gate("Shallow"))).body.id;
    expect(id).toBeDefined();
    const deepDecision = await t.call(t.tokens.admin, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      editedArgs: nested(500),
    });
    expect(deepDecision.status).toBe(400);

    // Exactly at the limit is accepted.
    const atLimit = await t.call(
      t.tokens.agent,
      "POST",
      "/v1/requests",
      gate("At the limit", { args: nested(MAX_JSON_DEPTH) as Record<string, unknown> }),
    );
    expect(atLimit.status).toBe(201);
    const log = lines.join("");
    expect(log).not.toMatch(/RangeError|Maximum call stack/);
    expect(log).not.toContain('"level":50');
  });
});

describe("per-token rate limit", () => {
  it("is configurable, and parses from a command-line value", async () => {
    expect(parseRateLimit("600/60s")).toEqual({ max: 600, windowMs: 60_000 });
    expect(parseRateLimit("600/min")).toEqual({ max: 600, windowMs: 60_000 });
    expect(parseRateLimit("10/s")).toEqual({ max: 10, windowMs: 1000 });
    expect(parseRateLimit("1000/5m")).toEqual({ max: 1000, windowMs: 300_000 });
    expect(parseRateLimit("off")).toBe(false);
    expect(() => parseRateLimit("fast")).toThrow(/like `600\/60s`/);
    expect(() => parseRateLimit("0/s")).toThrow(/rateLimit\.max/);

    const t = await start({ rateLimit: parseRateLimit("2/min") });
    expect((await t.call(t.tokens.agent, "GET", "/v1/requests")).status).toBe(200);
    expect((await t.call(t.tokens.agent, "GET", "/v1/requests")).status).toBe(200);
    const over = await t.call(t.tokens.agent, "GET", "/v1/requests");
    expect(over.status).toBe(429);
    expect(over.headers.get("ratelimit-limit")).toBe("2");
  });
});
