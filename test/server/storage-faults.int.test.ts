// Storage faults over HTTP: a write the store cannot make answers 503 `store_unavailable` with
// Retry-After (not a 500 `internal`), the cause is logged once per fault episode, /healthz says
// `degraded` without touching the store, and both clear when the storage recovers.
import { join } from "node:path";
import Database from "better-sqlite3";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { AirlockError } from "../../src/core/errors.js";
import type { Store } from "../../src/core/store.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { eventually, tempDir } from "../helpers.js";
import { gate, startTestServer, type TestServer } from "./helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A store whose writes fail with `store_unavailable` while `failing` is set, like a full disk. */
function faultyStore(inner: Store): Store & { failing: boolean } {
  const writes = new Set(["insertRequest", "transition", "appendAudit"]);
  const state = { failing: false };
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === "failing") return state.failing;
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (state.failing && writes.has(String(prop))) {
          return Promise.reject(
            new AirlockError(
              "store_unavailable",
              "SQLITE_FULL: database or disk is full (injected)",
              { cause: new Error("SQLITE_FULL") },
            ),
          );
        }
        return value.apply(target, args);
      };
    },
    set(target, prop, value) {
      if (prop === "failing") {
        state.failing = Boolean(value);
        return true;
      }
      return Reflect.set(target, prop, value);
    },
  }) as Store & { failing: boolean };
}

async function start(options: Parameters<typeof startTestServer>[0]) {
  const s = await startTestServer(options);
  cleanups.push(() => s.close());
  return s;
}

function logCollector() {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: "debug" }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  return { lines, logger };
}

describe("storage faults", () => {
  it("answers 503 store_unavailable with Retry-After, logs once per episode, and shows degraded on /healthz", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const store = faultyStore(sqliteStore(join(t.dir, "a.db")));
    const { lines, logger } = logCollector();
    const s: TestServer = await start({ store, logger });
    const ok = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Before"));
    expect(ok.status).toBe(201);

    store.failing = true;
    for (let i = 0; i < 5; i++) {
      const r = await s.call(s.tokens.agent, "POST", "/v1/requests", gate(`During ${i}`));
      expect(r.status).toBe(503);
      expect(r.headers.get("content-type")).toBe("application/problem+json");
      expect(r.body.code).toBe("store_unavailable");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(r.body.retryAfterSeconds).toBe(Number(r.headers.get("retry-after")));
      expect(r.body.detail).toMatch(/storage is unavailable.*retry in \d+ s/);
    }
    const decide = await s.call(s.tokens.alice, "POST", `/v1/requests/${ok.body.id}/decisions`, {
      outcome: "approved",
    });
    expect(decide.status).toBe(503);
    // Reads still work.
    expect((await s.call(s.tokens.agent, "GET", `/v1/requests/${ok.body.id}`)).status).toBe(200);

    const health = await s.call(undefined, "GET", "/healthz");
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: "degraded",
      ok: false,
      shuttingDown: false,
      storage: { ok: false, failures: 6 },
    });
    expect(typeof health.body.storage.since).toBe("number");
    // Nothing about the cause leaks to an unauthenticated caller.
    expect(health.text).not.toContain("SQLITE");

    const faults = () => lines.filter((l) => /storage unavailable/.test(l.msg));
    expect(faults()).toHaveLength(1);
    expect(faults()[0]?.level).toBe(50);
    expect(lines.some((l) => l.msg === "unexpected error while answering a request")).toBe(false);

    // Recovery: the next write succeeds, the episode ends (logged), /healthz says ok again.
    store.failing = false;
    expect((await s.call(s.tokens.agent, "POST", "/v1/requests", gate("After"))).status).toBe(201);
    expect((await s.call(undefined, "GET", "/healthz")).body).toMatchObject({
      status: "ok",
      ok: true,
      storage: { ok: true },
    });
    expect(lines.filter((l) => l.msg === "storage available again")).toHaveLength(1);

    // A new fault is a new episode, logged again.
    store.failing = true;
    expect((await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Again"))).status).toBe(503);
    expect(faults()).toHaveLength(2);
  });

  it("ends an episode after a quiet period without failures", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const store = faultyStore(sqliteStore(join(t.dir, "a.db")));
    // Quiet for 2 s: long enough that /healthz, asked right after the failure, still sees the
    // episode on a loaded machine (150 ms was not), short enough to wait for.
    const s = await start({ store, storageQuietMs: 2_000 });
    store.failing = true;
    expect((await s.call(s.tokens.agent, "POST", "/v1/requests", gate("x"))).status).toBe(503);
    expect((await s.call(undefined, "GET", "/healthz")).body.status).toBe("degraded");
    // Back to ok once the store has been quiet for storageQuietMs.
    await eventually(
      async () => expect((await s.call(undefined, "GET", "/healthz")).body.status).toBe("ok"),
      { timeoutMs: 15_000 },
    );
  });

  it("stays responsive while another process holds the SQLite write lock: 503 for writes, reads and /healthz answered", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const path = join(t.dir, "locked.db");
    const s = await start({ store: sqliteStore(path, { lockWaitMs: 300 }) });
    const first = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Before the lock"));
    expect(first.status).toBe(201);

    const other = new Database(path);
    cleanups.push(() => {
      other.close();
    });
    other.prepare("BEGIN IMMEDIATE").run();
    try {
      const writing = s.call(s.tokens.agent, "POST", "/v1/requests", gate("Locked out"));
      // While the write waits for the lock, the server answers others.
      const health = await s.call(undefined, "GET", "/healthz");
      expect(health.status).toBe(200);
      const read = await s.call(s.tokens.agent, "GET", `/v1/requests/${first.body.id}`);
      expect(read.status).toBe(200);
      const refused = await writing;
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe("store_unavailable");
      expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
      expect((await s.call(undefined, "GET", "/healthz")).body.status).toBe("degraded");
    } finally {
      other.prepare("ROLLBACK").run();
    }
    const after = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("After the lock"));
    expect(after.status).toBe(201);
    expect((await s.call(undefined, "GET", "/healthz")).body.status).toBe("ok");
  });
});
