// Pending quotas under parallel creates over HTTP (issue 37): however many creates arrive at once, at
// one server or at two servers on the same database (one SQLite file; one PostgreSQL schema), an
// agent ends with exactly its quota pending; the others answer 429 quota_exceeded, and a replay of a
// stored key still answers its request without counting twice. Real servers on loopback.
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/core/store.js";
import { postgresStore } from "../../src/store/postgres.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";
import { gate, type Reply, startTestServer, type TestServer } from "./helpers.js";

/** How the servers of one case reach their database: a store per server, all on one database. */
interface Backend {
  name: string;
  /** A new database: the store of its first server, and how to open it again for another. */
  fresh(): { first: Store | undefined; again(first: TestServer): Store };
}

const servers: TestServer[] = [];
afterEach(async () => {
  // The later servers first: they share the first one's database.
  for (const s of servers.splice(0).reverse()) await s.close();
});

/** `n` servers on one database, each with the given quota. */
async function cluster(
  backend: Backend,
  n: number,
  limits: { pendingPerRequester?: number; pendingBytesPerRequester?: number },
): Promise<TestServer[]> {
  const db = backend.fresh();
  const first = await startTestServer({ limits, ...(db.first ? { store: db.first } : {}) });
  servers.push(first);
  const all = [first];
  for (let i = 1; i < n; i++) {
    const s = await startTestServer({ limits, store: db.again(first) });
    servers.push(s);
    all.push(s);
  }
  return all;
}

/** `count` creates at once, spread over the servers in turn, each with its own agent token "bot". */
function createAtOnce(
  at: TestServer[],
  count: number,
  body: (i: number) => Record<string, unknown>,
): Promise<Reply[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) => {
      const s = at[i % at.length] as TestServer;
      return s.call(s.tokens.agent, "POST", "/v1/requests", body(i));
    }),
  );
}

function quotaCases(backend: Backend) {
  for (const serversOnDb of [1, 2]) {
    for (const parallel of [20, 100]) {
      it(`${parallel} parallel creates against a quota of 5 on ${serversOnDb} server(s) leave exactly 5 pending`, async () => {
        const at = await cluster(backend, serversOnDb, { pendingPerRequester: 5 });
        const replies = await createAtOnce(at, parallel, (i) =>
          gate(`Parallel ${i}`, { key: `par-${i}` }),
        );
        const made = replies.filter((r) => r.status === 201);
        const refused = replies.filter((r) => r.status !== 201);
        expect(made).toHaveLength(5);
        expect(refused).toHaveLength(parallel - 5);
        for (const r of refused) {
          expect(r.status).toBe(429);
          expect(r.headers.get("content-type")).toBe("application/problem+json");
          expect(r.body).toMatchObject({ code: "quota_exceeded", pending: 5 });
          expect(r.body.detail).toContain("bot has 5 pending requests");
          expect(r.body.detail).toContain("limits.pendingPerRequester = 5");
        }
        for (const s of at) expect(await s.airlock.pendingUsage("bot")).toMatchObject({ count: 5 });

        // Replays of stored keys, at every server and all at once, answer their requests and add
        // nothing; a replay of a refused key is still refused.
        const keys = made.map((r) => r.body.key as string);
        const replays = await Promise.all(
          at.flatMap((s) =>
            keys.map((key) =>
              s.call(s.tokens.agent, "POST", "/v1/requests", gate(titleOf(made, key), { key })),
            ),
          ),
        );
        for (const r of replays) expect(r.status).toBe(201);
        expect(new Set(replays.map((r) => r.body.id))).toEqual(new Set(made.map((r) => r.body.id)));
        const refusedKey = `par-${replies.findIndex((r) => r.status === 429)}`;
        const again = await (at[0] as TestServer).call(
          (at[0] as TestServer).tokens.agent,
          "POST",
          "/v1/requests",
          gate(`Parallel ${refusedKey.slice(4)}`, { key: refusedKey }),
        );
        expect(again.status).toBe(429);
        for (const s of at) expect(await s.airlock.pendingUsage("bot")).toMatchObject({ count: 5 });

        // Another agent has its own quota; deciding one of bot's frees exactly one place.
        const s0 = at[0] as TestServer;
        expect((await s0.call(s0.tokens.agent2, "POST", "/v1/requests", gate("Mine"))).status).toBe(
          201,
        );
        await s0.call(s0.tokens.agent, "POST", `/v1/requests/${made[0]?.body.id}/cancel`);
        const refill = await createAtOnce(at, 10, (i) => gate(`Refill ${i}`));
        expect(refill.filter((r) => r.status === 201)).toHaveLength(1);
        expect(refill.filter((r) => r.status === 429)).toHaveLength(9);
      });
    }

    it(`4 parallel 200 KB creates against 300000 bytes on ${serversOnDb} server(s) leave exactly 1`, async () => {
      const at = await cluster(backend, serversOnDb, { pendingBytesPerRequester: 300_000 });
      const blob = "z".repeat(200_000);
      const replies = await createAtOnce(at, 4, (i) => gate(`Heavy ${i}`, { args: { blob } }));
      expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
      const refused = replies.filter((r) => r.status !== 201);
      expect(refused).toHaveLength(3);
      for (const r of refused) {
        expect(r.status).toBe(429);
        expect(r.body).toMatchObject({ code: "quota_exceeded", pending: 1 });
        expect(r.body.pendingBytes).toBeGreaterThan(200_000);
        expect(r.body.detail).toContain("limits.pendingBytesPerRequester");
      }
      const usage = await (at[0] as TestServer).airlock.pendingUsage("bot");
      expect(usage.count).toBe(1);
      expect(usage.bytes).toBeLessThanOrEqual(300_000);
    });
  }
}

/** The title the create with `key` was made with (a replay must send the same content). */
function titleOf(made: Reply[], key: string): string {
  return made.find((r) => r.body.key === key)?.body.title as string;
}

describe("pending quotas under parallel creates on SQLite", () => {
  quotaCases({
    name: "sqlite",
    fresh: () => ({ first: undefined, again: (first) => sqliteStore(first.dbPath) }),
  });
});

await describePg("pending quotas under parallel creates on PostgreSQL", ({ url }) => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(url, schema);
  });
  quotaCases({
    name: "postgres",
    fresh: () => {
      const schema = freshSchema("airlock_quota");
      schemas.push(schema);
      return {
        first: postgresStore(url, { schema }),
        again: () => postgresStore(url, { schema }),
      };
    },
  });
});
