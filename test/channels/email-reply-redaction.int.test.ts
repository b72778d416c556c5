// The answers a mail reply gets (not understood, too late) go to a mail provider like every other
// mail: the request they name is redacted first (channels/outside.ts), as in the request's own mail.
import nodemailer from "nodemailer";
import pino from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createEmailChannel, type EmailChannel } from "../../src/channels/email/index.js";
import type { IdentityDirectory } from "../../src/channels/types.js";
import type { OutboxMessage } from "../../src/core/outbox.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { memoryStore } from "../../src/store/memory.js";
import { type SinkMail, type SmtpSink, startSmtpSink } from "../helpers/smtp-sink.js";

const SECRET = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
const identities: IdentityDirectory = {
  bySlackUser: () => undefined,
  byEmail: (a) =>
    a.trim().toLowerCase() === "alice@example.com" ? { name: "alice", groups: ["ops"] } : undefined,
  reviewersFor: () => [{ name: "alice", groups: ["ops"], email: "alice@example.com" }],
};

let sink: SmtpSink;
let airlock: Airlock;
let channel: EmailChannel;

beforeAll(async () => {
  sink = await startSmtpSink();
  airlock = await createAirlock({ store: memoryStore(), sweeper: false });
  channel = createEmailChannel(
    "mail",
    {
      type: "email",
      smtp: { host: "127.0.0.1", port: sink.port },
      from: "Airlock <airlock@example.com>",
      linkSecret: "s3cret-s3cret-s3cret-s3cret-s3cret-0123",
      replyDomain: "reply.example.com",
      replyLocalPart: "mail",
      inbound: { smtpPort: 0, host: "127.0.0.1" },
    },
    { logger: pino({ level: "silent" }), identities },
  );
  await channel.start?.({
    airlock,
    identities,
    logger: pino({ level: "silent" }),
    publicUrl: "http://airlock.test",
    now: () => Date.now(),
    refuse: async () => {},
  });
});

afterAll(async () => {
  await channel?.close?.();
  await airlock?.close();
  await sink?.close();
});

it("a reply that is not understood is answered without the request's secrets", async () => {
  const request = await airlock.request({
    title: `Push with token ${SECRET}`,
    requester: "dave",
    approvers: ["ops"],
  });
  const now = Date.now();
  const message: OutboxMessage = {
    id: "msg_1",
    target: "mail",
    topic: "created",
    requestId: request.id,
    payload: {},
    status: "pending",
    attempts: 1,
    availableAt: now,
    createdAt: now,
    updatedAt: now,
  };
  const sent = await channel.deliver(message, {
    request,
    previous: [],
    publicUrl: "http://airlock.test",
    now: () => Date.now(),
    signal: new AbortController().signal,
  });
  expect(sent.ok).toBe(true);
  const [mail] = (await sink.waitFor(1)) as [SinkMail];
  const to = mail.parsed.replyTo?.value[0]?.address ?? "";
  const client = nodemailer.createTransport({
    host: "127.0.0.1",
    port: channel.replyPort,
    secure: false,
    ignoreTLS: true,
  });
  try {
    await client.sendMail({
      from: "alice@example.com",
      to,
      envelope: { from: "alice@example.com", to: [to] },
      subject: "Re: push",
      text: "maybe later?\n",
    });
  } finally {
    client.close();
  }
  const [, help] = (await sink.waitFor(2)) as [SinkMail, SinkMail];
  expect(String(help.parsed.text)).toMatch(/could not read your reply/);
  expect(String(help.parsed.text)).toMatch(/Request: Push with token/);
  expect(help.raw.toString("utf8")).not.toContain(SECRET);
  expect(String(help.parsed.text)).not.toContain(SECRET);
  expect((await airlock.get(request.id)).status).toBe("pending");
});
