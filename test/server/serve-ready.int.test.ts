// Ready means ready (issue 32, item 3): `airlock serve` answered /healthz 200 as soon as it listened,
// before the admin token was stored; on a fresh PostgreSQL schema (the token table still being
// created) an admin request made at that moment got 401, about 200 ms before it would have got 200.
// These start real `airlock serve` processes on a port chosen beforehand, poll /healthz, and make an
// admin request the moment it answers 200: it must be served, every time.
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer as createNetServer } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { childEnv as cleanEnv, spawnAirlock } from "../cli/airlock-child.js";
import { tempDir } from "../helpers.js";
import { describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";
import { startTestServer } from "./helpers.js";

const ADMIN = "admin-token-ready-0123456789";
const KEY = "k".repeat(32);
const STARTS = 5;
/** SQLite's token store is ready when opened, so its window was never seen: fewer starts there. */
const SQLITE_STARTS = 3;
/** Bound on one start (from the sources through tsx a start takes a few seconds). */
const START_MS = 30_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function childEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return cleanEnv({ AIRLOCK_LOG_LEVEL: "warn", ...extra });
}

/** A loopback port free a moment ago (the child binds it; with port 0 it would only print its
 * address after the start, which would hide the window this test is about). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const address = s.address();
      const port = typeof address === "object" && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

interface Observed {
  /** /healthz answers before the first 200 (503 while starting; connection refused not counted). */
  before: number[];
  /** The admin request made as soon as /healthz said 200. */
  admin: number;
  adminBody: string;
}

/** Starts `airlock serve ...args`, polls /healthz until it answers 200 (bounded), then at once makes
 * an admin request. */
async function startAndAsk(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Observed> {
  const port = await freePort();
  const child = spawnAirlock(["serve", ...args, "--port", String(port)], env, cwd);
  child.stdout?.resume();
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  cleanups.push(() => stop(child));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + START_MS;
  const before: number[] = [];
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`airlock serve exited: ${stderr}`);
    const health = await fetch(`${base}/healthz`).catch(() => undefined);
    if (health?.status === 200) {
      await health.arrayBuffer();
      const admin = await fetch(`${base}/v1/tokens`, {
        headers: { authorization: `Bearer ${ADMIN}` },
      });
      return { before, admin: admin.status, adminBody: await admin.text() };
    }
    if (health) {
      before.push(health.status);
      await health.arrayBuffer();
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`/healthz never answered 200 within ${START_MS} ms; stderr: ${stderr}`);
}

await describePg(
  "airlock serve --postgres: /healthz 200 means an admin request is served",
  ({ url }) => {
    const schemas: string[] = [];
    afterAll(async () => {
      for (const s of schemas) await dropSchema(url, s);
    });

    it(`on a fresh schema, ${STARTS} starts in a row: the first admin request after /healthz 200 is 200, never 401`, async () => {
      const statuses: number[] = [];
      for (let i = 0; i < STARTS; i++) {
        const schema = freshSchema("airlock_ready");
        schemas.push(schema);
        const t = tempDir("airlock-ready-pg-");
        cleanups.push(t.cleanup);
        const seen = await startAndAsk(
          ["--postgres", url],
          childEnv({
            AIRLOCK_POSTGRES_SCHEMA: schema,
            AIRLOCK_AUDIT_KEY: KEY,
            AIRLOCK_ADMIN_TOKEN: ADMIN,
          }),
          t.dir,
        );
        statuses.push(seen.admin);
        // What a starting server answers, if it was asked in time: 503, never 200 too early.
        for (const s of seen.before) expect(s).toBe(503);
        for (const c of cleanups.splice(0).reverse()) await c();
      }
      expect(statuses).toEqual(Array(STARTS).fill(200));
    }, 120_000);
  },
);

describe("airlock serve on SQLite: /healthz 200 means an admin request is served", () => {
  it(`on a new file, ${SQLITE_STARTS} starts in a row: the first admin request after /healthz 200 is 200`, async () => {
    const statuses: number[] = [];
    for (let i = 0; i < SQLITE_STARTS; i++) {
      const t = tempDir("airlock-ready-sqlite-");
      cleanups.push(t.cleanup);
      const db = join(t.dir, "airlock.db");
      const seen = await startAndAsk(
        [],
        childEnv({ AIRLOCK_DB: db, AIRLOCK_ADMIN_TOKEN: ADMIN }),
        t.dir,
      );
      statuses.push(seen.admin);
      for (const s of seen.before) expect(s).toBe(503);
      expect(existsSync(db)).toBe(true);
      for (const c of cleanups.splice(0).reverse()) await c();
    }
    expect(statuses).toEqual(Array(SQLITE_STARTS).fill(200));
  }, 120_000);
});

describe("createServer({ starting: true })", () => {
  it("answers /healthz 503 `starting` and the API 503 (not 401, nor counted as refused) until ready()", async () => {
    const s = await startTestServer({
      starting: true,
      authFailureLimit: { max: 2, windowMs: 60_000 },
    });
    cleanups.push(() => s.close());
    const health = await s.call(undefined, "GET", "/healthz");
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: "starting", ok: false, shuttingDown: false });
    const admin = await s.call(s.tokens.admin, "GET", "/v1/tokens");
    expect(admin.status).toBe(503);
    expect(admin.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(admin.headers.get("retry-after")).toBe("1");
    expect(admin.body).toMatchObject({
      code: "unavailable",
      detail: expect.stringMatching(/starting/),
    });
    // Unknown tokens while starting: past the failure limit (2), yet none of them counted.
    for (let i = 0; i < 4; i++) {
      expect((await s.call("alk_not-a-token", "GET", "/v1/requests")).status).toBe(503);
    }
    s.server.ready();
    expect((await s.call(undefined, "GET", "/healthz")).body).toMatchObject({
      status: "ok",
      ok: true,
    });
    expect((await s.call(s.tokens.admin, "GET", "/v1/tokens")).status).toBe(200);
    expect((await s.call("alk_not-a-token", "GET", "/v1/requests")).status).toBe(401);
  });
});
