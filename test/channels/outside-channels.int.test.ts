// What reaches third parties, through the real paths: a server on SQLite with a Slack channel (the
// fake Slack Web API), an email channel (a local SMTP sink) and a signed webhook (a local receiver),
// the outbox dispatcher delivering. An agent's request quotes secrets in its title, summary,
// preview, args, items and metadata: none of them reaches Slack, the mail provider or the webhook's
// receiver (issue 31, finding 6). And the buttons and links say what the one label rule says (issue
// 31, finding 4): the verb first, never an inverting label, the approve verb on the primary button.
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redactString } from "../../src/audit/redact.js";
import { parseChannelsConfig } from "../../src/channels/config.js";
import { createChannels, type RunningChannels, startChannels } from "../../src/channels/setup.js";
import { ACTION } from "../../src/channels/slack/blocks.js";
import type { RequestInput } from "../../src/core/schemas.js";
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

const SIGNING = "slack-signing-secret-for-outside-channels";
const HOOK_SECRET = `whsec_${Buffer.from("outside-channels-hook-secret-0123").toString("base64")}`;
const silent = pino({ level: "silent" });

const GITHUB = `ghp_${"A1b2C3d4E5".repeat(3)}x9Y8z7`;
const AWS = "AKIAIOSFODNN7EXAMPL3";

/** Secrets an agent may quote in free text, each as it would be written. */
const FREE_TEXT: { secret: string; written: string }[] = [
  { secret: "hunter2", written: "password: hunter2" },
  { secret: "s3cr3t-db-pass", written: "postgres://app:s3cr3t-db-pass@db.internal/prod" },
  {
    secret: "eyJhbGciOiJIUzI1NiJ9.e30.ZRrHA1JJJW8opsbCGfG_HACGpVUMN_a9IV7pAx_Zmeo",
    written:
      "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.ZRrHA1JJJW8opsbCGfG_HACGpVUMN_a9IV7pAx_Zmeo",
  },
  { secret: GITHUB, written: GITHUB },
  { secret: AWS, written: AWS },
];
/** Secrets under sensitive keys of args and metadata: redacted by key. */
const BY_KEY = ["args-hunter3", "sk_live_argsKey0123456789", "meta-secret-9876"];

const SECRETS = [...FREE_TEXT.map((c) => c.secret), ...BY_KEY];

let slack: FakeSlack;
let sink: SmtpSink;
let receiver: WebhookReceiver;
let airlock: Airlock;
let server: AirlockServer;
let running: RunningChannels;
let url = "";
const temp = tempDir("airlock-outside-");

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

type Button = { action_id: string; style?: string; text: { text: string } };

/** Opens a gate for `ops` and waits until Slack, the mail sink and the webhook receiver have it. */
async function openGate(input: Partial<RequestInput>) {
  const request = await airlock.request({
    title: "Rotate credentials",
    action: "ops.rotate",
    requester: "agent",
    approvers: ["ops"],
    ...input,
  });
  const post = await until("the Slack post", () =>
    slack
      .callsTo("chat.postMessage")
      .find((c) => JSON.stringify(c.args.metadata ?? {}).includes(request.id)),
  );
  const mail = await until("the mail", () =>
    sink.mails.find(
      (m) => m.envelope.to.includes("alice@example.com") && m.parsed.text?.includes(request.id),
    ),
  );
  const hook = await until("the webhook", () =>
    receiver.received.find((r) => r.body.includes(request.id)),
  );
  const blocks = post.args.blocks as { block_id?: string; elements?: Button[] }[];
  const buttons = blocks.find((b) => b.block_id === "airlock_decision")?.elements ?? [];
  const ts = await until(
    "the posted message's ts",
    () => slack.messages.find((m) => JSON.stringify(m.metadata ?? {}).includes(request.id))?.ts,
  );
  return { request, post, mail, hook, buttons, where: { channel: "C0APPROVALS", ts } };
}

describe("secrets in a request reach no outside channel", () => {
  it("the one redaction hides every canary written in free text", () => {
    for (const c of FREE_TEXT) expect(redactString(`note ${c.written}`)).not.toContain(c.secret);
  });

  it("Slack (message and revision modal), the mail (subject, text, HTML, raw) and the webhook body", async () => {
    const text = FREE_TEXT.map((c) => c.written).join("\n");
    const { request, post, mail, hook, where } = await openGate({
      title: `Rotate: password: hunter2 ${GITHUB}`,
      summary: `The agent found these:\n${text}`,
      preview: `--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-AWS_KEY=old\n+${text.split("\n").join("\n+")}`,
      args: { host: "db.internal", password: "args-hunter3", note: text },
      items: [
        { id: "i1", label: `key ${AWS}`, detail: "password: hunter2" },
        { id: "i2", label: "restart api" },
      ],
      metadata: { client_secret: "meta-secret-9876", api_key: "sk_live_argsKey0123456789" },
    });
    // Something was shown: the request's own words, with the secrets replaced.
    expect(JSON.stringify(post.args)).toContain("Rotate");
    expect(mail.parsed.text).toContain("The agent found these");

    const outside: [string, string][] = [
      ["Slack chat.postMessage", JSON.stringify(post.args)],
      ["mail subject", String(mail.parsed.subject)],
      ["mail text", String(mail.parsed.text)],
      ["mail HTML", String(mail.parsed.html)],
      ["mail raw", mail.raw.toString("utf8")],
      ["webhook body", hook.body],
    ];

    // The revision modal opens in Slack with the request's title.
    const body = interactionBody(blockActions("U_ALICE", ACTION.revise, request.id, where));
    const res = await fetch(`${url}/channels/ops-slack/interactions`, {
      method: "POST",
      headers: signedHeaders(body, { secret: SIGNING }),
      body,
    });
    expect(res.status).toBe(200);
    const modal = await until("the revision modal", () => slack.callsTo("views.open")[0]);
    outside.push(["Slack views.open", JSON.stringify(modal.args)]);

    // Decided: the Slack update, the notice mail and the decision's webhook carry the comment.
    await airlock.decide(request.id, {
      outcome: "rejected",
      reviewer: "alice",
      groups: ["ops"],
      comment: "no: password: hunter2 is in the diff",
    });
    const update = await until("the Slack update", () =>
      slack.callsTo("chat.update").find((c) => c.args.ts === where.ts),
    );
    const notice = await until("the notice mail", () =>
      sink.mails.find(
        (m) => /^Re:/.test(String(m.parsed.subject)) && m.parsed.text?.includes("Rejected"),
      ),
    );
    const decided = await until("the decision's webhook", () =>
      receiver.received.find(
        (r) => r.body.includes(request.id) && r.body.includes("request.decided"),
      ),
    );
    outside.push(
      ["Slack chat.update", JSON.stringify(update.args)],
      ["notice mail", `${notice.parsed.subject}\n${notice.parsed.text}\n${notice.parsed.html}`],
      ["decision webhook", decided.body],
    );

    const leaks = outside.flatMap(([where, body]) =>
      SECRETS.filter((s) => body.includes(s)).map((s) => `${where}: ${s}`),
    );
    expect(leaks).toEqual([]);
  });
});

describe("buttons and links say what the one label rule says", () => {
  it("an inverting pair: Slack and the mail show the bare verbs, approve on the primary button", async () => {
    const { buttons, mail } = await openGate({
      title: "Pay invoice 7",
      labels: { approve: "No, stop", reject: "Yes, proceed" },
    });
    const approve = buttons.find((b) => b.action_id === ACTION.approve);
    const reject = buttons.find((b) => b.action_id === ACTION.reject);
    expect(approve).toMatchObject({ style: "primary", text: { text: "Approve" } });
    expect(reject).toMatchObject({ style: "danger", text: { text: "Reject" } });
    const text = String(mail.parsed.text);
    expect(text).toMatch(/^- Approve: http/m);
    expect(text).toMatch(/^- Reject: http/m);
    expect(`${text}${mail.parsed.html}`).not.toMatch(/No, stop|Yes, proceed/);
  });

  it("the issue's other pairs, written in hitlTool's metadata keys and disguised, are dropped too", async () => {
    const { buttons, mail } = await openGate({
      title: "Transfer funds",
      metadata: { approveLabel: "Ｃａｎｃｅｌ the transfer", rejectLabel: "Send\u200b it" },
    });
    expect(buttons.find((b) => b.action_id === ACTION.approve)?.text.text).toBe("Approve");
    expect(buttons.find((b) => b.action_id === ACTION.reject)?.text.text).toBe("Reject");
    expect(String(mail.parsed.text)).not.toMatch(/transfer:|Send/);
  });

  it("a label that fits its button follows the verb", async () => {
    const { buttons, mail } = await openGate({
      title: "Pay invoice 8",
      labels: { approve: "Confirm payment", reject: "Don't pay" },
    });
    expect(buttons.find((b) => b.action_id === ACTION.approve)).toMatchObject({
      style: "primary",
      text: { text: "Approve — Confirm payment" },
    });
    expect(buttons.find((b) => b.action_id === ACTION.reject)?.text.text).toBe(
      "Reject — Don't pay",
    );
    const text = String(mail.parsed.text);
    expect(text).toMatch(/^- Approve — Confirm payment: http/m);
    expect(text).toMatch(/^- Reject — Don't pay: http/m);
  });
});
