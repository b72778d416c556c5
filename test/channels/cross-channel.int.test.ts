// One decision updates every channel. A server with a Slack channel (a fake Slack Web API), an email
// channel (a local SMTP server) and a signed webhook (a local receiver), all routed for the `ops`
// group: a Slack click decides, then the Slack message shows the outcome without buttons, the webhook
// fires once for the decision, and the email link answers "already decided"; and the inverse, an email
// link decides, the Slack message is updated, and a late Slack click is told who decided first.
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseChannelsConfig } from "../../src/channels/config.js";
import { createIdentityDirectory } from "../../src/channels/identities.js";
import { createChannels, type RunningChannels, startChannels } from "../../src/channels/setup.js";
import { ACTION } from "../../src/channels/slack/blocks.js";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { inboundDeps } from "../../src/server/channels.js";
import { type AirlockServer, createServer } from "../../src/server/server.js";
import { memoryTokenStore } from "../../src/server/tokens.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import {
  blockActions,
  type FakeSlack,
  interactionBody,
  signedHeaders,
  startFakeSlack,
} from "../helpers/fake-slack.js";
import { type SmtpSink, startSmtpSink } from "../helpers/smtp-sink.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";
import { tempDir } from "../helpers.js";

const SIGNING = "slack-signing-secret-for-cross-channel";
const HOOK_SECRET = `whsec_${Buffer.from("cross-channel-hook-secret-012345").toString("base64")}`;
const silent = pino({ level: "silent" });

let slack: FakeSlack;
let sink: SmtpSink;
let receiver: WebhookReceiver;
let airlock: Airlock;
let server: AirlockServer;
let running: RunningChannels;
let url = "";
const temp = tempDir("airlock-cross-");

beforeAll(async () => {
  slack = await startFakeSlack();
  sink = await startSmtpSink();
  receiver = await startWebhookReceiver({ hook: HOOK_SECRET });
  const config = parseChannelsConfig({
    channels: {
      "ops-slack": {
        type: "slack",
        botToken: "xoxb-test",
        signingSecret: SIGNING,
        channel: "#ops-approvals",
        apiUrl: slack.apiUrl,
      },
      "ops-mail": {
        type: "email",
        smtp: { host: "127.0.0.1", port: sink.port },
        from: "Airlock <airlock@example.com>",
        linkSecret: "a-link-secret-that-is-long-enough-0123456789",
        replyDomain: "reply.example.com",
        replyLocalPart: "airlock",
      },
      hook: {
        type: "webhook",
        url: `${receiver.url}/hook`,
        secret: HOOK_SECRET,
        allowPrivateTargets: true,
      },
    },
    identities: {
      alice: { slack: "U_ALICE", email: "alice@example.com", groups: ["ops"] },
      bob: { slack: "U_BOB", email: "bob@example.com", groups: ["ops"] },
    },
    routes: [{ match: { approver: "ops" }, channels: ["ops-slack", "ops-mail", "hook"] }],
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
    publicUrl: () => url,
  };
  server = createServer({
    airlock,
    auth: { tokens: memoryTokenStore() },
    logger: silent,
    channels: serverChannels,
  });
  url = (await server.listen({ port: 0, host: "127.0.0.1" })).url;
  running = await startChannels(channels, {
    store,
    inbound: inboundDeps(airlock, serverChannels, silent),
    logger: silent,
    publicUrl: () => url,
  });
});

afterAll(async () => {
  await server?.close();
  await running?.close();
  await airlock?.close();
  await slack?.close();
  await sink?.close();
  await receiver?.close();
  temp.cleanup();
});

async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function openGate(title: string) {
  const request = await airlock.request({
    title,
    action: "deploy.prod",
    requester: "agent",
    approvers: ["ops"],
  });
  const posted = await until("the Slack post", () =>
    slack
      .callsTo("chat.postMessage")
      .find((c) => JSON.stringify(c.args.metadata ?? {}).includes(request.id)),
  );
  // One mail per approver, each with links bound to its recipient.
  const opening = () =>
    sink.mails.filter(
      (m) => String(m.parsed.text).includes(request.id) && !/^Re:/.test(String(m.parsed.subject)),
    );
  const mails = await until("two mails", () => (opening().length >= 2 ? opening() : undefined));
  const ts = await until(
    "the posted message's ts",
    () => slack.messages.find((m) => JSON.stringify(m.metadata ?? {}).includes(request.id))?.ts,
  );
  expect(posted.args.channel).toBe("#ops-approvals");
  return { request, mails, where: { channel: "C0APPROVALS", ts } };
}

function approveLink(mails: ReturnType<typeof sink.mails.filter>, to: string): string {
  const mail = mails.find((m) => m.envelope.to.includes(to));
  const link = /- Approve[^:]*: (\S+)/.exec(String(mail?.parsed.text))?.[1];
  if (!link) throw new Error(`no approve link in the mail to ${to}`);
  return link;
}

/** The value the Approve button of the message Slack was sent for `request` carries (its id and the
 * digest of the view the message shows), as Slack hands it back with a click. */
function approveValue(request: ApprovalRequest): string {
  for (const call of slack.callsTo("chat.postMessage")) {
    const blocks = (call.args.blocks ?? []) as {
      elements?: { action_id?: string; value?: string }[];
    }[];
    for (const b of blocks) {
      for (const e of b.elements ?? []) {
        if (e.action_id === ACTION.approve && e.value?.startsWith(request.id)) return e.value;
      }
    }
  }
  throw new Error(`no Approve button was posted for ${request.id}`);
}

function click(user: string, request: ApprovalRequest, where: { channel: string; ts: string }) {
  const body = interactionBody(blockActions(user, ACTION.approve, approveValue(request), where));
  return fetch(`${url}/channels/ops-slack/interactions`, {
    method: "POST",
    headers: signedHeaders(body, { secret: SIGNING }),
    body,
  });
}

function hooksFor(requestId: string, type: string) {
  return receiver.received.filter((r) => {
    const v = r.verified.hook;
    return v?.ok && v.event.type === type && JSON.stringify(v.event.data).includes(requestId);
  });
}

describe("one decision updates every channel", () => {
  it("decided by a Slack click: Slack shows it, the webhook fires once, the email link says already decided", {
    timeout: 60_000,
  }, async () => {
    const { request, mails, where } = await openGate("Deploy 1.2.3");
    expect(mails).toHaveLength(2);
    expect((await click("U_ALICE", request, where)).status).toBe(200);
    const decided = await airlock.get(request.id);
    expect(decided.decision).toMatchObject({
      outcome: "approved",
      reviewer: "alice",
      channel: "slack",
    });

    const update = await until("the Slack update", () =>
      slack.callsTo("chat.update").find((c) => c.args.ts === where.ts),
    );
    expect(String(update.args.text)).toMatch(/Approved by alice \(slack\)/);
    expect(JSON.stringify(update.args.blocks)).not.toContain(ACTION.approve);
    await until("the decided webhook", () =>
      hooksFor(request.id, "request.decided").length > 0 ? true : undefined,
    );
    expect(hooksFor(request.id, "request.created")).toHaveLength(1);

    const link = approveLink(mails, "bob@example.com");
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/already decided by alice \(slack\)/);
    const post = await fetch(link, {
      method: "POST",
      body: new URLSearchParams({ token: link.split("/").pop() ?? "" }),
    });
    expect(await post.text()).toMatch(/already decided by alice \(slack\)/);
    expect((await airlock.get(request.id)).decisions).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 200)); // a second decided webhook would arrive now
    expect(hooksFor(request.id, "request.decided")).toHaveLength(1);
  });

  it("decided by an email link: the Slack message is updated and a late Slack click is told who decided", {
    timeout: 60_000,
  }, async () => {
    const { request, mails, where } = await openGate("Deploy 1.2.4");
    const link = approveLink(mails, "bob@example.com");
    // A GET (a mail scanner's prefetch) decides nothing.
    expect((await fetch(link)).status).toBe(200);
    expect((await airlock.get(request.id)).status).toBe("pending");
    const post = await fetch(link, {
      method: "POST",
      body: new URLSearchParams({ token: link.split("/").pop() ?? "" }),
    });
    expect(post.status).toBe(200);
    expect((await airlock.get(request.id)).decision).toMatchObject({
      outcome: "approved",
      reviewer: "bob",
      channel: "email",
    });
    const update = await until("the Slack update", () =>
      slack.callsTo("chat.update").find((c) => c.args.ts === where.ts),
    );
    expect(String(update.args.text)).toMatch(/Approved by bob \(email\)/);

    expect((await click("U_ALICE", request, where)).status).toBe(200);
    await until("the late clicker's notice", () =>
      slack
        .callsTo("chat.postEphemeral")
        .map((c) => String(c.args.text))
        .find((t) => /already decided by bob/.test(t)),
    );
    expect((await airlock.get(request.id)).decisions).toHaveLength(1);
    await until("the decided webhook", () =>
      hooksFor(request.id, "request.decided").length === 1 ? true : undefined,
    );
    // Everyone heard of the decision: the decided mails went out to both approvers.
    await until("the decision notices by mail", () =>
      sink.mails.filter(
        (m) => String(m.parsed.text).includes(request.id) && /^Re:/.test(String(m.parsed.subject)),
      ).length >= 2
        ? true
        : undefined,
    );
  });

  it("refusals of unsigned Slack calls reach the audit log at most 60 a minute, each reason kept short", {
    timeout: 30_000,
  }, async () => {
    const refused = async () =>
      (await airlock.audit({ limit: 10_000 })).filter(
        (e) => e.type === "notified" && e.data.refused === true && e.data.target === "ops-slack",
      );
    const before = (await refused()).length;
    for (let i = 0; i < 70; i++) {
      const res = await fetch(`${url}/channels/ops-slack/interactions`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "x-slack-signature": "v0=00",
          "x-slack-request-timestamp": String(Math.floor(Date.now() / 1000)),
        },
        body: `payload=${"x".repeat(2000)}`,
      });
      expect(res.status).toBe(401);
    }
    const after = await refused();
    expect(after.length - before).toBeLessThanOrEqual(60);
    expect(after.length - before).toBeGreaterThan(0);

    // A reason or claimed actor of the sender's making is cut short before the log and the audit.
    const deps = inboundDeps(
      airlock,
      { identities: createIdentityDirectory({}), publicUrl: url },
      silent,
    );
    await deps.refuse({
      channel: "email",
      target: "ops-mail",
      reason: `from ${"x".repeat(100_000)}@evil.test`,
      actor: "y".repeat(10_000),
    });
    const [long] = (await airlock.audit({ limit: 10_000 })).filter(
      (e) => e.data.refused === true && e.data.target === "ops-mail",
    );
    expect(String(long?.data.reason).length).toBe(500);
    expect(String(long?.data.claimedActor).length).toBe(200);
  });
});
