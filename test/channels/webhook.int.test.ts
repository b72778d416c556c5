import { createServer } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Resolver } from "../../src/channels/address-guard.js";
import type { ChannelDriver, DeliveryContext, DeliveryResult } from "../../src/channels/types.js";
import {
  createWebhookChannel,
  generateWebhookSecret,
  parseRetryAfter,
  verifyWebhook,
  WEBHOOK_USER_AGENT,
  type WebhookOptions,
  WebhookVerificationError,
  webhookOptionsSchema,
} from "../../src/channels/webhook.js";
import type { OutboxMessage, OutboxTopic } from "../../src/core/outbox.js";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

const OLD = generateWebhookSecret();
const NEW = generateWebhookSecret();
const PUBLIC_URL = "https://airlock.example.test";

let engine: Airlock;
let request: ApprovalRequest;
let receiver: WebhookReceiver;
let logLines: string[];
let logger: pino.Logger;
let counter = 0;

beforeAll(async () => {
  engine = await createAirlock({ store: sqliteStore(":memory:"), sweeper: false });
  request = await engine.request({
    action: "deploy",
    title: "Deploy api v2 to production",
    risk: "high",
    requester: "agent-7",
    approvers: ["ops"],
    timeoutMs: 3_600_000,
  });
  receiver = await startWebhookReceiver({ old: OLD, new: NEW, both: [OLD, NEW] });
});
afterAll(async () => {
  await receiver.close();
  await engine.close();
});
beforeEach(() => {
  receiver.received.length = 0;
  logLines = [];
  logger = pino({ level: "trace" }, { write: (line: string) => logLines.push(line) });
});

function message(topic: OutboxTopic = "created", over: Partial<OutboxMessage> = {}): OutboxMessage {
  counter += 1;
  const now = Date.now();
  return {
    id: `msg_${counter}_${now}`,
    target: "hooks",
    topic,
    requestId: request.id,
    payload: {
      event: { type: topic, actor: "agent-7", at: now, data: { note: "caused by the test" } },
    },
    status: "pending",
    attempts: 1,
    availableAt: now,
    createdAt: now,
    updatedAt: now,
    ...over,
  };
}

function ctx(over: Partial<DeliveryContext> = {}): DeliveryContext {
  return {
    request,
    previous: [],
    publicUrl: PUBLIC_URL,
    now: () => Date.now(),
    signal: new AbortController().signal,
    ...over,
  };
}

function channel(options: Partial<WebhookOptions> = {}, resolve?: Resolver): ChannelDriver {
  return createWebhookChannel(
    "hooks",
    {
      type: "webhook",
      url: `${receiver.url}/hook?tenant=1`,
      secret: NEW,
      allowPrivateTargets: true,
      ...options,
    },
    { logger, ...(resolve === undefined ? {} : { resolve }) },
  );
}

function failure(result: DeliveryResult) {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
  return result;
}

describe("webhook delivery", () => {
  it("POSTs the documented event, signed; the receiver verifies it", async () => {
    const m = message("created");
    const result = await channel().deliver(m, ctx());
    expect(result).toEqual({ ok: true, receipt: { status: 200 } });
    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0];
    expect(got?.method).toBe("POST");
    expect(got?.path).toBe("/hook?tenant=1");
    expect(got?.headers["content-type"]).toBe("application/json");
    expect(got?.headers["user-agent"]).toBe(WEBHOOK_USER_AGENT);
    expect(got?.headers["webhook-id"]).toBe(m.id);
    expect(got?.headers["webhook-timestamp"]).toMatch(/^\d+$/);
    expect(got?.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    const verified = got?.verified.new;
    if (!verified?.ok) throw new Error(`signature did not verify: ${JSON.stringify(verified)}`);
    expect(verified.event).toEqual({
      type: "request.created",
      timestamp: new Date(m.createdAt).toISOString(),
      data: {
        event: m.payload.event,
        request: {
          id: request.id,
          action: "deploy",
          title: "Deploy api v2 to production",
          status: "pending",
          risk: "high",
          requester: "agent-7",
          approvers: ["ops"],
          deadline: new Date(request.deadline ?? 0).toISOString(),
          url: `${PUBLIC_URL}/requests/${request.id}`,
        },
      },
    });
    // A receiver knowing only another secret refuses it.
    expect(got?.verified.old).toEqual({ ok: false, error: "No matching signature found" });
  });

  it("a retry carries the same webhook-id, freshly signed", async () => {
    const m = message("decided");
    const driver = channel();
    await driver.deliver(m, ctx());
    await driver.deliver({ ...m, attempts: 2 }, ctx());
    expect(receiver.received.map((r) => r.headers["webhook-id"])).toEqual([m.id, m.id]);
    expect(receiver.received.every((r) => r.verified.new?.ok === true)).toBe(true);
  });

  it("rotation: two secrets, two signatures; a receiver knowing either one verifies", async () => {
    const result = await channel({ secret: undefined, secrets: [OLD, NEW] }).deliver(
      message("escalated"),
      ctx(),
    );
    expect(result.ok).toBe(true);
    const got = receiver.received[0];
    expect(String(got?.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(got?.verified.old?.ok).toBe(true);
    expect(got?.verified.new?.ok).toBe(true);
    expect(got?.verified.both?.ok).toBe(true);
  });

  it("a test message (no request) has no request summary", async () => {
    const m = message("test", { requestId: undefined, payload: { test: true } });
    await channel().deliver(m, ctx({ request: undefined }));
    const verified = receiver.received[0]?.verified.new;
    if (!verified?.ok) throw new Error("did not verify");
    expect(verified.event).toEqual({
      type: "request.test",
      timestamp: new Date(m.createdAt).toISOString(),
      data: { test: true },
    });
  });

  it("a decided request's summary carries the decision", async () => {
    const decided = await engine.request({ title: "Rotate keys", approvers: ["ops"] });
    const after = await engine.decide(decided.id, {
      outcome: "approved",
      reviewer: "alice",
      groups: ["ops"],
      channel: "api",
      comment: "go",
    });
    await channel().deliver(message("decided"), ctx({ request: after }));
    const verified = receiver.received[0]?.verified.new;
    if (!verified?.ok) throw new Error("did not verify");
    expect(verified.event.data.request).toMatchObject({
      id: decided.id,
      status: "approved",
      decision: { outcome: "approved", reviewer: "alice", channel: "api", comment: "go" },
    });
    expect(verified.event.data.request?.deadline).toBeUndefined();
  });

  it("topics: a topic not subscribed is settled without a request", async () => {
    const result = await channel({ topics: ["decided"] }).deliver(message("created"), ctx());
    expect(result).toMatchObject({ ok: true });
    expect(result.ok && result.detail).toContain("created");
    expect(receiver.received).toHaveLength(0);
  });

  it("static headers are sent", async () => {
    await channel({ headers: { "X-Tenant": "t-1" } }).deliver(message(), ctx());
    expect(receiver.received[0]?.headers["x-tenant"]).toBe("t-1");
  });
});

describe("webhook answers", () => {
  it("503 with Retry-After in seconds: retry after that long", async () => {
    receiver.reply({ status: 503, headers: { "retry-after": "7" }, body: "busy" });
    const result = failure(await channel().deliver(message(), ctx()));
    expect(result).toMatchObject({ retry: true, retryAfterMs: 7000 });
    expect(result.error).toContain("503");
    expect(result.error).toContain("busy");
  });

  it("429 with Retry-After as an HTTP date", async () => {
    const now = Date.parse("2030-01-01T00:00:00Z");
    receiver.reply({ status: 429, headers: { "retry-after": "Tue, 01 Jan 2030 00:02:00 GMT" } });
    const result = failure(await channel().deliver(message(), ctx({ now: () => now })));
    expect(result).toMatchObject({ retry: true, retryAfterMs: 120_000 });
  });

  it("500 without Retry-After: retry, no delay given", async () => {
    receiver.reply({ status: 500 });
    const result = failure(await channel().deliver(message(), ctx()));
    expect(result.retry).toBe(true);
    expect(result.retryAfterMs).toBeUndefined();
  });

  it("410: gone, no retry", async () => {
    receiver.reply({ status: 410 });
    const result = failure(await channel().deliver(message(), ctx()));
    expect(result).toMatchObject({ retry: false, gone: true });
  });

  it("a redirect is a failure not retried, naming the Location; it is not followed", async () => {
    receiver.reply({ status: 302, headers: { location: `${receiver.url}/elsewhere` } });
    const result = failure(await channel().deliver(message(), ctx()));
    expect(result.retry).toBe(false);
    expect(result.error).toContain(`${receiver.url}/elsewhere`);
    expect(result.error).toContain("redirect");
    expect(receiver.received).toHaveLength(1);
  });

  it("other 4xx: no retry; a large body is cut to a short excerpt", async () => {
    receiver.reply({ status: 400, body: `bad ${"x".repeat(200_000)}` });
    const result = failure(await channel().deliver(message(), ctx()));
    expect(result.retry).toBe(false);
    expect(result.error).toContain("400: bad x");
    expect(result.error.length).toBeLessThan(400);
  });

  it("no answer within timeoutMs: retry", async () => {
    receiver.reply("hang");
    const result = failure(await channel({ timeoutMs: 300 }).deliver(message(), ctx()));
    expect(result.retry).toBe(true);
    expect(result.error).toContain("within 300 ms");
  });

  it("the dispatcher's signal aborts the attempt: retry", async () => {
    receiver.reply("hang");
    const controller = new AbortController();
    const pending = channel().deliver(message(), ctx({ signal: controller.signal }));
    // Abort once the receiver has the request in hand (bounded wait).
    for (let i = 0; i < 200 && receiver.received.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    controller.abort();
    const result = failure(await pending);
    expect(result.retry).toBe(true);
    expect(result.error).toContain("aborted");
  });

  it("connection refused: retry", async () => {
    const port = await closedPort();
    const result = failure(
      await channel({ url: `http://127.0.0.1:${port}/hook` }).deliver(message(), ctx()),
    );
    expect(result.retry).toBe(true);
    expect(result.error).toContain("ECONNREFUSED");
  });
});

describe("private targets", () => {
  const refused = [
    "http://127.0.0.1:9/hook",
    "http://[::1]:9/hook",
    "http://10.1.2.3:9/hook",
    "http://169.254.169.254/latest/meta-data",
    "http://[::ffff:127.0.0.1]:9/hook",
    "http://2130706433:9/hook",
    "http://localhost:9/hook",
  ];
  for (const url of refused) {
    it(`refuses ${url} without allowPrivateTargets`, async () => {
      const result = failure(
        await channel({ url, allowPrivateTargets: undefined }).deliver(message(), ctx()),
      );
      expect(result.retry).toBe(false);
      expect(result.error).toContain("allowPrivateTargets: true");
    });
  }

  it("refuses a name when any of its addresses is private", async () => {
    const resolve: Resolver = async () => [
      { address: "93.184.215.14", family: 4 },
      { address: "192.168.1.10", family: 4 },
    ];
    const result = failure(
      await channel(
        { url: "https://hooks.example.test/x", allowPrivateTargets: false },
        resolve,
      ).deliver(message(), ctx()),
    );
    expect(result).toMatchObject({ retry: false });
    expect(result.error).toContain("192.168.1.10");
    expect(result.error).toContain("private");
  });

  it("allowed with allowPrivateTargets: 127.0.0.1 and localhost", async () => {
    expect((await channel().deliver(message(), ctx())).ok).toBe(true);
    const local = await channel({ url: `http://localhost:${receiver.port}/hook` }).deliver(
      message(),
      ctx(),
    );
    expect(local).toMatchObject({ ok: true });
    expect(receiver.received).toHaveLength(2);
  });

  it("the connection goes to the checked address, not to a second lookup", async () => {
    // The name exists only in this resolver: reaching the receiver proves the socket used the
    // address that was checked, not a fresh DNS answer (which could differ: rebinding).
    let lookups = 0;
    const resolve: Resolver = async () => {
      lookups += 1;
      return [{ address: "127.0.0.1", family: 4 }];
    };
    const result = await channel(
      { url: `http://only-in-test.invalid:${receiver.port}/hook` },
      resolve,
    ).deliver(message(), ctx());
    expect(result).toMatchObject({ ok: true });
    expect(lookups).toBe(1);
    expect(receiver.received[0]?.headers.host).toBe(`only-in-test.invalid:${receiver.port}`);
  });

  it("a name that does not resolve: retry", async () => {
    const resolve: Resolver = async () => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND nowhere.invalid"), {
        code: "ENOTFOUND",
      });
    };
    const result = failure(
      await channel({ url: "https://nowhere.invalid/x" }, resolve).deliver(message(), ctx()),
    );
    expect(result.retry).toBe(true);
    expect(result.error).toContain("ENOTFOUND");
  });
});

describe("secrets stay secret", () => {
  it("appear in no log line and no result, even when the receiver echoes them", async () => {
    const header = "Bearer gateway-token-123456";
    receiver.reply(
      { status: 400, body: `you sent ${OLD} and ${NEW.slice("whsec_".length)} and ${header}` },
      { status: 503, headers: { "retry-after": "1" } },
      "hang",
    );
    const driver = channel({
      secret: undefined,
      secrets: [OLD, NEW],
      headers: { Authorization: header },
      timeoutMs: 300,
    });
    const results = [
      await driver.deliver(message(), ctx()),
      await driver.deliver(message(), ctx()),
      await driver.deliver(message(), ctx()),
      await driver.deliver(message(), ctx()),
    ];
    expect(results.map((r) => r.ok)).toEqual([false, false, false, true]);
    expect(logLines.length).toBeGreaterThanOrEqual(4);
    const seen = logLines.join("\n") + JSON.stringify(results);
    for (const secret of [OLD, NEW, header]) {
      expect(seen).not.toContain(secret);
      expect(seen).not.toContain(secret.replace(/^whsec_|^Bearer /, ""));
    }
    expect(seen).toContain("[redacted]");
  });

  it("a bad secret's error does not repeat it", () => {
    const bad = "not-a-secret-but-private-value";
    expect(() =>
      createWebhookChannel(
        "hooks",
        { type: "webhook", url: "https://a.example/x", secret: bad },
        { logger },
      ),
    ).toThrow(/`secret`: expected a Standard Webhooks secret/);
    try {
      createWebhookChannel(
        "hooks",
        { type: "webhook", url: "https://a.example/x", secret: bad },
        { logger },
      );
    } catch (error) {
      expect((error as Error).message).not.toContain(bad);
    }
  });
});

describe("webhookOptionsSchema", () => {
  const base = { type: "webhook", url: "https://hooks.example.com/airlock", secret: NEW };
  const problem = (options: Record<string, unknown>) => {
    const parsed = webhookOptionsSchema.safeParse(options);
    return parsed.success
      ? ""
      : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
  };

  it("accepts one secret or two", () => {
    expect(problem(base)).toBe("");
    expect(problem({ ...base, secret: undefined, secrets: [OLD, NEW] })).toBe("");
  });

  it("refuses what is wrong, saying what", () => {
    expect(problem({ ...base, secret: undefined })).toContain("exactly one of `secret`");
    expect(problem({ ...base, secrets: [OLD] })).toContain("exactly one of `secret`");
    expect(problem({ ...base, secret: undefined, secrets: [OLD, NEW, OLD] })).toContain("secrets");
    expect(problem({ ...base, secret: "whsec_c2hvcnQ=" })).toContain("at least 24 bytes");
    expect(problem({ ...base, url: "ftp://hooks.example.com/" })).toContain("`ftp`");
    expect(problem({ ...base, url: "https://u:p@hooks.example.com/" })).toContain("`headers`");
    expect(problem({ ...base, url: "hooks.example.com" })).toContain("absolute");
    expect(problem({ ...base, headers: { "Webhook-Signature": "x" } })).toContain("set by Airlock");
    expect(problem({ ...base, topics: ["created", "nope"] })).toContain("topics.1");
    expect(problem({ ...base, retries: 3 })).toContain("retries");
    expect(problem({ ...base, timeoutMs: 10 })).toContain("timeoutMs");
  });
});

describe("verifyWebhook", () => {
  it("refuses a changed body and a missing header", async () => {
    await channel().deliver(message(), ctx());
    const got = receiver.received[0];
    if (got === undefined) throw new Error("nothing received");
    expect(() => verifyWebhook(NEW, got.headers, got.body)).not.toThrow();
    expect(() => verifyWebhook([OLD, NEW], got.headers, got.body)).not.toThrow();
    expect(() => verifyWebhook(NEW, got.headers, got.body.replace("deploy", "delete"))).toThrow(
      "No matching signature found",
    );
    const { "webhook-id": _id, ...noId } = got.headers;
    expect(() => verifyWebhook(NEW, noId, got.body)).toThrow("Missing required headers");
    expect(() =>
      verifyWebhook(NEW, new Headers(got.headers as Record<string, string>), got.body),
    ).not.toThrow();
    // An unset secret (`process.env.X ?? ""`) is a verification failure like any other.
    expect(() => verifyWebhook("", got.headers, got.body)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook([], got.headers, got.body)).toThrow(WebhookVerificationError);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2030-01-01T00:00:00Z");
  it("reads seconds and dates, refuses garbage", () => {
    expect(parseRetryAfter("0", now)).toBe(0);
    expect(parseRetryAfter(" 30 ", now)).toBe(30_000);
    expect(parseRetryAfter("Tue, 01 Jan 2030 00:00:10 GMT", now)).toBe(10_000);
    expect(parseRetryAfter("Mon, 31 Dec 2029 23:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("999999999", now)).toBe(24 * 60 * 60 * 1000);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter("-5", now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

/** A port nothing listens on: listen, note the port, close. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}
