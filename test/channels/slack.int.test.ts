// The Slack channel against a fake Slack (Web API and Socket Mode on 127.0.0.1) and a real engine:
// what it posts and updates, how delivery failures read to the outbox, and every way an answer comes
// back (signed button clicks, the revision modal, thread replies, Socket Mode), with the refusals.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import type { Hono } from "hono";
import pino from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buttonValue } from "../../src/channels/slack/blocks.js";
import { createSlackChannel, slackOptionsSchema } from "../../src/channels/slack/index.js";
import type {
  ChannelDriver,
  DeliveryContext,
  IdentityDirectory,
  InboundDeps,
  Reviewer,
} from "../../src/channels/types.js";
import type { OutboxMessage, OutboxTopic } from "../../src/core/outbox.js";
import { viewDigestOf } from "../../src/core/review-view.js";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { createAirlock } from "../../src/engine/engine.js";
import type { Airlock } from "../../src/engine/types.js";
import { memoryStore } from "../../src/store/memory.js";
import {
  blockActions,
  FAKE_BOT_ID,
  FAKE_CHANNEL_ID,
  type FakeSlack,
  interactionBody,
  signedHeaders,
  startFakeSlack,
} from "../helpers/fake-slack.js";

/** What a button of the request's message carries: its id and its view's digest. */
const clickValue = (request: ApprovalRequest) => buttonValue(request.id, viewDigestOf(request));

const SECRET = "test-signing-secret";
const PUBLIC_URL = "http://airlock.test";
const logger = pino({ level: "silent" });

/** Slack users the configuration knows. U_NOBODY is not one of them. */
const PEOPLE: Record<string, Reviewer> = {
  U_ALICE: { name: "alice", groups: ["ops"] },
  U_BOB: { name: "bob", groups: ["ops"] },
  U_AGENT: { name: "agent", groups: ["ops"] },
};

/** A stub directory: identities are configuration, not something to fake a service for. */
const identities: IdentityDirectory = {
  bySlackUser: (id) => PEOPLE[id],
  byEmail: () => undefined,
  reviewersFor: (request) =>
    Object.entries(PEOPLE)
      .filter(([, r]) => r.name !== request.requester)
      .map(([slack, r]) => ({ ...r, slack })),
};

type Refusal = Parameters<InboundDeps["refuse"]>[0];

let fake: FakeSlack;
let engine: Airlock;
let driver: ChannelDriver;
let http: { url: string; close(): Promise<void> };
let refusals: Refusal[];

beforeAll(async () => {
  fake = await startFakeSlack();
  engine = await createAirlock({ store: memoryStore(), sweeper: false });
  refusals = [];
  driver = createSlackChannel(
    "ops",
    {
      type: "slack",
      botToken: "xoxb-test",
      signingSecret: SECRET,
      channel: "#ops-approvals",
      apiUrl: fake.apiUrl,
    },
    { logger, identities },
  );
  const routes = driver.routes?.(inboundDeps());
  if (!routes) throw new Error("the Slack channel has no routes");
  http = await serveApp(routes);
});

afterAll(async () => {
  await driver?.close?.();
  await http?.close();
  await engine?.close();
  await fake?.close();
});

beforeEach(() => {
  refusals.length = 0;
  fake.calls.length = 0;
});

function inboundDeps(): InboundDeps {
  return {
    airlock: engine,
    identities,
    logger,
    publicUrl: PUBLIC_URL,
    now: () => Date.now(),
    refuse: async (r) => {
      refusals.push(r);
    },
  };
}

async function serveApp(app: Hono): Promise<{ url: string; close(): Promise<void> }> {
  const server: ServerType = serve({ hostname: "127.0.0.1", port: 0, fetch: app.fetch });
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}

let outboxSeq = 0;

function outboxMessage(
  topic: OutboxTopic,
  requestId: string,
  receipt?: Record<string, unknown>,
): OutboxMessage {
  const now = Date.now();
  const m: OutboxMessage = {
    id: `msg-${++outboxSeq}`,
    target: "ops",
    topic,
    requestId,
    payload: {},
    status: receipt ? "delivered" : "pending",
    attempts: 1,
    availableAt: now,
    createdAt: now,
    updatedAt: now,
  };
  if (receipt) m.receipt = receipt;
  return m;
}

async function context(
  requestId: string,
  previous: OutboxMessage[] = [],
): Promise<DeliveryContext> {
  return {
    request: await engine.get(requestId),
    previous,
    publicUrl: PUBLIC_URL,
    now: () => Date.now(),
    signal: new AbortController().signal,
  };
}

async function newRequest(extra: Partial<Parameters<Airlock["request"]>[0]> = {}) {
  return engine.request({
    title: "Deploy <prod>",
    summary: "Ship *it* & <!channel> go",
    requester: "agent",
    approvers: ["ops"],
    risk: "high",
    timeoutMs: 3_600_000,
    items: ["migrate db", "restart api", "purge cache"],
    ...extra,
  });
}

/** Posts the request's `created` message; returns it delivered, with its receipt. */
async function posted(
  request: ApprovalRequest,
): Promise<OutboxMessage & { receipt: { channel: string; ts: string } }> {
  const message = outboxMessage("created", request.id);
  const result = await driver.deliver(message, await context(request.id));
  if (!result.ok || !result.receipt) throw new Error(`not posted: ${JSON.stringify(result)}`);
  return {
    ...message,
    status: "delivered",
    receipt: result.receipt as { channel: string; ts: string },
  };
}

async function interact(payload: Record<string, unknown>, headers: Record<string, string> = {}) {
  const body = interactionBody(payload);
  return fetch(`${http.url}/interactions`, {
    method: "POST",
    headers: { ...signedHeaders(body, { secret: SECRET }), ...headers },
    body,
  });
}

async function sendEvent(body: Record<string, unknown>) {
  const raw = JSON.stringify(body);
  return fetch(`${http.url}/events`, {
    method: "POST",
    headers: signedHeaders(raw, { secret: SECRET, contentType: "application/json" }),
    body: raw,
  });
}

function ephemeralTexts(): string[] {
  return fake.callsTo("chat.postEphemeral").map((c) => String(c.args.text));
}

type Block = { type: string; block_id?: string; elements?: Record<string, unknown>[] } & Record<
  string,
  unknown
>;

describe("options", () => {
  it("refuses unknown keys and socketMode without an app token", () => {
    const base = { type: "slack", botToken: "x", signingSecret: "y", channel: "#c" };
    expect(slackOptionsSchema.safeParse(base).success).toBe(true);
    expect(slackOptionsSchema.safeParse({ ...base, token: "z" }).success).toBe(false);
    expect(slackOptionsSchema.safeParse({ ...base, socketMode: true }).success).toBe(false);
    expect(() =>
      createSlackChannel("bad", { ...base, channel: "" } as never, { logger, identities }),
    ).toThrow(/channel/);
  });
});

describe("delivery", () => {
  it("posts a created request with blocks, ticked item checkboxes, buttons and metadata", async () => {
    const request = await newRequest();
    const message = outboxMessage("created", request.id);
    const result = await driver.deliver(message, await context(request.id));
    expect(result.ok).toBe(true);
    const [call] = fake.callsTo("chat.postMessage");
    expect(call?.token).toBe("xoxb-test");
    expect(call?.args.channel).toBe("#ops-approvals");
    expect(result).toMatchObject({ ok: true, receipt: { channel: FAKE_CHANNEL_ID } });
    expect(call?.args.metadata).toEqual({
      event_type: "airlock_request",
      event_payload: { request_id: request.id, view_digest: viewDigestOf(request) },
    });
    const blocks = call?.args.blocks as Block[];
    expect(blocks[0]).toMatchObject({ type: "header", text: { text: "Deploy <prod>" } });
    const text = JSON.stringify(blocks);
    expect(text).toContain("Ship *it* &amp; &lt;!channel&gt; go"); // escaped: no @channel ping
    expect(text).toContain("*Risk:* high");
    expect(text).toContain("*Requested by:* agent");
    const items = blocks.find((b) => b.block_id === "airlock_items");
    const boxes = items?.elements?.[0] as {
      type: string;
      options: unknown[];
      initial_options: unknown[];
    };
    expect(boxes.type).toBe("checkboxes");
    expect(boxes.options).toHaveLength(3);
    expect(boxes.initial_options).toEqual(boxes.options);
    const buttons = blocks.find((b) => b.block_id === "airlock_decision")?.elements ?? [];
    expect(buttons.map((b) => b.action_id)).toEqual([
      "airlock_approve",
      "airlock_reject",
      "airlock_revise",
      "airlock_edit",
    ]);
    // Each button carries the request and the digest of the view the message shows.
    for (const b of buttons.slice(0, 3)) expect(b.value).toBe(clickValue(request));
    expect(buttons[3]?.url).toBe(`${PUBLIC_URL}/requests/${request.id}`);
  });

  it("leaves out checkboxes and the Edit button when the request does not allow them", async () => {
    const request = await newRequest({ allowed: ["approve", "reject"] });
    await posted(request);
    const blocks = fake.callsTo("chat.postMessage")[0]?.args.blocks as Block[];
    expect(blocks.some((b) => b.block_id === "airlock_items")).toBe(false);
    expect(JSON.stringify(blocks)).toContain("1. migrate db");
    const buttons = blocks.find((b) => b.block_id === "airlock_decision")?.elements ?? [];
    expect(buttons.map((b) => b.action_id)).toEqual(["airlock_approve", "airlock_reject"]);
  });

  it("posts the end of a request nobody was shown as a new message (timed out)", async () => {
    const request = await newRequest({ timeoutMs: 1 });
    await new Promise((r) => setTimeout(r, 5));
    await engine.sweep();
    const result = await driver.deliver(
      outboxMessage("timed_out", request.id),
      await context(request.id),
    );
    expect(result.ok).toBe(true);
    expect(fake.callsTo("chat.update")).toHaveLength(0);
    const [call] = fake.callsTo("chat.postMessage");
    expect(String(call?.args.text)).toMatch(/Timed out at \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
  });

  it("posts the outcome anew when the request message was deleted, and posts a decided request without buttons", async () => {
    const request = await newRequest();
    const created = await posted(request);
    await engine.decide(request.id, {
      outcome: "rejected",
      reviewer: "alice",
      groups: ["ops"],
      channel: "web",
    });
    fake.failNext("chat.update", { error: "message_not_found" });
    const result = await driver.deliver(
      outboxMessage("decided", request.id),
      await context(request.id, [created]),
    );
    expect(result.ok).toBe(true);
    const [, again] = fake.callsTo("chat.postMessage");
    expect(String(again?.args.text)).toMatch(/Rejected by alice \(web\) at /);

    // A created message delivered after the decision shows the outcome, not buttons.
    await driver.deliver(outboxMessage("created", request.id), await context(request.id));
    const late = fake.callsTo("chat.postMessage")[2];
    expect(JSON.stringify(late?.args.blocks)).not.toContain("airlock_approve");
    expect(String(late?.args.text)).toContain("Rejected by alice");
  });

  it("answers escalations and reminders in the thread of the request message", async () => {
    const request = await newRequest();
    const created = await posted(request);
    const result = await driver.deliver(
      outboxMessage("reminder", request.id),
      await context(request.id, [created]),
    );
    expect(result).toMatchObject({ ok: true, receipt: { thread_ts: created.receipt.ts } });
    const reply = fake.callsTo("chat.postMessage")[1];
    expect(reply?.args.thread_ts).toBe(created.receipt.ts);
    expect(reply?.args.channel).toBe(FAKE_CHANNEL_ID);
    expect(String(reply?.args.text)).toContain("<@U_ALICE>");
  });

  it("reads Slack's failures as retry with a delay, retry, or give up", async () => {
    const request = await newRequest();
    const ctx = await context(request.id);
    fake.failNext("chat.postMessage", { rateLimitedSeconds: 7 });
    expect(await driver.deliver(outboxMessage("created", request.id), ctx)).toMatchObject({
      ok: false,
      retry: true,
      retryAfterMs: 7000,
    });
    for (const error of ["invalid_auth", "channel_not_found", "not_in_channel"]) {
      fake.failNext("chat.postMessage", { error });
      const result = await driver.deliver(outboxMessage("created", request.id), ctx);
      expect(result).toMatchObject({ ok: false, retry: false });
      expect(result.ok === false && result.error).toContain(error);
    }
    fake.failNext("chat.postMessage", { error: "internal_error" });
    expect(await driver.deliver(outboxMessage("created", request.id), ctx)).toMatchObject({
      ok: false,
      retry: true,
    });
  });

  it("reads a network failure as retry", async () => {
    const closed = createServer();
    closed.listen(0, "127.0.0.1");
    await once(closed, "listening");
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const offline = createSlackChannel(
      "offline",
      {
        type: "slack",
        botToken: "xoxb-test",
        signingSecret: SECRET,
        channel: "C1",
        apiUrl: `http://127.0.0.1:${port}/api/`,
      },
      { logger, identities },
    );
    const request = await newRequest();
    const result = await offline.deliver(
      outboxMessage("created", request.id),
      await context(request.id),
    );
    expect(result).toMatchObject({ ok: false, retry: true });
  });
});

describe("interactions", () => {
  it("records a signed Approve click by a mapped approver, then updates the message without buttons", async () => {
    const request = await newRequest();
    const created = await posted(request);
    const res = await interact(
      blockActions("U_ALICE", "airlock_approve", clickValue(request), created.receipt, [0, 1, 2]),
    );
    expect(res.status).toBe(200);
    const decided = await engine.get(request.id);
    expect(decided.status).toBe("approved");
    expect(decided.decision).toMatchObject({
      reviewer: "alice",
      channel: "slack",
      method: "approve_all",
    });
    expect(decided.decision?.key).toMatch(/^slack:/);

    const result = await driver.deliver(
      outboxMessage("decided", request.id),
      await context(request.id, [created]),
    );
    expect(result).toMatchObject({ ok: true, receipt: created.receipt });
    const [update] = fake.callsTo("chat.update");
    expect(update?.args).toMatchObject({
      channel: created.receipt.channel,
      ts: created.receipt.ts,
    });
    expect(String(update?.args.text)).toMatch(/Approved by alice \(slack\) at /);
    const blocks = update?.args.blocks as Block[];
    expect(blocks.some((b) => b.type === "actions")).toBe(false);
    const shown = fake.messages.find((m) => m.ts === created.receipt.ts);
    expect(JSON.stringify(shown?.blocks)).not.toContain("airlock_approve");
  });

  it("approves only the ticked items when fewer than all are ticked", async () => {
    const request = await newRequest();
    const created = await posted(request);
    await interact(
      blockActions("U_BOB", "airlock_approve", clickValue(request), created.receipt, [0, 2]),
    );
    const decided = await engine.get(request.id);
    expect(decided.decision).toMatchObject({ method: "select", reviewer: "bob" });
    expect(decided.decision?.selected).toEqual([request.items[0]?.id, request.items[2]?.id]);
  });

  it("with every item ticked, selects them all where the request allows selecting but not approving", async () => {
    const request = await newRequest({ allowed: ["select", "reject"] });
    const created = await posted(request);
    await interact(
      blockActions("U_BOB", "airlock_approve", clickValue(request), created.receipt, [0, 1, 2]),
    );
    const decided = await engine.get(request.id);
    expect(decided.decision).toMatchObject({ outcome: "approved", method: "select" });
    expect(decided.decision?.selected).toEqual(request.items.map((i) => i.id));
  });

  it("records Reject", async () => {
    const request = await newRequest();
    const created = await posted(request);
    await interact(blockActions("U_ALICE", "airlock_reject", request.id, created.receipt));
    expect((await engine.get(request.id)).decision).toMatchObject({
      outcome: "rejected",
      method: "reject",
      channel: "slack",
    });
  });

  it("refuses a forged signature with 401, audited, deciding nothing", async () => {
    const request = await newRequest();
    const created = await posted(request);
    const body = interactionBody(
      blockActions("U_ALICE", "airlock_approve", clickValue(request), created.receipt),
    );
    const res = await fetch(`${http.url}/interactions`, {
      method: "POST",
      headers: signedHeaders(body, { secret: "not-the-secret" }),
      body,
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(((await res.json()) as { detail: string }).detail).toMatch(/signature/i);
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ channel: "slack", target: "ops" });
    expect((await engine.get(request.id)).status).toBe("pending");
  });

  it("answers a signed body without a JSON payload with a 400 problem", async () => {
    const body = "payload=%7Bnot-json";
    const res = await fetch(`${http.url}/interactions`, {
      method: "POST",
      headers: signedHeaders(body, { secret: SECRET }),
      body,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/payload/);
  });

  it("refuses a replayed request whose timestamp is more than 5 minutes old", async () => {
    const request = await newRequest();
    const created = await posted(request);
    const body = interactionBody(
      blockActions("U_ALICE", "airlock_approve", clickValue(request), created.receipt),
    );
    const res = await fetch(`${http.url}/interactions`, {
      method: "POST",
      headers: signedHeaders(body, { secret: SECRET, atMs: Date.now() - 6 * 60_000 }),
      body,
    });
    expect(res.status).toBe(401);
    expect(refusals[0]?.reason).toMatch(/5 minutes/);
    expect((await engine.get(request.id)).status).toBe("pending");
  });

  it("refuses the requester approving their own request", async () => {
    const request = await newRequest();
    const created = await posted(request);
    const res = await interact(
      blockActions("U_AGENT", "airlock_approve", clickValue(request), created.receipt),
    );
    expect(res.status).toBe(200);
    expect((await engine.get(request.id)).status).toBe("pending");
    expect(ephemeralTexts().join("\n")).toMatch(/nobody approves their own request/);
    expect(fake.callsTo("chat.postEphemeral")[0]?.args).toMatchObject({
      channel: created.receipt.channel,
      user: "U_AGENT",
    });
    expect(refusals).toEqual([
      expect.objectContaining({ channel: "slack", requestId: request.id, actor: "agent" }),
    ]);
  });

  it("refuses a Slack user the configuration does not know", async () => {
    const request = await newRequest();
    const created = await posted(request);
    await interact(
      blockActions("U_NOBODY", "airlock_approve", clickValue(request), created.receipt),
    );
    expect((await engine.get(request.id)).status).toBe("pending");
    expect(ephemeralTexts().join("\n")).toMatch(/does not know your Slack account/);
    expect(refusals).toEqual([
      expect.objectContaining({ requestId: request.id, actor: "slack:U_NOBODY" }),
    ]);
  });

  it("tells a late clicker who decided first", async () => {
    const request = await newRequest();
    const created = await posted(request);
    await interact(blockActions("U_ALICE", "airlock_reject", request.id, created.receipt));
    await interact(blockActions("U_BOB", "airlock_approve", clickValue(request), created.receipt));
    expect((await engine.get(request.id)).decision?.reviewer).toBe("alice");
    expect(ephemeralTexts().join("\n")).toMatch(/already decided by alice/);
  });

  it("counts a retried click once (same action_ts), towards a quorum", async () => {
    const request = await newRequest({ quorum: 2 });
    const created = await posted(request);
    const click = blockActions("U_ALICE", "airlock_approve", clickValue(request), created.receipt);
    await interact(click);
    await interact(click, { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" });
    const now = await engine.get(request.id);
    expect(now.status).toBe("pending");
    expect(now.decisions).toHaveLength(1);
    expect(ephemeralTexts()).toEqual([
      "Your approval is recorded: 1 of 2 needed.",
      "Your approval is recorded: 1 of 2 needed.",
    ]);
  });

  it("opens a modal on Revise, and its submission asks for the revision with the comment", async () => {
    const request = await newRequest();
    const created = await posted(request);
    const click = blockActions("U_BOB", "airlock_revise", clickValue(request), created.receipt);
    expect((await interact(click)).status).toBe(200);
    const [open] = fake.callsTo("views.open");
    expect(open?.args.trigger_id).toBe(click.trigger_id);
    const view = open?.args.view as { callback_id: string; private_metadata: string };
    expect(view.callback_id).toBe("airlock_revise");
    expect((await engine.get(request.id)).status).toBe("pending");

    const submission = (user: string, comment: string) => ({
      type: "view_submission",
      user: { id: user },
      trigger_id: `submit-${user}`,
      view: {
        id: "V1",
        callback_id: view.callback_id,
        private_metadata: view.private_metadata,
        state: {
          values: {
            airlock_revise_comment: { comment: { type: "plain_text_input", value: comment } },
          },
        },
      },
    });
    // The requester cannot send it back either: the modal shows why.
    const refused = await interact(submission("U_AGENT", "mine"));
    expect(refused.status).toBe(200);
    expect(await refused.json()).toMatchObject({
      response_action: "errors",
      errors: { airlock_revise_comment: expect.stringMatching(/own request/) },
    });

    const res = await interact(submission("U_BOB", "Use staging first"));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
    expect((await engine.get(request.id)).decision).toMatchObject({
      outcome: "revise",
      method: "revise",
      comment: "Use staging first",
      reviewer: "bob",
      channel: "slack",
      // The form kept the digest of the view the message showed.
      viewDigest: viewDigestOf(request),
    });
  });
});

describe("events", () => {
  it("answers the URL check, signed", async () => {
    const res = await sendEvent({ type: "url_verification", challenge: "abc123" });
    expect(await res.json()).toEqual({ challenge: "abc123" });
    const unsigned = await fetch(`${http.url}/events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "url_verification", challenge: "x" }),
    });
    expect(unsigned.status).toBe(401);
    expect(refusals).toHaveLength(1);
  });

  function threadMessage(
    user: string,
    text: string,
    threadTs: string,
    extra: Record<string, unknown> = {},
  ) {
    return {
      type: "event_callback",
      event: {
        type: "message",
        channel: FAKE_CHANNEL_ID,
        user,
        text,
        ts: `${Date.now() / 1000}`,
        thread_ts: threadTs,
        ...extra,
      },
    };
  }

  it("decides on a thread reply `APPROVE ALL` under the request message", async () => {
    const request = await newRequest();
    const created = await posted(request);
    await sendEvent(threadMessage("U_BOB", "looks fine to me", created.receipt.ts));
    await sendEvent(threadMessage("U_ALICE", "APPROVE ALL", created.receipt.ts, { bot_id: "B1" }));
    expect((await engine.get(request.id)).status).toBe("pending");
    expect(ephemeralTexts().join("\n")).toMatch(/not a reply I understand/);

    const res = await sendEvent(threadMessage("U_BOB", "APPROVE ALL", created.receipt.ts));
    expect(res.status).toBe(200);
    const [history] = fake.callsTo("conversations.history");
    expect(history?.args).toMatchObject({
      channel: FAKE_CHANNEL_ID,
      latest: created.receipt.ts,
      limit: "1",
    });
    expect((await engine.get(request.id)).decision).toMatchObject({
      outcome: "approved",
      method: "approve_all",
      reviewer: "bob",
      channel: "slack",
    });
  });

  it("decides nothing from a thread under a look-alike message another app or a user posted", async () => {
    const request = await newRequest();
    const created = await posted(request);
    const original = fake.messages.find((m) => m.ts === created.receipt.ts);
    expect(original?.bot_id).toBe(FAKE_BOT_ID);
    // Airlock's metadata, naming the real request, on messages Airlock's bot did not post.
    const lookAlikes = [
      { bot_id: "B_OTHER_APP", ts: "1800000000.000100" },
      { user: "U_MALLORY", ts: "1800000001.000100" },
    ];
    for (const poster of lookAlikes) {
      fake.messages.push({
        channel: FAKE_CHANNEL_ID,
        text: "Rotate the logs? Reply APPROVE ALL",
        ...(original?.metadata ? { metadata: original.metadata } : {}),
        ...poster,
      });
      const res = await sendEvent(threadMessage("U_ALICE", "APPROVE ALL", poster.ts));
      expect(res.status).toBe(200);
    }
    expect((await engine.get(request.id)).status).toBe("pending");
    // The same reply under Airlock's own message decides.
    await sendEvent(threadMessage("U_ALICE", "APPROVE ALL", created.receipt.ts));
    expect((await engine.get(request.id)).decision).toMatchObject({ reviewer: "alice" });
  });

  it("selects items from a thread reply and refuses an unmapped user's command", async () => {
    const request = await newRequest();
    const created = await posted(request);
    await sendEvent(threadMessage("U_NOBODY", "APPROVE ALL", created.receipt.ts));
    expect((await engine.get(request.id)).status).toBe("pending");
    expect(refusals).toEqual([
      expect.objectContaining({ actor: "slack:U_NOBODY", requestId: request.id }),
    ]);
    await sendEvent(threadMessage("U_ALICE", "SELECT 2", created.receipt.ts));
    expect((await engine.get(request.id)).decision).toMatchObject({
      method: "select",
      selected: [request.items[1]?.id],
    });
  });
});

describe("Socket Mode", () => {
  it("receives a click over the WebSocket, acknowledges it and decides", async () => {
    const socketDriver = createSlackChannel(
      "ops-socket",
      {
        type: "slack",
        botToken: "xoxb-test",
        signingSecret: SECRET,
        channel: "#ops-approvals",
        apiUrl: fake.apiUrl,
        appToken: "xapp-test",
        socketMode: true,
      },
      { logger, identities },
    );
    try {
      await socketDriver.start?.(inboundDeps());
      const [open] = fake.callsTo("apps.connections.open");
      expect(open?.token).toBe("xapp-test");
      const request = await newRequest();
      const created = await posted(request);
      const ack = await fake.sendEnvelope(
        "interactive",
        blockActions("U_ALICE", "airlock_approve", clickValue(request), created.receipt),
      );
      expect(ack).toEqual({});
      expect((await engine.get(request.id)).decision).toMatchObject({
        reviewer: "alice",
        channel: "slack",
      });

      // A modal's refusal travels back in the acknowledgement.
      const modal = await fake.sendEnvelope("interactive", {
        type: "view_submission",
        user: { id: "U_BOB" },
        trigger_id: "socket-submit",
        view: {
          id: "V2",
          callback_id: "airlock_revise",
          private_metadata: JSON.stringify({ requestId: request.id }),
          state: { values: {} },
        },
      });
      expect(modal).toMatchObject({
        response_action: "errors",
        errors: { airlock_revise_comment: expect.stringMatching(/already decided by alice/) },
      });

      const second = await newRequest();
      const parent = await posted(second);
      await fake.sendEnvelope("events_api", {
        type: "event_callback",
        event: {
          type: "message",
          channel: FAKE_CHANNEL_ID,
          user: "U_BOB",
          text: "reject not now",
          ts: `${Date.now() / 1000}`,
          thread_ts: parent.receipt.ts,
        },
      });
      const done = await engine.waitFor(second.id, { timeoutMs: 10_000 });
      expect(done.decision).toMatchObject({
        outcome: "rejected",
        comment: "not now",
        reviewer: "bob",
      });
    } finally {
      await socketDriver.close?.();
    }
  });
});
