// The email channel end to end on this machine: a real engine (memory store), the driver sending
// through a local SMTP sink, its link pages served in-process (app.request), and replies arriving
// over real SMTP at its own listener (a nodemailer client) or through the inbound webhook.
import nodemailer from "nodemailer";
import pino from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ANSWERS_PER_ADDRESS_PER_HOUR } from "../../src/channels/email/inbound.js";
import { createEmailChannel, type EmailChannel } from "../../src/channels/email/index.js";
import { signLink } from "../../src/channels/email/tokens.js";
import type { IdentityDirectory, InboundDeps, Reviewer } from "../../src/channels/types.js";
import { AirlockError } from "../../src/core/errors.js";
import type { OutboxMessage, OutboxTopic } from "../../src/core/outbox.js";
import { viewDigestOf } from "../../src/core/review-view.js";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { memoryStore } from "../../src/store/memory.js";
import { type SinkMail, type SmtpSink, startSmtpSink } from "../helpers/smtp-sink.js";

const PUBLIC_URL = "http://airlock.test";
const SECRET = "s3cret-s3cret-s3cret-s3cret-s3cret-0123";
const WEBHOOK_SECRET = "inbound-bearer-0123456789";

const PEOPLE: Array<Reviewer & { email: string }> = [
  { name: "alice", groups: ["ops"], email: "alice@example.com" },
  { name: "bob", groups: ["ops"], email: "Bob@Example.com" },
  { name: "carol", groups: ["finance"], email: "carol@example.com" },
  { name: "dave", groups: ["ops"], email: "dave@example.com" },
];

/** The configuration's people (a stub of the directory the server builds from the config). */
const identities: IdentityDirectory = {
  bySlackUser: () => undefined,
  byEmail: (address) => {
    const p = PEOPLE.find((x) => x.email.toLowerCase() === address.trim().toLowerCase());
    return p && { name: p.name, groups: p.groups };
  },
  reviewersFor: (request) =>
    PEOPLE.filter(
      (p) =>
        p.name !== request.requester &&
        (request.approvers.length === 0 ||
          request.approvers.includes(p.name) ||
          p.groups.some((g) => request.approvers.includes(g))),
    ),
};

let sink: SmtpSink;
let airlock: Airlock;
let channel: EmailChannel;
let deps: InboundDeps;
let refusals: Array<{ reason: string; requestId?: string; actor?: string }>;
let clockOffsetMs = 0;
let seq = 0;
const logger = pino({ level: "silent" });

beforeAll(async () => {
  sink = await startSmtpSink();
  airlock = await createAirlock({ store: memoryStore(), sweeper: false });
  channel = createEmailChannel(
    "mail",
    {
      type: "email",
      smtp: { host: "127.0.0.1", port: sink.port },
      from: "Airlock <airlock@example.com>",
      linkSecret: SECRET,
      replyDomain: "reply.example.com",
      replyLocalPart: "airlock",
      inbound: { smtpPort: 0, webhookSecret: WEBHOOK_SECRET },
      // carol is no approver of ops requests, dave asks for them: both get the mail anyway.
      to: ["carol@example.com", "dave@example.com"],
    },
    { logger, identities },
  );
  deps = {
    airlock,
    identities,
    logger,
    publicUrl: PUBLIC_URL,
    now: () => Date.now() + clockOffsetMs,
    refuse: async (r) => {
      refusals.push(r);
      await airlock.record({
        type: "notified",
        ...(r.requestId ? { requestId: r.requestId } : {}),
        // As the server's refuse does: the claimed actor is data, cut short (it is the sender's).
        actor: "system",
        data: {
          refused: r.reason,
          channel: r.channel,
          target: r.target,
          ...(r.actor ? { claimedActor: r.actor.slice(0, 200) } : {}),
        },
      });
    },
  };
  await channel.start?.(deps);
});

afterAll(async () => {
  await channel?.close?.();
  await airlock?.close();
  await sink?.close();
});

beforeEach(() => {
  sink.mails.length = 0;
  sink.answer = undefined;
  refusals = [];
  clockOffsetMs = 0;
});

afterEach(() => {
  clockOffsetMs = 0;
});

function message(topic: OutboxTopic, request?: ApprovalRequest): OutboxMessage {
  const now = Date.now();
  seq += 1;
  return {
    id: `msg_${seq}`,
    target: "mail",
    topic,
    ...(request ? { requestId: request.id } : {}),
    payload: {},
    status: "pending",
    attempts: 1,
    availableAt: now,
    createdAt: now,
    updatedAt: now,
  };
}

async function deliver(topic: OutboxTopic, request?: ApprovalRequest) {
  return channel.deliver(message(topic, request), {
    request,
    previous: [],
    publicUrl: PUBLIC_URL,
    now: () => Date.now(),
    signal: new AbortController().signal,
  });
}

async function newRequest(extra: Partial<Parameters<Airlock["request"]>[0]> = {}) {
  return airlock.request({
    title: "Run 3 extra search queries",
    requester: "dave",
    approvers: ["ops"],
    items: ["solar panel recycling", "battery second life", "grid storage costs"],
    ...extra,
  });
}

/** Delivers the created mail and returns each recipient's mail. */
async function mailsFor(request: ApprovalRequest): Promise<Map<string, SinkMail>> {
  const result = await deliver("created", request);
  expect(result.ok).toBe(true);
  const mails = await sink.waitFor(4);
  return new Map(mails.map((m) => [m.envelope.to[0] ?? "", m]));
}

function linksOf(mail: SinkMail): { approve: string; skip: string } {
  const text = mail.parsed.text ?? "";
  const approve = /Approve all \d+: (\S+)/.exec(text)?.[1];
  const skip = /Skip \(approve none\): (\S+)/.exec(text)?.[1];
  if (!approve || !skip) throw new Error(`no links in:\n${text}`);
  return { approve, skip };
}

function path(url: string): string {
  expect(url.startsWith(`${PUBLIC_URL}/channels/mail/`)).toBe(true);
  return url.slice(`${PUBLIC_URL}/channels/mail`.length);
}

async function open(url: string) {
  return channel.routes?.(deps).request(path(url)) as Promise<Response>;
}

async function confirm(url: string, form: Record<string, string> = {}) {
  const token = url.slice(url.lastIndexOf("/") + 1);
  return channel.routes?.(deps).request(path(url), {
    method: "POST",
    body: new URLSearchParams({ token, ...form }),
  }) as Promise<Response>;
}

describe("delivery", () => {
  it("sends one mail per recipient, with the text format, HTML, links bound to the recipient and the inbox link", async () => {
    const request = await newRequest();
    const byRecipient = await mailsFor(request);
    expect([...byRecipient.keys()].sort()).toEqual([
      "alice@example.com",
      "bob@example.com",
      "carol@example.com",
      "dave@example.com",
    ]);
    const alice = byRecipient.get("alice@example.com") as SinkMail;
    const bob = byRecipient.get("bob@example.com") as SinkMail;
    expect(alice.parsed.subject).toBe("[Airlock] Approval needed: Run 3 extra search queries");
    expect(alice.parsed.text).toContain("1. solar panel recycling");
    expect(alice.parsed.text).toContain("Reply SELECT 1,3");
    expect(alice.parsed.text).toContain(`${PUBLIC_URL}/requests/${request.id}`);
    expect(alice.parsed.html).toContain("solar panel recycling");
    expect(alice.parsed.html).toContain(`href="${PUBLIC_URL}/channels/mail/l/`);
    expect(alice.parsed.headers.get("auto-submitted")).toBe("auto-generated");
    // Each recipient has links and a reply address of their own.
    expect(linksOf(alice).approve).not.toBe(linksOf(bob).approve);
    const aliceReply = alice.parsed.replyTo?.value[0]?.address ?? "";
    expect(aliceReply).toMatch(/^airlock\+[a-z0-9]{46}@reply\.example\.com$/);
    expect(aliceReply).not.toBe(bob.parsed.replyTo?.value[0]?.address);
    // carol (no approver) and dave (the requester) are fixed recipients: a copy to read, no links.
    for (const reader of ["carol@example.com", "dave@example.com"]) {
      const mail = byRecipient.get(reader) as SinkMail;
      expect(mail.parsed.text).toContain("For your information");
      expect(mail.parsed.text).not.toContain("/channels/mail/l/");
      expect(mail.parsed.replyTo).toBeUndefined();
    }
  });

  it("always offers the skip link, even where `allowed` does not list reject", async () => {
    const request = await newRequest({ allowed: ["approve"] });
    const alice = (await mailsFor(request)).get("alice@example.com") as SinkMail;
    expect(linksOf(alice).skip).toContain("/channels/mail/l/");
  });

  it("escapes what the request says in the HTML part", async () => {
    const request = await newRequest({
      title: "<script>alert(1)</script> & co",
      items: ["<b>x</b>"],
    });
    const byRecipient = await mailsFor(request);
    const html = byRecipient.get("alice@example.com")?.parsed.html || "";
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<b>x</b>");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &amp; co");
  });

  it("sends a short notice in the same thread once decided", async () => {
    const request = await newRequest();
    await mailsFor(request);
    sink.mails.length = 0;
    const decided = await airlock.decide(request.id, {
      outcome: "approved",
      method: "approve_all",
      reviewer: "alice",
      groups: ["ops"],
      channel: "web",
    });
    expect((await deliver("decided", decided)).ok).toBe(true);
    const mails = await sink.waitFor(4);
    const notice = mails.find((m) => m.envelope.to[0] === "bob@example.com") as SinkMail;
    expect(notice.parsed.subject).toBe("Re: [Airlock] Approval needed: Run 3 extra search queries");
    expect(notice.parsed.text).toMatch(/^Approved by alice \(web\) at \d{4}-\d\d-\d\dT/m);
    expect(notice.parsed.inReplyTo).toBeTruthy();
  });

  it("reminds with links again, sends nothing with links once decided, and a test message to the fixed recipients", async () => {
    const request = await newRequest();
    expect((await deliver("reminder", request)).ok).toBe(true);
    const reminders = await sink.waitFor(4);
    const alice = reminders.find((m) => m.envelope.to[0] === "alice@example.com") as SinkMail;
    expect(alice.parsed.subject).toBe(
      "[Airlock] Reminder, approval needed: Run 3 extra search queries",
    );
    expect(linksOf(alice).approve).toContain("/channels/mail/l/");
    sink.mails.length = 0;
    const decided = await airlock.decide(request.id, {
      outcome: "rejected",
      method: "skip",
      reviewer: "bob",
      groups: ["ops"],
      channel: "slack",
    });
    expect(await deliver("created", decided)).toMatchObject({
      ok: true,
      detail: expect.stringContaining("no longer pending"),
    });
    expect(await deliver("test")).toMatchObject({
      ok: true,
      receipt: { messageIds: expect.any(Object) },
    });
    const tests = await sink.waitFor(2);
    expect(tests.map((m) => m.envelope.to[0]).sort()).toEqual([
      "carol@example.com",
      "dave@example.com",
    ]);
    expect(tests[0]?.parsed.subject).toBe("[Airlock] Test message");
  });

  it("classifies SMTP failures: 5xx is final, 4xx and a refused connection are retried", async () => {
    const request = await newRequest();
    sink.answer = () => 550;
    const permanent = await deliver("created", request);
    expect(permanent).toMatchObject({ ok: false, retry: false });
    sink.answer = () => 451;
    const temporary = await deliver("created", request);
    expect(temporary).toMatchObject({ ok: false, retry: true });
    sink.answer = (to) => (to === "carol@example.com" ? 550 : undefined);
    const partial = await deliver("created", request);
    expect(partial.ok).toBe(true);
    if (partial.ok) expect(partial.detail).toContain("carol@example.com");

    const closed = await startSmtpSink();
    const port = closed.port;
    await closed.close();
    const offline = createEmailChannel(
      "offline",
      {
        type: "email",
        smtp: { host: "127.0.0.1", port },
        from: "airlock@example.com",
        linkSecret: SECRET,
        replyDomain: "reply.example.com",
        replyLocalPart: "airlock",
      },
      { logger, identities },
    );
    try {
      const result = await offline.deliver(message("created", request), {
        request,
        previous: [],
        publicUrl: PUBLIC_URL,
        now: () => Date.now(),
        signal: new AbortController().signal,
      });
      expect(result).toMatchObject({ ok: false, retry: true });
    } finally {
      await offline.close?.();
    }
  });

  it("refuses options that are not right, naming the option and never echoing the secret", () => {
    const make = (linkSecret: string) =>
      createEmailChannel(
        "bad",
        {
          type: "email",
          smtp: { host: "127.0.0.1", port: 25 },
          from: "a@example.com",
          linkSecret,
          replyDomain: "reply.example.com",
          replyLocalPart: "airlock",
        },
        { logger, identities },
      );
    expect(() => make("too-short-secret")).toThrow(/linkSecret/);
    expect(() => make("too-short-secret")).not.toThrow(/too-short-secret/);
  });
});

describe("one-click links", () => {
  it("GET shows a confirmation page with a POST form and decides nothing", async () => {
    const request = await newRequest();
    const { approve } = linksOf((await mailsFor(request)).get("alice@example.com") as SinkMail);
    const res = await open(approve);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    const body = await res.text();
    expect(body).toContain('<form method="post">');
    expect(body).toContain("approve all 3 items as alice");
    expect(body).not.toContain("<script");
    expect((await airlock.get(request.id)).status).toBe("pending");
  });

  it("POST decides as the mapped reviewer on the email channel; a second POST says already decided", async () => {
    const request = await newRequest();
    const { approve } = linksOf((await mailsFor(request)).get("bob@example.com") as SinkMail);
    const res = await confirm(approve);
    expect(res.status).toBe(200);
    const after = await airlock.get(request.id);
    expect(after.status).toBe("approved");
    expect(after.decision).toMatchObject({
      reviewer: "bob",
      channel: "email",
      method: "approve_all",
    });
    const again = await confirm(approve);
    expect(again.status).toBe(200);
    expect(await again.text()).toContain("already decided by bob (email)");
    expect((await airlock.get(request.id)).decisions).toHaveLength(1);
  });

  it("another mail's link on a decided request says who decided", async () => {
    const request = await newRequest();
    const mails = await mailsFor(request);
    await confirm(linksOf(mails.get("alice@example.com") as SinkMail).skip, { comment: "not now" });
    const decided = await airlock.get(request.id);
    expect(decided.decision).toMatchObject({
      outcome: "rejected",
      method: "skip",
      comment: "not now",
    });
    const res = await confirm(linksOf(mails.get("bob@example.com") as SinkMail).approve);
    expect(res.status).toBe(409);
    expect(await res.text()).toContain("already decided by alice (email)");
  });

  it("a mail's links decide once: the other outcome's link is refused and audited", async () => {
    const request = await newRequest({ quorum: 2 });
    const links = linksOf((await mailsFor(request)).get("alice@example.com") as SinkMail);
    expect((await confirm(links.approve)).status).toBe(200);
    const res = await confirm(links.skip);
    expect(res.status).toBe(409);
    expect(await res.text()).toContain("A mail&#39;s links decide once");
    expect(refusals.map((r) => r.reason)).toEqual([
      expect.stringContaining("reused for another outcome"),
    ]);
    expect((await airlock.get(request.id)).decisions).toHaveLength(1);
  });

  it("a storage fault while a link opens is a 503 page with Retry-After, and the token stays out of the log", async () => {
    const request = await newRequest();
    const { approve } = linksOf((await mailsFor(request)).get("alice@example.com") as SinkMail);
    const lines: string[] = [];
    const failing: InboundDeps = {
      ...deps,
      airlock: {
        ...airlock,
        get: async () => {
          throw new AirlockError("store_unavailable", "disk I/O error");
        },
      },
    };
    // A channel binds the first deps it is given: one channel per case.
    const logged = () =>
      createEmailChannel(
        "mail",
        {
          type: "email",
          smtp: { host: "127.0.0.1", port: sink.port },
          from: "airlock@example.com",
          linkSecret: SECRET,
          replyDomain: "reply.example.com",
          replyLocalPart: "airlock",
        },
        {
          logger: pino({ level: "debug" }, { write: (l: string) => void lines.push(l) }),
          identities,
        },
      );
    const res = await logged().routes?.(failing).request(path(approve));
    expect(res?.status).toBe(503);
    expect(res?.headers.get("retry-after")).toBe("2");
    expect(await res?.text()).toContain("storage is unavailable");
    // Any other failure is a 500 page, logged with the route, never the link's token.
    const broken: InboundDeps = {
      ...failing,
      airlock: {
        ...airlock,
        get: async () => {
          throw new Error("boom");
        },
      },
    };
    expect((await logged().routes?.(broken).request(path(approve)))?.status).toBe(500);
    const token = approve.slice(approve.lastIndexOf("/") + 1);
    expect(lines.join("\n")).toContain("/l/[token]");
    expect(lines.join("\n")).not.toContain(token);
  });

  it("refuses an expired link with a 410 page and audits it", async () => {
    const request = await newRequest();
    const { approve } = linksOf((await mailsFor(request)).get("alice@example.com") as SinkMail);
    clockOffsetMs = 25 * 3600 * 1000;
    expect((await open(approve)).status).toBe(410);
    const res = await confirm(approve);
    expect(res.status).toBe(410);
    expect(await res.text()).toContain("expired");
    expect(refusals).toEqual([
      expect.objectContaining({ reason: "email link expired", requestId: request.id }),
    ]);
    clockOffsetMs = 0;
    expect((await airlock.get(request.id)).status).toBe("pending");
  });

  it("refuses a forged signature or a changed outcome with a 403 page and audits it", async () => {
    const request = await newRequest();
    const { approve, skip } = linksOf(
      (await mailsFor(request)).get("alice@example.com") as SinkMail,
    );
    const forged = `${approve.slice(0, -2)}${approve.endsWith("AA") ? "BB" : "AA"}`;
    expect((await confirm(forged)).status).toBe(403);
    // The skip link's claims with the approve link's signature.
    const swapped = `${skip.slice(0, skip.lastIndexOf("."))}${approve.slice(approve.lastIndexOf("."))}`;
    expect((await confirm(swapped)).status).toBe(403);
    expect(refusals.map((r) => r.reason)).toEqual(["email link forged", "email link forged"]);
    const audit = await airlock.audit({});
    expect(audit.some((e) => e.type === "notified" && e.data.refused === "email link forged")).toBe(
      true,
    );
    expect((await airlock.get(request.id)).status).toBe("pending");
  });

  it("the state machine refuses a non-approver's link and the requester's own, audited", async () => {
    const request = await newRequest();
    // Neither gets links by mail; these are signed with the secret as if they had (bound to the
    // view such a mail would show).
    const linkFor = (to: string) =>
      `${PUBLIC_URL}/channels/mail/l/${signLink(SECRET, {
        r: request.id,
        to,
        o: "approved",
        m: "approve_all",
        exp: Math.floor(Date.now() / 1000) + 3600,
        n: `nonce-${to}`,
        v: viewDigestOf(request),
      })}`;
    const page = await open(linkFor("carol@example.com"));
    expect(page.status).toBe(403);
    expect(await page.text()).toContain("carol may not decide this request");
    expect((await confirm(linkFor("carol@example.com"))).status).toBe(403);
    expect((await confirm(linkFor("dave@example.com"))).status).toBe(403);
    expect(refusals.map((r) => r.actor)).toEqual(["carol@example.com", "dave@example.com"]);
    expect(refusals[1]?.reason).toContain("refused by the state machine");
    expect((await airlock.get(request.id)).status).toBe("pending");
  });

  it("refuses a link for an address that is no configured person", async () => {
    const request = await newRequest();
    const url = `${PUBLIC_URL}/channels/mail/l/${signLink(SECRET, {
      r: request.id,
      to: "stranger@example.com",
      o: "approved",
      m: "approve_all",
      exp: Math.floor(Date.now() / 1000) + 3600,
      n: "nonce-stranger",
    })}`;
    expect((await confirm(url)).status).toBe(403);
    expect(refusals).toEqual([expect.objectContaining({ actor: "stranger@example.com" })]);
    expect((await airlock.get(request.id)).status).toBe("pending");
  });
});

describe("replies", () => {
  async function replyOverSmtp(options: {
    from: string;
    to: string;
    text: string;
    headers?: Record<string, string>;
  }): Promise<void> {
    const client = nodemailer.createTransport({
      host: "127.0.0.1",
      port: channel.replyPort,
      secure: false,
      ignoreTLS: true,
    });
    try {
      await client.sendMail({ subject: "Re: approval", ...options });
    } finally {
      client.close();
    }
  }

  function replyAddressOf(mail: SinkMail): string {
    return mail.parsed.replyTo?.value[0]?.address ?? "";
  }

  it("APPROVE ALL over SMTP decides, with the quoted mail below ignored", async () => {
    const request = await newRequest();
    const alice = (await mailsFor(request)).get("alice@example.com") as SinkMail;
    await replyOverSmtp({
      from: "Alice <alice@example.com>",
      to: replyAddressOf(alice),
      text: "approve all\n\nOn Mon, 23 Nov 2026, Airlock <airlock@example.com> wrote:\n> SKIP\n",
    });
    const after = await airlock.get(request.id);
    expect(after.decision).toMatchObject({
      outcome: "approved",
      method: "approve_all",
      reviewer: "alice",
      channel: "email",
    });
  });

  it("SELECT 1,3 selects the first and third items", async () => {
    const request = await newRequest();
    const bob = (await mailsFor(request)).get("bob@example.com") as SinkMail;
    await replyOverSmtp({ from: "bob@example.com", to: replyAddressOf(bob), text: "SELECT 1,3\n" });
    const after = await airlock.get(request.id);
    expect(after.decision).toMatchObject({ method: "select", reviewer: "bob" });
    expect(after.decision?.selected).toEqual([request.items[0]?.id, request.items[2]?.id]);
  });

  it("the SMTP listener takes mail only for this channel's reply addresses", async () => {
    const error = await replyOverSmtp({
      from: "alice@example.com",
      to: "postmaster@reply.example.com",
      text: "APPROVE ALL",
    }).catch((err: unknown) => err);
    expect(error).toMatchObject({ responseCode: 550 });
  });

  it("ignores auto-replies", async () => {
    const request = await newRequest();
    const alice = (await mailsFor(request)).get("alice@example.com") as SinkMail;
    sink.mails.length = 0;
    const result = await channel.handleInboundMail(
      [
        "From: alice@example.com",
        `To: ${replyAddressOf(alice)}`,
        "Subject: Out of office",
        "Auto-Submitted: auto-replied",
        "",
        "APPROVE ALL",
      ].join("\r\n"),
    );
    expect(result.status).toBe("ignored");
    await replyOverSmtp({
      from: "alice@example.com",
      to: replyAddressOf(alice),
      text: "APPROVE ALL",
      headers: { Precedence: "bulk" },
    });
    expect((await airlock.get(request.id)).status).toBe("pending");
    expect(sink.mails).toHaveLength(0);
  });

  it("refuses and audits a spoofed From, and a reply address of another recipient; mails no unproven sender", async () => {
    const request = await newRequest();
    const mails = await mailsFor(request);
    sink.mails.length = 0;
    await replyOverSmtp({
      from: "mallory@evil.test",
      to: replyAddressOf(mails.get("alice@example.com") as SinkMail),
      text: "APPROVE ALL",
    });
    // bob writes to alice's reply address.
    await replyOverSmtp({
      from: "bob@example.com",
      to: replyAddressOf(mails.get("alice@example.com") as SinkMail),
      text: "APPROVE ALL",
    });
    expect(refusals).toHaveLength(2);
    expect(refusals[0]?.reason).toContain("mallory@evil.test");
    expect(refusals[1]?.reason).toContain("not issued to that sender");
    expect((await airlock.get(request.id)).status).toBe("pending");
    // mallory's From is not proven: nothing goes to it. bob is a configured reviewer whose address
    // the mail proved: a reply address that does not verify may be one of his own for a view that
    // changed since (the two cannot be told apart), so he is told it was not recorded, and where
    // to look. The answer carries no reply address.
    const [told] = await sink.waitFor(1);
    expect(sink.mails).toHaveLength(1);
    expect(told?.envelope.to).toEqual(["bob@example.com"]);
    expect(told?.parsed.text).toContain("Your reply was not recorded");
    expect(told?.parsed.text).toContain(`${PUBLIC_URL}/requests/${request.id}`);
    expect(told?.parsed.replyTo).toBeUndefined();
  });

  it("answers a reply it cannot read with the grammar, and decides nothing", async () => {
    const request = await newRequest();
    const alice = (await mailsFor(request)).get("alice@example.com") as SinkMail;
    sink.mails.length = 0;
    await replyOverSmtp({
      from: "alice@example.com",
      to: replyAddressOf(alice),
      text: "yes please, go",
    });
    const [help] = await sink.waitFor(1);
    expect(help?.envelope.to).toEqual(["alice@example.com"]);
    expect(help?.parsed.subject).toBe("Re: approval");
    expect(help?.parsed.text).toContain("I could not read your reply");
    expect(help?.parsed.text).toContain("APPROVE ALL");
    expect(help?.parsed.text).toContain("SELECT 1,3");
    expect(help?.parsed.headers.get("auto-submitted")).toBe("auto-replied");
    expect((await airlock.get(request.id)).status).toBe("pending");
  });

  it("refuses a reply to an expired reply address, audited, and tells its owner where to decide", async () => {
    const request = await newRequest();
    const alice = (await mailsFor(request)).get("alice@example.com") as SinkMail;
    expect(alice.parsed.text).toContain(
      "Links and the reply address are yours alone and expire at",
    );
    sink.mails.length = 0;
    // The mail's links live a day (the default linkTtlSeconds); so does its reply address.
    clockOffsetMs = 24 * 3600 * 1000 + 60_000;
    await replyOverSmtp({
      from: "alice@example.com",
      to: replyAddressOf(alice),
      text: "APPROVE ALL",
    });
    const [notice] = await sink.waitFor(1);
    expect(notice?.envelope.to).toEqual(["alice@example.com"]);
    expect(notice?.parsed.text).toContain("this reply address has expired");
    expect(notice?.parsed.text).toContain(`${PUBLIC_URL}/requests/${request.id}`);
    expect(refusals).toEqual([
      expect.objectContaining({
        requestId: request.id,
        actor: "alice@example.com",
        reason: "email reply from alice@example.com to an expired reply address",
      }),
    ]);
    const audit = await airlock.audit({ requestId: request.id });
    expect(
      audit.some((e) => e.type === "notified" && String(e.data.refused).includes("expired")),
    ).toBe(true);
    expect((await airlock.get(request.id)).status).toBe("pending");

    // Before the expiry the same reply decides. The token keeps its expiry in whole minutes
    // (rounded down), so "before" is taken a few minutes early: a minute early failed when the
    // mail was sent late in its minute.
    clockOffsetMs = 24 * 3600 * 1000 - 3 * 60_000;
    await replyOverSmtp({
      from: "alice@example.com",
      to: replyAddressOf(alice),
      text: "APPROVE ALL",
    });
    expect((await airlock.get(request.id)).decision).toMatchObject({ reviewer: "alice" });

    // Once decided, an expired reply hears so; a stranger writing to the address hears nothing.
    clockOffsetMs = 24 * 3600 * 1000 + 60_000;
    sink.mails.length = 0;
    await replyOverSmtp({ from: "mallory@evil.test", to: replyAddressOf(alice), text: "SKIP" });
    await replyOverSmtp({ from: "alice@example.com", to: replyAddressOf(alice), text: "SKIP" });
    const [late] = await sink.waitFor(1);
    expect(late?.envelope.to).toEqual(["alice@example.com"]);
    expect(late?.parsed.text).toContain("no longer pending");
    expect(sink.mails).toHaveLength(1);
    expect((await airlock.get(request.id)).status).toBe("approved");
  });

  it("answers one address at most ANSWERS_PER_ADDRESS_PER_HOUR times an hour", async () => {
    const request = await newRequest();
    const alice = (await mailsFor(request)).get("alice@example.com") as SinkMail;
    sink.mails.length = 0;
    // A week on (the channel's count of answers is shared by this file's tests; a later test's
    // clock, set back, starts a new hour), each reply to the expired address is answered, until
    // the address had its hour's answers.
    clockOffsetMs = 7 * 24 * 3600 * 1000;
    for (let i = 0; i < ANSWERS_PER_ADDRESS_PER_HOUR + 2; i++) {
      await replyOverSmtp({ from: "alice@example.com", to: replyAddressOf(alice), text: "SKIP" });
    }
    await sink.waitFor(ANSWERS_PER_ADDRESS_PER_HOUR);
    expect(refusals).toHaveLength(ANSWERS_PER_ADDRESS_PER_HOUR + 2);
    expect(sink.mails).toHaveLength(ANSWERS_PER_ADDRESS_PER_HOUR);
    expect(sink.mails[0]?.parsed.text).toContain("this reply address has expired");
    // An hour later, answers come again.
    clockOffsetMs += 3_600_000;
    await replyOverSmtp({ from: "alice@example.com", to: replyAddressOf(alice), text: "SKIP" });
    await sink.waitFor(ANSWERS_PER_ADDRESS_PER_HOUR + 1);
    expect(sink.mails).toHaveLength(ANSWERS_PER_ADDRESS_PER_HOUR + 1);
    expect((await airlock.get(request.id)).status).toBe("pending");
  });

  it("REJECT with a reason and REVISE with a comment are recorded", async () => {
    const a = await newRequest();
    const b = await newRequest();
    const aliceA = (await mailsFor(a)).get("alice@example.com") as SinkMail;
    sink.mails.length = 0;
    const aliceB = (await mailsFor(b)).get("alice@example.com") as SinkMail;
    await replyOverSmtp({
      from: "alice@example.com",
      to: replyAddressOf(aliceA),
      text: "REJECT too costly",
    });
    await replyOverSmtp({
      from: "alice@example.com",
      to: replyAddressOf(aliceB),
      text: "REVISE add wind power",
    });
    expect((await airlock.get(a.id)).decision).toMatchObject({
      outcome: "rejected",
      method: "reject",
      comment: "too costly",
    });
    expect((await airlock.get(b.id)).decision).toMatchObject({
      outcome: "revise",
      comment: "add wind power",
    });
  });

  it("the inbound webhook needs its bearer token and message/rfc822, then decides", async () => {
    const request = await newRequest();
    const alice = (await mailsFor(request)).get("alice@example.com") as SinkMail;
    const raw = [
      "From: alice@example.com",
      `To: ${replyAddressOf(alice)}`,
      "Subject: Re: approval",
      "Message-ID: <webhook-1@example.com>",
      "",
      "SKIP",
    ].join("\r\n");
    const app = channel.routes?.(deps);
    if (!app) throw new Error("no routes");
    const post = (headers: Record<string, string>) =>
      app.request("/inbound", { method: "POST", headers, body: raw });
    const none = await post({ "content-type": "message/rfc822" });
    expect(none.status).toBe(401);
    expect(none.headers.get("content-type")).toContain("application/problem+json");
    expect(
      (await post({ "content-type": "message/rfc822", authorization: "Bearer wrong-wrong-wrong" }))
        .status,
    ).toBe(401);
    expect(
      (await post({ "content-type": "text/plain", authorization: `Bearer ${WEBHOOK_SECRET}` }))
        .status,
    ).toBe(415);
    expect((await airlock.get(request.id)).status).toBe("pending");
    const ok = await post({
      "content-type": "message/rfc822",
      authorization: `Bearer ${WEBHOOK_SECRET}`,
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: "decided", reviewer: "alice" });
    expect((await airlock.get(request.id)).decision).toMatchObject({
      method: "skip",
      channel: "email",
    });
  });

  it("a mail the parser cannot read is ignored, and a sender's long address is quoted short", async () => {
    const request = await newRequest();
    const alice = (await mailsFor(request)).get("alice@example.com") as SinkMail;
    const app = channel.routes?.(deps);
    if (!app) throw new Error("no routes");
    const post = (raw: string) =>
      app.request("/inbound", {
        method: "POST",
        headers: { "content-type": "message/rfc822", authorization: `Bearer ${WEBHOOK_SECRET}` },
        body: raw,
      });
    // MIME nested deeper than the parser allows: the sender's fault, so no 500 (or SMTP retry).
    let nested = "From: alice@example.com\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n";
    for (let i = 0; i < 1000; i++) nested += "--b\r\nContent-Type: message/rfc822\r\n\r\n";
    const unreadable = await post(nested);
    expect(unreadable.status).toBe(200);
    expect(await unreadable.json()).toEqual({ status: "ignored", reason: "unreadable mail" });

    const long = `${"x".repeat(5000)}@evil.test`;
    const spoofed = await post(
      [`From: ${long}`, `To: ${replyAddressOf(alice)}`, "Subject: Re", "", "APPROVE ALL"].join(
        "\r\n",
      ),
    );
    const body = (await spoofed.json()) as { status: string; reason: string };
    expect(body.status).toBe("refused");
    expect(body.reason.length).toBeLessThan(400);
    expect(refusals.at(-1)?.reason.length).toBeLessThan(400);
    expect((await airlock.get(request.id)).status).toBe("pending");
  });
});
