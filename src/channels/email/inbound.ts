// Replies by mail, from the SMTP listener or the inbound webhook alike. A reply decides only when
// it is addressed to a reply address of ours whose token was issued to the very address it comes
// from, and that address belongs to a configured person; the state machine checks the rest.
// Automatic mail (RFC 3834 auto-replies, bulk and list mail, bounces) is ignored, and only a
// verified sender ever gets mail back, so forged mail cannot make Airlock send mail to others.

import { createHash } from "node:crypto";
import { type AddressObject, type HeaderValue, type ParsedMail, simpleParser } from "mailparser";
import { redactorOf } from "../../audit/redact.js";
import { actorOf, withoutIdentity } from "../../core/authority.js";
import { isAirlockError } from "../../core/errors.js";
import { viewDigestOf } from "../../core/review-view.js";
import type { ApprovalRequest } from "../../core/schemas.js";
import { clip } from "../../core/text.js";
import { parseReply, replyToDecision } from "../../reply/parse.js";
import { outsideView } from "../outside.js";
import type { InboundDeps } from "../types.js";
import {
  isViewChanged,
  MAIL_VIEW_BUDGET,
  noDigestToApprove,
  outsideFit,
  tooLargeToApprove,
  viewChangedText,
} from "../view-fit.js";
import { windowLimit } from "../window-limit.js";
import { inboxUrl, noticeLines, oneLine } from "./compose.js";
import type { EmailContext } from "./context.js";
import { escapeHtml } from "./html.js";
import { stripQuoted } from "./quoted.js";
import { senderProblem } from "./sender.js";
import { REPLY_TOKEN_LENGTH, replyTokenRequest, verifyReplyToken } from "./tokens.js";

/** Answers (help, refusals, "no longer pending") one address gets in an hour, at most. */
export const ANSWERS_PER_ADDRESS_PER_HOUR = 10;
const HOUR_MS = 3_600_000;

/** Inbound mail larger than this is refused (SMTP) or answered 413 (webhook). */
export const MAX_INBOUND_BYTES = 1024 * 1024;

export type InboundResult =
  | { status: "decided"; requestId: string; reviewer: string; outcome: string }
  | { status: "ignored"; reason: string }
  | { status: "refused"; reason: string; requestId?: string }
  | { status: "not_understood"; requestId: string; reason: string }
  | { status: "already_decided"; requestId: string };

/** Envelope facts the SMTP listener knows (the webhook knows none). */
export interface Envelope {
  mailFrom?: string | false;
  rcptTo?: string[];
}

export const REPLY_GRAMMAR = [
  "Write one of these on the first line of your reply:",
  "  APPROVE ALL          approve everything",
  "  SELECT 1,3           approve some items by their number (SELECT 1-3 works too)",
  "  SKIP [note]          approve none of the items",
  "  REJECT [reason]      reject the request",
  "  REVISE <comment>     ask for changes",
].join("\n");

const AUTO_PRECEDENCE = new Set(["bulk", "junk", "list", "auto_reply"]);

/** Why a mail is automatic (and so not a person's answer), or undefined. */
export function automaticReason(mail: ParsedMail, envelope: Envelope = {}): string | undefined {
  if (envelope.mailFrom === "" || envelope.mailFrom === false)
    return "a bounce (empty envelope sender)";
  const submitted = headerText(mail.headers.get("auto-submitted")).toLowerCase();
  if (submitted && submitted.split(";")[0]?.trim() !== "no") return `Auto-Submitted: ${submitted}`;
  const precedence = headerText(mail.headers.get("precedence")).trim().toLowerCase();
  if (AUTO_PRECEDENCE.has(precedence)) return `Precedence: ${precedence}`;
  if (mail.headers.has("x-autoreply")) return "X-Autoreply";
  if (mail.headers.has("x-autorespond")) return "X-Autorespond";
  return undefined;
}

export function inboundHandler(email: EmailContext, deps: InboundDeps) {
  const { options, logger } = email;
  // What a reply mail quotes of a request passes the engine's redaction, as every mail does.
  const redactor = redactorOf(deps.airlock);
  const local = escapeRegExp(options.replyLocalPart.toLowerCase());
  const domain = escapeRegExp(options.replyDomain.toLowerCase());
  const ours = new RegExp(
    `(?:^|[^a-z0-9._+-])${local}\\+([a-z0-9]{${REPLY_TOKEN_LENGTH}})@${domain}(?![a-z0-9.-])`,
    "i",
  );

  async function refuse(
    reason: string,
    requestId?: string,
    actor?: string,
  ): Promise<InboundResult> {
    logger.warn({ reason, requestId }, "email reply refused");
    await deps.refuse({
      channel: "email",
      target: email.name,
      reason,
      ...(requestId ? { requestId } : {}),
      ...(actor ? { actor } : {}),
    });
    return requestId ? { status: "refused", reason, requestId } : { status: "refused", reason };
  }

  // Answers sent per address in the current hour. An answer goes to a mail's From, which whoever
  // holds a reply address (a leaked one, an expired one) can set to its owner's: without a bound,
  // Airlock would mail the owner as often as someone writes.
  const answered = windowLimit({ limit: ANSWERS_PER_ADDRESS_PER_HOUR, windowMs: HOUR_MS });
  const mayAnswer = (sender: string) => answered.take(sender.toLowerCase(), deps.now());

  async function answer(mail: ParsedMail, sender: string, replyAddress: string, lines: string[]) {
    if (!mayAnswer(sender)) {
      logger.warn(
        { to: sender, perHour: ANSWERS_PER_ADDRESS_PER_HOUR },
        "email answer not sent: this address had its answers for the hour",
      );
      return;
    }
    const text = lines.join("\n");
    const subject = oneLine(mail.subject ?? "your reply", 200);
    const headers: Record<string, string> = {
      "Auto-Submitted": "auto-replied",
      "X-Auto-Response-Suppress": "All",
    };
    try {
      await email.send({
        to: sender,
        subject: /^re:/i.test(subject) ? subject : `Re: ${subject}`,
        text,
        html: `<!doctype html><html><body><pre style="white-space:pre-wrap">${escapeHtml(text)}</pre></body></html>`,
        messageId: `<airlock.answer.${shortHash(`${mail.messageId ?? ""}${sender}${deps.now()}`)}@${options.replyDomain}>`,
        replyTo: replyAddress,
        ...(mail.messageId ? { inReplyTo: mail.messageId, references: mail.messageId } : {}),
        headers,
      });
    } catch (err) {
      logger.warn({ err: errorText(err) }, "could not send an answer to an email reply");
    }
  }

  return async function handleInboundMail(
    raw: Buffer | string,
    envelope: Envelope = {},
  ): Promise<InboundResult> {
    const size = typeof raw === "string" ? Buffer.byteLength(raw) : raw.length;
    if (size > MAX_INBOUND_BYTES) return { status: "ignored", reason: "larger than 1 MiB" };
    let mail: ParsedMail;
    try {
      mail = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true });
    } catch (err) {
      // A malformed mail (nested past the parser's limits, say) is the sender's fault, and sending
      // it again will not help: ignored, not a failure to retry.
      logger.info({ err: (err as Error).message }, "email reply ignored: unreadable mail");
      return { status: "ignored", reason: "unreadable mail" };
    }
    const automatic = automaticReason(mail, envelope);
    if (automatic) {
      logger.info({ reason: automatic }, "email reply ignored: automatic mail");
      return { status: "ignored", reason: `automatic mail (${automatic})` };
    }
    const token = findToken(mail, envelope);
    const sender = mail.from?.value[0]?.address?.trim().toLowerCase();
    if (!token)
      return { status: "ignored", reason: "not addressed to a reply address of this channel" };
    if (!sender) return refuse("email reply without a From address");
    // The reply address is bound to the view its mail showed: it verifies against the view of the
    // request it names as that request stands now.
    const named = replyTokenRequest(token);
    const standing = named === undefined ? undefined : await requestOf(named);
    const check = verifyReplyToken(
      options.linkSecret,
      token,
      sender,
      deps.now(),
      standing && viewDigestOf(standing),
    );
    if (!check.ok && check.reason === "forged") {
      const result = await refuse(
        `email reply from ${quoted(sender)} to a reply address not issued to that sender (forged or forwarded), or issued for a view of the request that has changed since`,
        undefined,
        sender,
      );
      // A configured reviewer whose address is proven may be answering a mail about a request
      // that changed since it was sent (the address no longer verifies): told where to look again.
      // Nobody else hears back.
      if (
        standing?.status === "pending" &&
        email.identities.byEmail(sender) &&
        !senderProblem(mail, envelope, sender, options.inbound?.authservId)
      ) {
        await answer(mail, sender, "", [
          "Your reply was not recorded: the reply address you wrote to does not match this request as it stands now. The request may have changed since that mail was sent (or the mail was not sent to you).",
          "Look at it again in the inbox before deciding:",
          "",
          `Inbox: ${inboxUrl(deps.publicUrl, standing.id)}`,
        ]);
      }
      return result;
    }
    // Before anything is answered or decided: the From address must be proven the sender's (the
    // envelope agrees, and DKIM/DMARC passed where the inbound server reports them). No answer: it
    // would go to that very From address, which this mail did not prove.
    const unproven = senderProblem(mail, envelope, sender, options.inbound?.authservId);
    if (unproven) {
      return refuse(
        `email reply from ${quoted(sender)} refused: ${unproven}`,
        check.requestId,
        sender,
      );
    }
    const replyAddress = `${options.replyLocalPart}+${token}@${options.replyDomain}`.toLowerCase();
    if (!check.ok) return expired(mail, sender, replyAddress, check.requestId);
    const { requestId } = check;
    const reviewer = email.identities.byEmail(sender);
    if (!reviewer)
      return refuse(
        `email reply from ${quoted(sender)}, who is not a configured reviewer`,
        requestId,
        sender,
      );

    const request = standing?.id === requestId ? standing : await requestOf(requestId);
    if (!request) return { status: "ignored", reason: `request ${requestId} does not exist` };
    const text = stripQuoted(mail.text ?? "");
    const reply = parseReply(text, request.items);
    const inbox = inboxUrl(deps.publicUrl, requestId);
    if (!reply.ok) {
      logger.info({ requestId, error: reply.error }, "email reply not understood; help sent");
      await answer(mail, sender, replyAddress, [
        `I could not read your reply: ${reply.error}.`,
        "",
        REPLY_GRAMMAR,
        "",
        `Request: ${oneLine(outsideView(request, redactor).title, 200)}`,
        `Inbox: ${inbox}`,
      ]);
      return { status: "not_understood", requestId, reason: reply.error };
    }
    const decision = replyToDecision(reply, {
      reviewer: reviewer.name,
      groups: reviewer.groups,
      channel: "email",
    });
    // A mail delivered twice (SMTP retries, a webhook replayed) decides once.
    decision.key = `email-reply:${shortHash(mail.messageId ?? `${sender}\n${text}`)}`;
    // An APPROVE is refused where the mail offered none: a view it could not show in full, or a
    // reply address sent before addresses were bound to the view their mail showed.
    if (decision.outcome === "approved" && request.status === "pending") {
      const fitted = outsideFit(request, redactor, MAIL_VIEW_BUDGET);
      const why = !fitted.fits
        ? tooLargeToApprove(fitted, "a mail", inbox)
        : check.viewDigest === undefined
          ? noDigestToApprove("mail", inbox)
          : undefined;
      if (why) {
        const result = await refuse(
          !fitted.fits
            ? `email reply approving a request too large to show in a mail, from ${quoted(sender)}`
            : `email reply approving through a reply address bound to no view, from ${quoted(sender)}`,
          requestId,
          sender,
        );
        await answer(mail, sender, replyAddress, [`Your reply was not recorded. ${why}`]);
        return result;
      }
    }
    if (check.viewDigest !== undefined) decision.viewDigest = check.viewDigest;
    try {
      // A reply whose sender was proven above: authority (core/authority.ts) decides the rest.
      const actor = actorOf({
        name: reviewer.name,
        groups: reviewer.groups,
        proof: "mail_reply",
        channel: "email",
      });
      const after = await deps.airlock.decideAs(actor, requestId, withoutIdentity(decision));
      logger.info(
        { requestId, reviewer: reviewer.name, outcome: decision.outcome },
        "email reply decided",
      );
      return {
        status: "decided",
        requestId,
        reviewer: reviewer.name,
        outcome: after.decision?.outcome ?? decision.outcome,
      };
    } catch (err) {
      if (isViewChanged(err)) {
        await answer(mail, sender, replyAddress, [viewChangedText("the mail you answered", inbox)]);
        return { status: "refused", reason: "view_changed", requestId };
      }
      if (isAirlockError(err, "conflict")) {
        const current = (err as { request?: ApprovalRequest }).request ?? request;
        await answer(mail, sender, replyAddress, [
          "Your reply came too late:",
          ...noticeLines(outsideView(current, redactor)),
          "",
          `Inbox: ${inbox}`,
        ]);
        return { status: "already_decided", requestId };
      }
      if (isAirlockError(err, "forbidden")) {
        const result = await refuse(
          `email reply refused by the state machine: ${err.message}`,
          requestId,
          sender,
        );
        await answer(mail, sender, replyAddress, [`Your reply was not recorded: ${err.message}.`]);
        return result;
      }
      if (isAirlockError(err, "invalid_input")) {
        await answer(mail, sender, replyAddress, [
          `Your reply was not recorded: ${err.message}.`,
          "",
          REPLY_GRAMMAR,
          "",
          `Inbox: ${inbox}`,
        ]);
        return { status: "not_understood", requestId, reason: err.message };
      }
      throw err;
    }
  };

  /** The request a reply token names, or undefined when there is none (pruned, say). */
  async function requestOf(requestId: string): Promise<ApprovalRequest | undefined> {
    try {
      return await deps.airlock.get(requestId);
    } catch (err) {
      if (isAirlockError(err, "not_found")) return undefined;
      throw err;
    }
  }

  /** A reply to an expired address of this sender's: refused and audited, and the sender told
   * where to decide (or that it is decided). The address was issued to this sender, so the answer
   * goes to nobody else; it carries the expired address, which decides nothing. */
  async function expired(
    mail: ParsedMail,
    sender: string,
    replyAddress: string,
    requestId: string,
  ): Promise<InboundResult> {
    const request = await requestOf(requestId);
    if (!request) return { status: "ignored", reason: `request ${requestId} does not exist` };
    const result = await refuse(
      `email reply from ${quoted(sender)} to an expired reply address`,
      requestId,
      sender,
    );
    const inbox = inboxUrl(deps.publicUrl, requestId);
    await answer(
      mail,
      sender,
      replyAddress,
      request.status === "pending"
        ? [
            "Your reply was not recorded: this reply address has expired.",
            "Decide in the inbox, or reply to the newest mail about this request.",
            "",
            `Inbox: ${inbox}`,
          ]
        : [
            "Your reply was not recorded: this reply address has expired, and the request is no longer pending:",
            ...noticeLines(outsideView(request, redactor)),
            "",
            `Inbox: ${inbox}`,
          ],
    );
    return result;
  }

  /** The token of the first reply address of ours among the envelope recipients, To, Cc and
   * Delivered-To. */
  function findToken(mail: ParsedMail, envelope: Envelope): string | undefined {
    const candidates: string[] = [...(envelope.rcptTo ?? [])];
    for (const field of [mail.to, mail.cc]) {
      for (const obj of field === undefined ? [] : Array.isArray(field) ? field : [field]) {
        candidates.push(...addresses(obj));
      }
    }
    candidates.push(headerText(mail.headers.get("delivered-to")));
    for (const line of mail.headerLines) {
      if (line.key === "delivered-to") candidates.push(line.line);
    }
    for (const c of candidates) {
      const m = ours.exec(c.toLowerCase());
      if (m?.[1]) return m[1];
    }
    return undefined;
  }
}

function addresses(obj: AddressObject): string[] {
  const out: string[] = [];
  const walk = (list: AddressObject["value"]) => {
    for (const a of list) {
      if (a.address) out.push(a.address);
      if (a.group) walk(a.group);
    }
  };
  walk(obj.value);
  return out;
}

function headerText(v: HeaderValue | undefined): string {
  if (v === undefined) return "";
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return v.map((x) => headerText(x as HeaderValue)).join(", ");
  if (v instanceof Date) return v.toISOString();
  if ("text" in v && typeof v.text === "string") return v.text;
  if ("value" in v && typeof v.value === "string") return v.value;
  return "";
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function shortHash(s: string): string {
  return createHash("sha256").update(s).digest("hex").slice(0, 32);
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** An address as refusals quote it, since the sender chooses it: a valid one (254 characters at
 * most) whole, a longer one cut. */
function quoted(address: string): string {
  return clip(address, 255);
}
