// A mail reply decides as the reviewer its From names only when the sender is proven: over a real
// SMTP session to the channel's own listener on loopback, a From of a reviewer with a foreign
// envelope sender (MAIL FROM) decides nothing and is refused and logged; a matching one decides.
// With `inbound.authservId` (the inbound server adds Authentication-Results), a missing or failing
// DKIM/DMARC result refuses, and dkim=pass for the From domain or dmarc=pass is accepted.
import nodemailer from "nodemailer";
import pino from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEmailChannel, type EmailChannel } from "../../src/channels/email/index.js";
import type { IdentityDirectory, InboundDeps } from "../../src/channels/types.js";
import type { OutboxMessage } from "../../src/core/outbox.js";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { memoryStore } from "../../src/store/memory.js";
import { type SinkMail, type SmtpSink, startSmtpSink } from "../helpers/smtp-sink.js";

const PUBLIC_URL = "http://airlock.test";
const MX = "mx.example.com";

const identities: IdentityDirectory = {
  bySlackUser: () => undefined,
  byEmail: (address) =>
    address.trim().toLowerCase() === "alice@example.com"
      ? { name: "alice", groups: ["ops"] }
      : undefined,
  reviewersFor: () => [{ name: "alice", groups: ["ops"], email: "alice@example.com" }],
};

let sink: SmtpSink;
let airlock: Airlock;
let plain: EmailChannel;
let checked: EmailChannel;
let refusals: string[];
let seq = 0;
const logger = pino({ level: "silent" });

function channelNamed(name: string, authservId?: string): EmailChannel {
  return createEmailChannel(
    name,
    {
      type: "email",
      smtp: { host: "127.0.0.1", port: sink.port },
      from: "Airlock <airlock@example.com>",
      linkSecret: "s3cret-s3cret-s3cret-s3cret-s3cret-0123",
      replyDomain: "reply.example.com",
      replyLocalPart: name,
      inbound: { smtpPort: 0, host: "127.0.0.1", ...(authservId ? { authservId } : {}) },
    },
    { logger, identities },
  );
}

beforeAll(async () => {
  sink = await startSmtpSink();
  airlock = await createAirlock({ store: memoryStore(), sweeper: false });
  const deps: InboundDeps = {
    airlock,
    identities,
    logger,
    publicUrl: PUBLIC_URL,
    now: () => Date.now(),
    refuse: async (r) => {
      refusals.push(r.reason);
    },
  };
  plain = channelNamed("plain");
  checked = channelNamed("checked", MX);
  await plain.start?.(deps);
  await checked.start?.(deps);
});

afterAll(async () => {
  await plain?.close?.();
  await checked?.close?.();
  await airlock?.close();
  await sink?.close();
});

beforeEach(() => {
  sink.mails.length = 0;
  refusals = [];
});

/** A new request, mailed through `channel`; returns it with alice's reply address. */
async function mailed(channel: EmailChannel): Promise<{ request: ApprovalRequest; to: string }> {
  sink.mails.length = 0;
  refusals = [];
  const request = await airlock.request({
    title: "Deploy v2",
    requester: "dave",
    approvers: ["ops"],
  });
  const now = Date.now();
  seq += 1;
  const message: OutboxMessage = {
    id: `msg_${seq}`,
    target: channel.name,
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
    publicUrl: PUBLIC_URL,
    now: () => Date.now(),
    signal: new AbortController().signal,
  });
  expect(sent.ok).toBe(true);
  const [mail] = (await sink.waitFor(1)) as [SinkMail];
  return { request, to: mail.parsed.replyTo?.value[0]?.address ?? "" };
}

/** One SMTP session to the channel's listener; it answers once the reply was handled. */
async function reply(
  channel: EmailChannel,
  o: { to: string; mailFrom: string; headers?: Record<string, string> },
): Promise<void> {
  const client = nodemailer.createTransport({
    host: "127.0.0.1",
    port: channel.replyPort,
    secure: false,
    ignoreTLS: true,
  });
  try {
    await client.sendMail({
      from: "Alice <alice@example.com>",
      to: o.to,
      envelope: { from: o.mailFrom, to: [o.to] },
      subject: "Re: Deploy v2",
      text: "APPROVE ALL\n",
      ...(o.headers ? { headers: o.headers } : {}),
    });
  } finally {
    client.close();
  }
}

describe("mail replies: the envelope sender must be the From address", () => {
  it("a reviewer's From with a foreign MAIL FROM decides nothing and is refused", async () => {
    const { request, to } = await mailed(plain);
    await reply(plain, { to, mailFrom: "mallory@evil.test" });
    expect((await airlock.get(request.id)).status).toBe("pending");
    expect(refusals).toEqual([
      expect.stringMatching(
        /^email reply from alice@example\.com refused: its envelope sender \(MAIL FROM\) is "mallory@evil\.test", not the From address/,
      ),
    ]);
    // Nothing was mailed back to the From address the mail did not prove.
    expect(sink.mails).toHaveLength(1);
  });

  it("a matching MAIL FROM still decides", async () => {
    const { request, to } = await mailed(plain);
    await reply(plain, { to, mailFrom: "Alice@Example.com" });
    expect((await airlock.get(request.id)).decision).toMatchObject({
      outcome: "approved",
      reviewer: "alice",
      channel: "email",
    });
    expect(refusals).toEqual([]);
  });
});

describe("mail replies with Authentication-Results from the inbound server", () => {
  const refusedWith = async (headers: Record<string, string> | undefined, pattern: RegExp) => {
    const { request, to } = await mailed(checked);
    await reply(checked, { to, mailFrom: "alice@example.com", ...(headers ? { headers } : {}) });
    expect((await airlock.get(request.id)).status).toBe("pending");
    expect(refusals).toEqual([expect.stringMatching(pattern)]);
  };
  const accepted = async (headers: Record<string, string>) => {
    const { request, to } = await mailed(checked);
    await reply(checked, { to, mailFrom: "alice@example.com", headers });
    expect(refusals).toEqual([]);
    expect((await airlock.get(request.id)).decision).toMatchObject({ reviewer: "alice" });
  };

  it("refuses a reply without them", async () => {
    await refusedWith(undefined, /no Authentication-Results from mx\.example\.com/);
  });

  it("refuses dkim=fail, and a pass only from another server's header", async () => {
    await refusedWith(
      { "Authentication-Results": `${MX}; dkim=fail header.d=example.com; dmarc=fail` },
      /neither dmarc=pass nor dkim=pass for example\.com \(dkim=fail \(example\.com\), dmarc=fail\)/,
    );
    await refusedWith(
      { "Authentication-Results": "mx.evil.test; dkim=pass header.d=example.com; dmarc=pass" },
      /no Authentication-Results from mx\.example\.com/,
    );
  });

  it("refuses dkim=pass for another domain than the From address's", async () => {
    await refusedWith(
      { "Authentication-Results": `${MX}; dkim=pass header.d=evil.test; dmarc=none` },
      /neither dmarc=pass nor dkim=pass for example\.com/,
    );
  });

  it("accepts dkim=pass for the From domain, and dmarc=pass", async () => {
    await accepted({
      "Authentication-Results": `${MX}; dkim=pass (2048-bit key) header.d=example.com header.s=s1; spf=pass`,
    });
    await accepted({
      "Authentication-Results": `${MX} 1; dkim=fail; dmarc=pass (p=reject) header.from=example.com`,
    });
  });
});
