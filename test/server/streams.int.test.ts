// Long-lived answers and their credentials, and what many of them cost: event streams and
// long-polls end when their token is revoked; streams are capped per token and share one read of
// the store per event.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/core/store.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import {
  gate,
  openEvents,
  type SseEvent,
  startTestServer,
  type TestServer,
  take,
} from "./helpers.js";

const servers: TestServer[] = [];
const cleanups: (() => void)[] = [];
async function start(options: Parameters<typeof startTestServer>[0] = {}) {
  const s = await startTestServer(options);
  servers.push(s);
  return s;
}
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const c of cleanups.splice(0)) c();
});

async function newAgent(s: TestServer, name: string) {
  const r = await s.call(s.tokens.admin, "POST", "/v1/tokens", { name, roles: ["agent"] });
  expect(r.status).toBe(201);
  return { id: r.body.id as string, token: r.body.token as string };
}

/** Resolves with "ended" once the stream ends, or "open" after `ms`. */
async function endsWithin(it: AsyncGenerator<SseEvent>, ms: number): Promise<"ended" | "open"> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return "open";
    let timer: NodeJS.Timeout | undefined;
    const next = await Promise.race([
      it.next(),
      new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), left);
      }),
    ]);
    clearTimeout(timer);
    if (next === "late") return "open";
    if (next.done) return "ended";
  }
}

describe("streams end with their credential", () => {
  it("ends GET /v1/events at once when its token is revoked through the API", async () => {
    const s = await start();
    const agent = await newAgent(s, "temp-agent");
    const stop = new AbortController();
    const events = await openEvents(s.url, agent.token, { signal: stop.signal });
    try {
      await s.call(agent.token, "POST", "/v1/requests", gate("Seen"));
      expect((await take(events, 1))[0]?.event).toBe("created");
      expect((await s.call(s.tokens.admin, "DELETE", `/v1/tokens/${agent.id}`)).status).toBe(200);
      expect(await endsWithin(events, 3000)).toBe("ended");
      // And reconnecting is refused.
      const again = await fetch(`${s.url}/v1/events`, {
        headers: { authorization: `Bearer ${agent.token}` },
      });
      expect(again.status).toBe(401);
      await again.text();
    } finally {
      stop.abort();
    }
  });

  it("ends it when the token is revoked elsewhere (the token store directly), delivering nothing more", async () => {
    const s = await start({ credentialCheckMs: 100 });
    const agent = await newAgent(s, "temp-agent");
    const stop = new AbortController();
    const events = await openEvents(s.url, agent.token, { signal: stop.signal });
    try {
      await s.tokenStore.revoke(agent.id, Date.now());
      // Another token keeps creating; none of it reaches the revoked stream.
      await s.airlock.request({ title: "After revocation", requester: "temp-agent" });
      const rest: SseEvent[] = [];
      const outcome = await Promise.race([
        (async () => {
          for await (const e of events) rest.push(e);
          return "ended";
        })(),
        new Promise((r) => setTimeout(() => r("open"), 3000)),
      ]);
      expect(outcome).toBe("ended");
      expect(rest.filter((e) => e.event === "created")).toHaveLength(0);
    } finally {
      stop.abort();
    }
  });

  it("answers 401 to a long-poll opened before its token was revoked", async () => {
    const s = await start({ credentialCheckMs: 100 });
    const agent = await newAgent(s, "temp-agent");
    const id = (
      await s.call(agent.token, "POST", "/v1/requests", gate("Wait on me", { approvers: ["ops"] }))
    ).body.id;
    const started = Date.now();
    const waiting = s.call(agent.token, "GET", `/v1/requests/${id}/wait?timeout=20`);
    await new Promise((r) => setTimeout(r, 150));
    await s.tokenStore.revoke(agent.id, Date.now());
    const r = await waiting;
    expect(r.status).toBe(401);
    expect(r.body.code).toBe("unauthorized");
    expect(r.body.detail).toMatch(/revoked/);
    expect(r.text).not.toContain("Wait on me");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("answers 401 to a long-poll whose request is decided after the revocation", async () => {
    const s = await start();
    const agent = await newAgent(s, "temp-agent");
    const id = (
      await s.call(agent.token, "POST", "/v1/requests", gate("Decide me", { approvers: ["ops"] }))
    ).body.id;
    const waiting = s.call(agent.token, "GET", `/v1/requests/${id}/wait?timeout=20`);
    await new Promise((r) => setTimeout(r, 100));
    await s.call(s.tokens.admin, "DELETE", `/v1/tokens/${agent.id}`);
    await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, { outcome: "approved" });
    expect((await waiting).status).toBe(401);
  });
});

describe("the shared tail", () => {
  it("ends open streams when the engine is closed under the server", async () => {
    const s = await start();
    const stop = new AbortController();
    try {
      const events = await openEvents(s.url, s.tokens.admin, { signal: stop.signal });
      await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Before close"));
      expect((await take(events, 1))[0]?.event).toBe("created");
      await s.airlock.close();
      expect(await endsWithin(events, 3000)).toBe("ended");
    } finally {
      stop.abort();
    }
  });
});

describe("event streams per token", () => {
  it("caps open streams per token with 429 too_many_streams; closing one frees a place", async () => {
    const s = await start({ maxStreamsPerToken: 2 });
    const first = new AbortController();
    const second = new AbortController();
    const stops = [first, second];
    try {
      await openEvents(s.url, s.tokens.alice, { signal: first.signal });
      await openEvents(s.url, s.tokens.alice, { signal: second.signal });
      const third = await s.call(s.tokens.alice, "GET", "/v1/events");
      expect(third.status).toBe(429);
      expect(third.body.code).toBe("too_many_streams");
      expect(third.body.detail).toMatch(/already has 2 event streams open/);
      // Another token is not affected.
      const other = new AbortController();
      stops.push(other);
      await openEvents(s.url, s.tokens.bob, { signal: other.signal });

      first.abort();
      let reopened = false;
      for (let i = 0; i < 50 && !reopened; i++) {
        await new Promise((r) => setTimeout(r, 20));
        const again = new AbortController();
        const res = await fetch(`${s.url}/v1/events`, {
          headers: { authorization: `Bearer ${s.tokens.alice}` },
          signal: again.signal,
        });
        reopened = res.status === 200;
        if (reopened) stops.push(again);
        else await res.text();
      }
      expect(reopened).toBe(true);
    } finally {
      for (const c of stops) c.abort();
    }
  });

  it("shares one read of the store per event among all open streams", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const counts = { listAudit: 0, getRequest: 0 };
    const inner = sqliteStore(join(t.dir, "counted.db"));
    const store = new Proxy(inner, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop === "listAudit" || prop === "getRequest") {
          return (...args: unknown[]) => {
            counts[prop]++;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as Store;
    const s = await start({ store, maxStreamsPerToken: 50 });
    const STREAMS = 30;
    const stop = new AbortController();
    try {
      const streams = [];
      for (let i = 0; i < STREAMS; i++) {
        streams.push(await openEvents(s.url, s.tokens.alice, { signal: stop.signal }));
      }
      counts.listAudit = 0;
      counts.getRequest = 0;
      const EVENTS = 5;
      for (let i = 0; i < EVENTS; i++) {
        await s.call(
          s.tokens.agent,
          "POST",
          "/v1/requests",
          gate(`Fan out ${i}`, { approvers: ["ops"] }),
        );
      }
      // Every stream gets every event...
      for (const events of streams) {
        const got = await take(events, EVENTS);
        expect(got.map((e) => e.event)).toEqual(Array(EVENTS).fill("created"));
      }
      // ...from reads that do not grow with the number of streams (30 streams each reading per
      // event would be at least 150 reads of the log and 150 of the requests).
      expect(counts.listAudit).toBeLessThanOrEqual(2 * EVENTS);
      expect(counts.getRequest).toBeLessThanOrEqual(3 * EVENTS);
    } finally {
      stop.abort();
    }
  });
});
