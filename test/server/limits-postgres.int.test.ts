// The server's limits, quotas, summary lists and shared event tail on the PostgreSQL store (skipped,
// saying why, when no PostgreSQL is reachable; see test/postgres/pg-env.ts).
import pg from "pg";
import { afterAll, afterEach, expect, it } from "vitest";
import { createAirlock } from "../../src/engine/engine.js";
import { createRateLimiter, type RateLimiter } from "../../src/server/rate-limit.js";
import { type AirlockServer, createServer } from "../../src/server/server.js";
import { createToken, memoryTokenStore } from "../../src/server/tokens.js";
import { type PostgresStore, postgresStore } from "../../src/store/postgres.js";
import { describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";
import { gate, openEvents, startTestServer, type TestServer, take } from "./helpers.js";

await describePg("server limits on PostgreSQL", ({ url }) => {
  const schemas: string[] = [];
  const servers: TestServer[] = [];
  async function start(options: Parameters<typeof startTestServer>[0] = {}) {
    const schema = freshSchema("airlock_limits");
    schemas.push(schema);
    const s = await startTestServer({ ...options, store: postgresStore(url, { schema }) });
    servers.push(s);
    return s;
  }
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(url, schema);
  });

  it("answers 429 quota_exceeded from the store's pending usage, and 413 per field", async () => {
    const s = await start({
      limits: { pendingPerRequester: 2, argsBytes: 4096, pendingBytesPerRequester: 1_000_000 },
    });
    const first = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("One"));
    expect(first.status).toBe(201);
    expect((await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Two"))).status).toBe(201);
    const over = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Three"));
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ code: "quota_exceeded", pending: 2 });
    await s.call(s.tokens.agent, "POST", `/v1/requests/${first.body.id}/cancel`);
    expect((await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Three"))).status).toBe(201);

    const big = await s.call(
      s.tokens.agent2,
      "POST",
      "/v1/requests",
      gate("Big", { args: { blob: "b".repeat(5000) } }),
    );
    expect(big.status).toBe(413);
    expect(big.body.field).toBe("args");
  });

  it("lists summaries in deadline order without args", async () => {
    const s = await start();
    const late = await s.call(
      s.tokens.agent,
      "POST",
      "/v1/requests",
      gate("Late", { timeoutMs: 3_600_000, args: { secret: "pg-hidden" } }),
    );
    const soon = await s.call(
      s.tokens.agent,
      "POST",
      "/v1/requests",
      gate("Soon", { timeoutMs: 60_000 }),
    );
    const r = await s.call(s.tokens.agent, "GET", "/v1/requests?view=summary&order=deadline");
    expect(r.status).toBe(200);
    expect(r.body.items.map((x: { id: string }) => x.id)).toEqual([soon.body.id, late.body.id]);
    expect(r.text).not.toContain("pg-hidden");
  });

  it("fans one tail out to many streams and ends a stream when its token is revoked", async () => {
    const s = await start({ maxStreamsPerToken: 20 });
    const stop = new AbortController();
    try {
      const streams = [];
      for (let i = 0; i < 10; i++) {
        streams.push(await openEvents(s.url, s.tokens.alice, { signal: stop.signal }));
      }
      const made = await s.call(s.tokens.admin, "POST", "/v1/tokens", {
        name: "short-lived",
        roles: ["agent"],
      });
      const mine = await openEvents(s.url, made.body.token, { signal: stop.signal });
      await s.call(s.tokens.agent, "POST", "/v1/requests", gate("To ops", { approvers: ["ops"] }));
      for (const events of streams) expect((await take(events, 1))[0]?.event).toBe("created");

      await s.call(s.tokens.admin, "DELETE", `/v1/tokens/${made.body.id}`);
      await s.call(made.body.token, "POST", "/v1/requests", gate("refused"));
      const next = await Promise.race([
        mine.next(),
        new Promise<"open">((r) => setTimeout(() => r("open"), 3000)),
      ]);
      expect(next).not.toBe("open");
      expect((next as IteratorResult<unknown>).done).toBe(true);
    } finally {
      stop.abort();
    }
  });
});

await describePg("rate limits shared through PostgreSQL", ({ url }) => {
  const schema = freshSchema("airlock_rate");
  afterAll(async () => {
    await dropSchema(url, schema);
  });

  it("counts one token's requests across two servers on one database", async () => {
    const tokens = memoryTokenStore();
    const { token } = await createToken(tokens, { name: "bot", roles: ["agent"] });
    const stores = [postgresStore(url, { schema }), postgresStore(url, { schema })];
    const engines = [];
    for (const store of stores) engines.push(await createAirlock({ store }));
    try {
      const servers = engines.map((airlock, i) =>
        createServer({
          airlock,
          auth: { tokens },
          rateLimit: { max: 3, windowMs: 60_000 },
          rateLimitStore: { pool: (stores[i] as PostgresStore).pool, schema },
        }),
      );
      const ask = async (i: number) =>
        (
          await (servers[i] as AirlockServer).app.request("/v1/requests", {
            headers: { authorization: `Bearer ${token}` },
          })
        ).status;
      expect([await ask(0), await ask(1), await ask(0)]).toEqual([200, 200, 200]);
      // Each server alone would allow three; together they allowed three already.
      expect(await ask(1)).toBe(429);
      expect(await ask(0)).toBe(429);
      for (const s of servers) await s.close();
    } finally {
      for (const e of engines) await e.close();
    }
  });

  it("shares one count when several limiters on several pools create the table at once", async () => {
    // Concurrent CREATE TABLE IF NOT EXISTS can fail with "already exists" (42P07, 42710): before
    // the fix, about one round in ten left a limiter counting in its own process.
    const racing: string[] = [];
    try {
      for (let round = 0; round < 25; round++) {
        const at = freshSchema("airlock_rate_race");
        racing.push(at);
        // Fresh pools each round: rate-limiter-flexible names its prepared statements by table
        // only, so one connection cannot serve the same table in two schemas.
        const pools = [
          new pg.Pool({ connectionString: url }),
          new pg.Pool({ connectionString: url }),
        ];
        try {
          await (pools[0] as pg.Pool).query(`CREATE SCHEMA ${at}`);
          const limiters = pools.flatMap((pool) =>
            ["rate", "auth_failures"].map((name) =>
              createRateLimiter({ max: 2, windowMs: 60_000 }, name, { pool, schema: at }),
            ),
          );
          const [a0, b0, a1, b1] = limiters as [RateLimiter, RateLimiter, RateLimiter, RateLimiter];
          expect([(await a0.take("k")).ok, (await a1.take("k")).ok]).toEqual([true, true]);
          expect((await a1.take("k")).ok).toBe(false);
          expect((await a0.take("k")).ok).toBe(false);
          // Another name is another count, in the same table.
          expect([(await b1.take("k")).ok, (await b0.take("k")).ok]).toEqual([true, true]);
          expect((await b0.take("k")).ok).toBe(false);
        } finally {
          for (const p of pools) await p.end();
        }
      }
    } finally {
      for (const at of racing) await dropSchema(url, at);
    }
  });
});
