// Live routes: long-poll wait, Server-Sent Events with Last-Event-ID resume, graceful shutdown.
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../helpers.js";
import {
  gate,
  openEvents,
  type SseEvent,
  startTestServer,
  type TestServer,
  take,
} from "./helpers.js";

const servers: TestServer[] = [];
async function start(options: Parameters<typeof startTestServer>[0] = {}) {
  const s = await startTestServer(options);
  servers.push(s);
  return s;
}
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function pending(s: TestServer, extra: Record<string, unknown> = {}): Promise<string> {
  return (
    await s.call(
      s.tokens.agent,
      "POST",
      "/v1/requests",
      gate("Live", { approvers: ["ops"], ...extra }),
    )
  ).body.id;
}

describe("GET /v1/requests/:id/wait (long-poll)", () => {
  it("answers as soon as the request is decided", async () => {
    const s = await start();
    const id = await pending(s);
    const started = Date.now();
    const waiting = s.call(s.tokens.agent, "GET", `/v1/requests/${id}/wait?timeout=20`);
    await new Promise((r) => setTimeout(r, 100));
    await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, { outcome: "approved" });
    const r = await waiting;
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("approved");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("answers with the pending request when its timeout passes", async () => {
    const s = await start();
    const id = await pending(s);
    const started = Date.now();
    const r = await s.call(s.tokens.agent, "GET", `/v1/requests/${id}/wait?timeout=0.3`);
    const took = Date.now() - started;
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, status: "pending" });
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(3000);
  });

  it("answers at once for a decided request, and caps the timeout at the server's limit", async () => {
    const s = await start({ maxWaitMs: 500 });
    const id = await pending(s);
    const started = Date.now();
    const capped = await s.call(s.tokens.agent, "GET", `/v1/requests/${id}/wait?timeout=60`);
    expect(capped.body.status).toBe("pending");
    expect(Date.now() - started).toBeLessThan(3000);

    await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/cancel`);
    const t0 = Date.now();
    const done = await s.call(s.tokens.agent, "GET", `/v1/requests/${id}/wait?timeout=60`);
    expect(done.body.status).toBe("cancelled");
    expect(Date.now() - t0).toBeLessThan(400);
  });

  it("answers 400 for a bad timeout", async () => {
    const s = await start();
    const id = await pending(s);
    const r = await s.call(s.tokens.agent, "GET", `/v1/requests/${id}/wait?timeout=-1`);
    expect(r.status).toBe(400);
    expect(r.body.field).toBe("timeout");
    const nan = await s.call(s.tokens.agent, "GET", `/v1/requests/${id}/wait?timeout=soon`);
    expect(nan.status).toBe(400);
  });
});

describe("GET /v1/events (SSE)", () => {
  it("uses each event's seq as its id and carries the audit event as data", async () => {
    const s = await start();
    const stop = new AbortController();
    try {
      const stream = await openEvents(s.url, s.tokens.admin, { signal: stop.signal });
      const id = await pending(s);
      await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, { outcome: "approved" });
      const [created, decided] = (await take(stream, 2)) as [SseEvent, SseEvent];
      expect(created.event).toBe("created");
      expect(decided.event).toBe("decided");
      const data = JSON.parse(decided.data);
      expect(data).toMatchObject({ type: "decided", requestId: id, actor: "alice" });
      expect(decided.id).toBe(String(data.seq));
      expect(Number(decided.id)).toBe(Number(created.id) + 1);
    } finally {
      stop.abort();
    }
  });

  it("resumes after a dropped connection with Last-Event-ID, missing no event and repeating none", async () => {
    const s = await start();
    const received: SseEvent[] = [];

    const first = new AbortController();
    const stream1 = await openEvents(s.url, s.tokens.admin, {
      signal: first.signal,
      lastEventId: "0",
    });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await pending(s));
    received.push(...(await take(stream1, 3)));
    first.abort(); // the connection drops

    // While nobody listens: more requests, decisions and a cancellation.
    for (const id of ids.slice(0, 2)) {
      await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, { outcome: "approved" });
    }
    await s.call(s.tokens.agent, "POST", `/v1/requests/${ids[2]}/cancel`);
    for (let i = 0; i < 2; i++) await pending(s);

    const last = received[received.length - 1]?.id;
    const second = new AbortController();
    try {
      const stream2 = await openEvents(s.url, s.tokens.admin, {
        signal: second.signal,
        lastEventId: last,
      });
      received.push(...(await take(stream2, 5)));
      // And live events keep coming on the resumed stream.
      await pending(s);
      received.push(...(await take(stream2, 1)));
    } finally {
      second.abort();
    }

    const seqs = received.map((e) => Number(e.id));
    expect(seqs).toEqual(Array.from({ length: 9 }, (_, i) => i + 1));
    expect(received.map((e) => e.event)).toEqual([
      "created",
      "created",
      "created",
      "decided",
      "decided",
      "cancelled",
      "created",
      "created",
      "created",
    ]);
    const audit = await s.call(s.tokens.admin, "GET", "/v1/audit");
    expect(audit.body.items.map((e: { seq: number }) => e.seq)).toEqual(seqs);
  });

  it("without Last-Event-ID starts with what happens after connecting", async () => {
    const s = await start();
    await pending(s);
    const stop = new AbortController();
    try {
      const stream = await openEvents(s.url, s.tokens.admin, { signal: stop.signal });
      const id = await pending(s);
      const [e] = await take(stream, 1);
      expect(JSON.parse((e as SseEvent).data).requestId).toBe(id);
      expect(e?.id).toBe("2");
    } finally {
      stop.abort();
    }
  });

  it("filters by request and by type", async () => {
    const s = await start();
    const a = await pending(s);
    const b = await pending(s);
    const stop = new AbortController();
    try {
      const stream = await openEvents(s.url, s.tokens.admin, {
        signal: stop.signal,
        lastEventId: "0",
        query: `?requestId=${b}&types=decided,cancelled`,
      });
      await s.call(s.tokens.alice, "POST", `/v1/requests/${a}/decisions`, { outcome: "approved" });
      await s.call(s.tokens.alice, "POST", `/v1/requests/${b}/decisions`, { outcome: "rejected" });
      const [e] = await take(stream, 1);
      expect(e?.event).toBe("decided");
      expect(JSON.parse((e as SseEvent).data).requestId).toBe(b);
    } finally {
      stop.abort();
    }
  });

  it("shows a reviewer the decision of a request escalated to it, with a type filter that omits escalations", async () => {
    const s = await start();
    const stop = new AbortController();
    try {
      const stream = await openEvents(s.url, s.tokens.alice, {
        signal: stop.signal,
        query: "?types=created,decided",
      });
      const created = await s.call(
        s.tokens.agent,
        "POST",
        "/v1/requests",
        gate("Escalates to ops", {
          approvers: ["finance"],
          timeoutMs: 100,
          onTimeout: { escalate: { approvers: ["ops"], timeoutMs: 60_000 } },
        }),
      );
      const id = created.body.id as string;
      await eventually(
        async () =>
          (await s.call(s.tokens.admin, "GET", `/v1/requests/${id}`)).body.escalations === 1,
        { timeoutMs: 5_000, intervalMs: 25, what: "the escalation" },
      );
      const decided = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
        outcome: "approved",
      });
      expect(decided.status).toBe(200);
      const [e] = await take(stream, 1);
      expect(e?.event).toBe("decided");
      expect(JSON.parse((e as SseEvent).data).requestId).toBe(id);
    } finally {
      stop.abort();
    }
  });

  it("answers 400 for a Last-Event-ID that is not an event id", async () => {
    const s = await start();
    const r = await s.call(s.tokens.admin, "GET", "/v1/events", undefined, {
      "last-event-id": "abc",
    });
    expect(r.status).toBe(400);
    expect(r.body.field).toBe("Last-Event-ID");
  });

  it("sends keep-alive comments on an idle stream", async () => {
    const s = await start({ heartbeatMs: 50 });
    const stop = new AbortController();
    try {
      const res = await fetch(`${s.url}/v1/events`, {
        headers: { authorization: `Bearer ${s.tokens.admin}` },
        signal: stop.signal,
      });
      const reader = res.body?.getReader();
      let text = "";
      const deadline = Date.now() + 3000;
      while (!text.includes(": keep-alive") && Date.now() < deadline && reader) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      expect(text).toContain(": keep-alive");
    } finally {
      stop.abort();
    }
  });
});

describe("graceful shutdown", () => {
  it("answers in-flight long-polls with the current state, ends streams, then refuses connections", async () => {
    const s = await start({ shutdownGraceMs: 5000 });
    const id = await pending(s);
    const stop = new AbortController();
    const stream = await openEvents(s.url, s.tokens.admin, { signal: stop.signal });
    const started = Date.now();
    const waiting = s.call(s.tokens.agent, "GET", `/v1/requests/${id}/wait?timeout=30`);
    await new Promise((r) => setTimeout(r, 150));

    await s.server.close();
    const r = await waiting;
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, status: "pending" });
    expect(Date.now() - started).toBeLessThan(5000);
    const end = await stream.next();
    expect(end.done).toBe(true);
    await expect(fetch(`${s.url}/healthz`)).rejects.toThrow();
    stop.abort();

    // Nothing was lost: the request is still there, pending, for the next server.
    expect((await s.airlock.get(id)).status).toBe("pending");
    await s.server.close(); // idempotent
  });

  it("answers 503 to new requests on a kept-alive connection while closing", async () => {
    const s = await start({ shutdownGraceMs: 2000 });
    const id = await pending(s);
    const waiting = s.call(s.tokens.agent, "GET", `/v1/requests/${id}/wait?timeout=30`);
    await new Promise((r) => setTimeout(r, 100));
    const closing = s.server.close();
    const health = await s.server.app.request("/healthz");
    expect(health.status).toBe(503);
    const refused = await s.server.app.request("/v1/requests", {
      headers: { authorization: `Bearer ${s.tokens.agent}` },
    });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { code: string }).code).toBe("unavailable");
    await closing;
    expect((await waiting).status).toBe(200);
  });
});
