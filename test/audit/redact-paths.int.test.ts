// The canary secrets (redaction-canaries.json) through the real paths out of Airlock: a request
// carrying every one of them in its title, args, summary, preview, items and metadata, decided with
// a comment quoting them, leaves none in the audit log (SQLite and PostgreSQL), the event stream
// (GET /v1/events) nor the bodies of a signed webhook. The request itself keeps its args: whoever
// executes needs them, and the test shows the canaries did go in.
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseChannelsConfig } from "../../src/channels/config.js";
import { createChannels, type RunningChannels, startChannels } from "../../src/channels/setup.js";
import type { Store } from "../../src/core/store.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { inboundDeps } from "../../src/server/channels.js";
import { postgresStore } from "../../src/store/postgres.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";
import { tempDir } from "../helpers.js";
import { describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";
import { openEvents, type SseEvent, startTestServer, type TestServer } from "../server/helpers.js";
import {
  commentWithCanaries,
  leaked,
  objectWithCanaries,
  requestWithCanaries,
  SECRETS,
} from "./canaries.js";

const silent = pino({ level: "silent" });

async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Creates, decides and records with every canary; returns the audit events of the request and
 * of the record as JSON text. */
async function auditOfCanaries(airlock: Airlock): Promise<string> {
  const created = await airlock.request({
    ...requestWithCanaries(),
    requester: "agent",
    approvers: ["alice"],
  });
  // The canaries went in: the stored request keeps the args as given.
  expect(leaked(JSON.stringify(created.args)).length).toBeGreaterThanOrEqual(SECRETS.length / 2);
  await airlock.decide(created.id, {
    outcome: "approved",
    reviewer: "alice",
    comment: commentWithCanaries(),
  });
  await airlock.record({
    type: "auto_executed",
    requestId: created.id,
    actor: "agent",
    data: { tool: "rotate", args: objectWithCanaries(), note: commentWithCanaries() },
  });
  const events = await airlock.audit({ requestId: created.id });
  expect(events.map((e) => e.type)).toEqual(["created", "decided", "auto_executed"]);
  return JSON.stringify(events);
}

function auditSuite(open: () => { store: Store; cleanup: () => Promise<void> | void }) {
  let airlock: Airlock;
  let cleanup: () => Promise<void> | void;
  beforeAll(async () => {
    const o = open();
    cleanup = o.cleanup;
    airlock = await createAirlock({ store: o.store, logger: silent, sweeper: false });
  });
  afterAll(async () => {
    await airlock?.close();
    await cleanup?.();
  });

  it("keeps every canary out of the audit log", async () => {
    const text = await auditOfCanaries(airlock);
    expect(leaked(text)).toEqual([]);
    expect(text).toContain("[REDACTED]");
    expect((await airlock.verifyAudit()).ok).toBe(true);
  });
}

describe("the audit log on SQLite", () => {
  auditSuite(() => {
    const t = tempDir("airlock-redact-");
    return { store: sqliteStore(join(t.dir, "airlock.db")), cleanup: t.cleanup };
  });
});

await describePg("the audit log on PostgreSQL", ({ url }) => {
  const schema = freshSchema();
  auditSuite(() => ({
    store: postgresStore(url, { schema, max: 3 }),
    cleanup: () => dropSchema(url, schema),
  }));
});

describe("the event stream (GET /v1/events)", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s?.close();
  });

  it("carries no canary", async () => {
    const stop = new AbortController();
    try {
      const stream = await openEvents(s.url, s.tokens.admin, { signal: stop.signal });
      const created = await s.call(
        s.tokens.agent,
        "POST",
        "/v1/requests",
        requestWithCanaries({ approvers: ["ops"] }),
      );
      expect(created.status).toBe(201);
      const decided = await s.call(
        s.tokens.alice,
        "POST",
        `/v1/requests/${created.body.id}/decisions`,
        { outcome: "approved", comment: commentWithCanaries() },
      );
      expect(decided.status).toBe(200);
      // The answer to the agent is its own request, args included: the canaries went in.
      expect(leaked(created.text).length).toBeGreaterThan(0);
      const seen: SseEvent[] = [];
      for (;;) {
        const next = await Promise.race([
          stream.next(),
          new Promise<"late">((r) => setTimeout(() => r("late"), 10_000).unref()),
        ]);
        if (next === "late" || next.done) throw new Error(`the stream gave ${seen.length} events`);
        seen.push(next.value);
        if (next.value.event === "decided") break;
      }
      expect(seen.map((e) => e.event)).toEqual(["created", "decided"]);
      expect(leaked(seen.map((e) => e.data).join("\n"))).toEqual([]);
    } finally {
      stop.abort();
    }
  });
});

describe("a webhook's bodies", () => {
  const SECRET = `whsec_${Buffer.from("redact-paths-hook-secret-0123456").toString("base64")}`;
  const temp = tempDir("airlock-redact-hook-");
  let receiver: WebhookReceiver;
  let airlock: Airlock;
  let running: RunningChannels;

  beforeAll(async () => {
    receiver = await startWebhookReceiver({ hook: SECRET });
    const config = parseChannelsConfig({
      channels: {
        hook: {
          type: "webhook",
          url: `${receiver.url}/hook`,
          secret: SECRET,
          allowPrivateTargets: true,
        },
      },
      routes: [{ match: { approver: "ops" }, channels: ["hook"] }],
      outbox: { pollMs: 50, baseDelayMs: 50 },
    });
    const channels = await createChannels(config, { logger: silent });
    const store = sqliteStore(join(temp.dir, "airlock.db"));
    airlock = await createAirlock({
      store,
      logger: silent,
      notifiers: channels.router,
      onOutbox: () => running?.dispatcher.wake(),
    });
    const serverChannels = {
      drivers: channels.drivers,
      identities: channels.identities,
      publicUrl: () => "https://airlock.example.test",
    };
    running = await startChannels(channels, {
      store,
      inbound: inboundDeps(airlock, serverChannels, silent),
      logger: silent,
      publicUrl: () => "https://airlock.example.test",
    });
  });
  afterAll(async () => {
    await running?.close();
    await airlock?.close();
    await receiver?.close();
    temp.cleanup();
  });

  it("carry no canary, for the created and the decided request", async () => {
    const request = await airlock.request({
      ...requestWithCanaries(),
      requester: "agent",
      // alice decides in-process: named, besides the group the webhook is routed by.
      approvers: ["ops", "alice"],
    });
    await airlock.decide(request.id, {
      outcome: "approved",
      reviewer: "alice",
      comment: commentWithCanaries(),
    });
    const mine = () =>
      receiver.received.filter((r) => {
        const v = r.verified.hook;
        return v?.ok && JSON.stringify(v.event.data).includes(request.id);
      });
    const bodies = await until("the created and decided webhooks", () => {
      const got = mine();
      return got.length >= 2 ? got : undefined;
    });
    const types = bodies.map((b) => (b.verified.hook?.ok ? b.verified.hook.event.type : ""));
    expect(types.sort()).toEqual(["request.created", "request.decided"]);
    expect(leaked(bodies.map((b) => b.body).join("\n"))).toEqual([]);
    // The title and the comment reached the receiver, redacted.
    expect(bodies.map((b) => b.body).join("\n")).toContain("Rotate AKIA***");
  });
});
