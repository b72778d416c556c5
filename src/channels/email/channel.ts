// The email channel: `createEmailChannel(name, options, { logger, identities })` returns the driver
// the outbox dispatcher delivers through and the server mounts. One mail per recipient (its links
// and reply address are bound to that person), sent through one nodemailer SMTP transport.

import type { Transporter } from "nodemailer";
import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport/index.js";
import type { Logger } from "pino";
import type { OutboxMessage } from "../../core/outbox.js";
import type { ApprovalRequest } from "../../core/schemas.js";
import { canDecide } from "../../core/state.js";
import { deliveryRedactor } from "../outside.js";
import type {
  ChannelDriver,
  DeliveryContext,
  DeliveryResult,
  IdentityDirectory,
  InboundDeps,
} from "../types.js";
import {
  type ComposeContext,
  type ComposedMail,
  composeNoticeMail,
  composeRequestMail,
  composeTestMail,
  type RecipientRole,
} from "./compose.js";
import type { EmailContext } from "./context.js";
import { type Envelope, errorText, type InboundResult, inboundHandler } from "./inbound.js";
import { listenForReplies, type ReplyListener } from "./listener.js";
import { type EmailOptions, resolveEmailOptions } from "./options.js";
import { emailRoutes } from "./routes.js";

export interface EmailChannel extends ChannelDriver {
  readonly type: "email";
  /** Handles one raw inbound mail (what the SMTP listener and the webhook route do). Needs the
   * inbound dependencies: call `routes(deps)` or `start(deps)` first. */
  handleInboundMail(raw: Buffer | string, envelope?: Envelope): Promise<InboundResult>;
  /** The port the reply listener listens on, once started with `inbound.smtpPort`. */
  readonly replyPort: number | undefined;
}

const REQUEST_TOPICS = new Set(["created", "escalated", "reminder"]);
const NOTICE_TOPICS = new Set(["decided", "timed_out", "cancelled"]);

export function createEmailChannel(
  name: string,
  /** Checked here (`emailOptionsSchema`), so a config loader may pass what it read as is. */
  options: EmailOptions | Readonly<Record<string, unknown>>,
  env: { logger: Logger; identities: IdentityDirectory },
): EmailChannel {
  const resolved = resolveEmailOptions(options);
  const logger = env.logger.child({ channel: name, channelType: "email" });
  const { smtp } = resolved;
  const transport: Transporter<SMTPTransport.SentMessageInfo> = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure ?? smtp.port === 465,
    ...(smtp.auth ? { auth: { user: smtp.auth.user, pass: smtp.auth.pass } } : {}),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    logger: false,
  });

  const email: EmailContext = {
    name,
    options: resolved,
    logger,
    identities: env.identities,
    async send(mail: ComposedMail): Promise<string> {
      const info = await transport.sendMail({
        from: resolved.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: mail.messageId,
        headers: mail.headers,
        ...(mail.replyTo ? { replyTo: mail.replyTo } : {}),
        ...(mail.inReplyTo ? { inReplyTo: mail.inReplyTo } : {}),
        ...(mail.references ? { references: mail.references } : {}),
      });
      if (info.rejected.length > 0) {
        throw Object.assign(new Error(`the SMTP server rejected ${mail.to}: ${info.response}`), {
          responseCode: 550,
        });
      }
      return info.messageId;
    },
  };

  type Inbound = (raw: Buffer | string, envelope?: Envelope) => Promise<InboundResult>;
  let bound: { deps: InboundDeps; inbound: Inbound } | undefined;
  let listener: ReplyListener | undefined;
  let starting: Promise<void> | undefined;
  /** The inbound side, made once from the first deps given (the server gives the same to both
   * `routes` and `start`; their refusals are audited at a bounded rate: src/channels/refusals.ts). */
  const bind = (deps: InboundDeps) => {
    bound ??= { deps, inbound: inboundHandler(email, deps) };
    return bound;
  };

  function recipientsOf(request: ApprovalRequest | undefined): string[] {
    const all = [
      ...(request ? env.identities.reviewersFor(request).map((r) => r.email) : []),
      ...resolved.to,
    ];
    const seen = new Set<string>();
    for (const a of all) {
      const address = a?.trim().toLowerCase();
      if (address) seen.add(address);
    }
    return [...seen];
  }

  function roleOf(request: ApprovalRequest, address: string): RecipientRole {
    const reviewer = env.identities.byEmail(address);
    return reviewer && canDecide(request, reviewer.name, reviewer.groups) ? "decider" : "reader";
  }

  async function deliver(message: OutboxMessage, ctx: DeliveryContext): Promise<DeliveryResult> {
    const request = ctx.request;
    const compose = (recipient: string, c: ComposeContext): ComposedMail | undefined => {
      if (message.topic === "test") return composeTestMail(recipient, c);
      if (!request) return undefined;
      if (REQUEST_TOPICS.has(message.topic)) {
        return composeRequestMail(message.topic, request, recipient, roleOf(request, recipient), c);
      }
      if (NOTICE_TOPICS.has(message.topic))
        return composeNoticeMail(message.topic, request, recipient, c);
      return undefined;
    };
    if (message.topic !== "test" && !request)
      return { ok: true, detail: "the request is gone: nothing to send" };
    if (REQUEST_TOPICS.has(message.topic) && request?.status !== "pending") {
      return { ok: true, detail: "the request is no longer pending: its links would be of no use" };
    }
    const recipients = message.topic === "test" ? recipientsOf(undefined) : recipientsOf(request);
    if (recipients.length === 0) return { ok: true, detail: "no recipient with an email address" };

    const sent: Record<string, string> = {};
    const failed: Array<{ to: string; error: string; retry: boolean }> = [];
    const context: ComposeContext = {
      channelName: name,
      options: resolved,
      publicUrl: ctx.publicUrl,
      now: ctx.now(),
      messageKey: message.id,
      redactor: deliveryRedactor(ctx),
    };
    for (const to of recipients) {
      if (ctx.signal.aborted) {
        failed.push({ to, error: "delivery stopped", retry: true });
        continue;
      }
      const mail = compose(to, context);
      if (!mail) return { ok: true, detail: `nothing to send for topic ${message.topic}` };
      try {
        sent[to] = await email.send(mail);
      } catch (err) {
        failed.push({ to, error: errorText(err), retry: retryable(err) });
      }
    }
    const receipt = { messageIds: sent };
    if (failed.length === 0) {
      logger.info(
        { messageId: message.id, topic: message.topic, recipients: recipients.length },
        "email sent",
      );
      return { ok: true, receipt };
    }
    const summary = failed.map((f) => `${f.to}: ${f.error}`).join("; ");
    logger.warn(
      { messageId: message.id, topic: message.topic, failed: failed.length },
      "email delivery failed for some recipients",
    );
    // Someone has it: sending again would give them a second copy, so the failures are reported, not retried.
    if (Object.keys(sent).length > 0)
      return { ok: true, receipt, detail: `not sent to ${summary}` };
    return { ok: false, retry: failed.some((f) => f.retry), error: summary };
  }

  return {
    name,
    type: "email",
    deliver,
    routes(deps) {
      const b = bind(deps);
      return emailRoutes(email, b.deps, b.inbound);
    },
    async start(deps) {
      const handle = bind(deps).inbound;
      const port = resolved.inbound?.smtpPort;
      if (port === undefined) return;
      starting ??= listenForReplies({
        host: resolved.inbound?.host ?? "127.0.0.1",
        port,
        replyLocalPart: resolved.replyLocalPart,
        replyDomain: resolved.replyDomain,
        logger,
        handle,
      }).then((l) => {
        listener = l;
        logger.info({ port: l.port }, "email reply listener started");
      });
      return starting;
    },
    async close() {
      await starting?.catch(() => undefined);
      await listener?.close();
      transport.close();
    },
    handleInboundMail(raw, envelope) {
      if (!bound) {
        return Promise.reject(
          new Error(
            `email channel "${name}": call routes(deps) or start(deps) before handling mail`,
          ),
        );
      }
      return bound.inbound(raw, envelope);
    },
    get replyPort() {
      return listener?.port;
    },
  };
}

/** 5xx answers are permanent (a refused address, a refused login); 4xx answers and connection
 * failures are worth another try. */
function retryable(err: unknown): boolean {
  const code = (err as { responseCode?: unknown }).responseCode;
  return !(typeof code === "number" && code >= 500);
}
