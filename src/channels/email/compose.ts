// What one mail to one recipient says. A new, escalated or reminded request: its review view (the
// agent's words labelled as such, the exact args, the preview, the items: view-mail.ts) with the
// reply grammar's options (pattern 1), as text and as HTML, one-click links for the decisions a
// click can make, and the inbox link. A view larger than a mail shows (MAIL_VIEW_BUDGET) is shown
// as far as it fits, says how much is not shown, and offers no approval: no link, no APPROVE. A decided, timed-out or cancelled one: a short notice in the
// same thread. Links and the reply address are bound to the recipient, so every recipient gets a
// mail of their own.
import { createHash } from "node:crypto";
import type { Redactor } from "../../audit/redact.js";
import { buttonLabel } from "../../core/labels.js";
import type { OutboxTopic } from "../../core/outbox.js";
import { presentationOf } from "../../core/presentation.js";
import { reviewViewOf, viewDigestOf } from "../../core/review-view.js";
import type { ApprovalRequest, Decision } from "../../core/schemas.js";
import { clip } from "../../core/text.js";
import { outsideView } from "../outside.js";
import { fitView, MAIL_VIEW_BUDGET } from "../view-fit.js";
import { escapeHtml, link, paragraph, preformatted } from "./html.js";
import type { ResolvedEmailOptions } from "./options.js";
import { type LinkMethod, type LinkOutcome, newNonce, replyToken, signLink } from "./tokens.js";
import { mailBody } from "./view-mail.js";

export interface ComposedMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
  replyTo?: string;
  inReplyTo?: string;
  references?: string;
  headers: Record<string, string>;
}

export interface ComposeContext {
  channelName: string;
  options: ResolvedEmailOptions;
  publicUrl: string;
  now: number;
  /** The outbox message's id (unique per message, so message ids are too). */
  messageKey: string;
  /** The engine's redaction, which everything mailed passes. */
  redactor: Redactor;
}

/** Whether the recipient may decide: a configured person who is an approver and not the requester
 * gets links and a reply address; anyone else (a fixed `to` address) a copy to read. */
export type RecipientRole = "decider" | "reader";

interface OneClick {
  outcome: LinkOutcome;
  method: LinkMethod;
  label: string;
}

/** RFC 3834: our mails are automatic, so auto-responders do not answer them. */
const AUTOMATIC_HEADERS = {
  "Auto-Submitted": "auto-generated",
  "X-Auto-Response-Suppress": "All",
};

export function subjectOf(topic: OutboxTopic, request: ApprovalRequest): string {
  const title = oneLine(request.title, 150);
  const base = `[Airlock] Approval needed: ${title}`;
  switch (topic) {
    case "created":
      return base;
    case "escalated":
      return `[Airlock] Escalated, approval needed: ${title}`;
    case "reminder":
      return `[Airlock] Reminder, approval needed: ${title}`;
    default:
      return `Re: ${base}`;
  }
}

/** The reply address bound to (request, recipient, the view the mail shows) until `expiresMs`,
 * when the request id can carry one. */
export function replyAddress(
  options: ResolvedEmailOptions,
  requestId: string,
  recipient: string,
  expiresMs: number,
  viewDigest: string,
): string | undefined {
  const token = replyToken(options.linkSecret, requestId, recipient, expiresMs, viewDigest);
  return token && `${options.replyLocalPart}+${token}@${options.replyDomain}`.toLowerCase();
}

export function inboxUrl(publicUrl: string, requestId: string): string {
  return `${publicUrl}/requests/${encodeURIComponent(requestId)}`;
}

/** The decisions a click may make: approving everything and rejecting (skipping, with items).
 * Selecting, revising and editing need words, so they go by reply or through the inbox. No approval
 * of a view the mail could not show in full (`fits` false). */
function oneClicks(request: ApprovalRequest, fits: boolean): OneClick[] {
  const out: OneClick[] = [];
  const n = request.items.length;
  // The verb first, the agent's label after it unless it inverts it (core/labels.ts).
  const { labels } = presentationOf(request);
  if (fits && request.allowed.includes("approve")) {
    out.push({
      outcome: "approved",
      method: "approve_all",
      label: buttonLabel("approve", labels.approve, n > 0 ? `Approve all ${n}` : "Approve"),
    });
  }
  // Always offered: `allowed` never takes away the reviewer's "no" (the state machine accepts a
  // rejection whatever it lists, and the inbox and Slack offer it).
  out.push(
    n > 0
      ? {
          outcome: "rejected",
          method: "skip",
          label: buttonLabel("reject", labels.reject, "Skip (approve none)"),
        }
      : { outcome: "rejected", method: "reject", label: buttonLabel("reject", labels.reject) },
  );
  return out;
}

export function composeRequestMail(
  topic: OutboxTopic,
  given: ApprovalRequest,
  recipient: string,
  role: RecipientRole,
  ctx: ComposeContext,
): ComposedMail {
  // The mail provider is a third party: subject and body show the request as redacted. The links
  // and the reply address carry the digest of the real request's view, which the engine checks.
  const request = outsideView(given, ctx.redactor);
  const viewDigest = viewDigestOf(given);
  const fitted = fitView(reviewViewOf(request), MAIL_VIEW_BUDGET);
  const { options } = ctx;
  const to = recipient.toLowerCase();
  const decider = role === "decider";
  const nonce = newNonce();
  const exp = Math.floor(ctx.now / 1000) + options.linkTtlSeconds;
  const links = (decider ? oneClicks(request, fitted.fits) : []).map((c) => ({
    ...c,
    url: `${ctx.publicUrl}/channels/${encodeURIComponent(ctx.channelName)}/l/${signLink(options.linkSecret, { r: request.id, to, o: c.outcome, m: c.method, exp, n: nonce, v: viewDigest })}`,
  }));
  const inbox = inboxUrl(ctx.publicUrl, request.id);
  // The reply address lives as long as the links: a leaked one (a forward, a reply-all) stops
  // working with them, and each reminder or escalation mail brings a fresh one.
  const replyTo = decider
    ? replyAddress(options, request.id, to, exp * 1000, viewDigest)
    : undefined;
  const body = mailBody(request, fitted, { now: ctx.now, inbox });
  const lead = !decider
    ? `For your information: ${oneLine(request.requester, 100)} asks for an approval you cannot give.`
    : topic === "escalated"
      ? "This request was escalated to you."
      : topic === "reminder"
        ? "Reminder: this request is still waiting for a decision."
        : `${oneLine(request.requester, 100)} asks for your approval.`;
  const wordy = (
    decider
      ? [
          fitted.fits && request.allowed.includes("select") && request.items.length > 0
            ? "To approve some items only, reply SELECT with their numbers, or open the inbox."
            : "",
          request.allowed.includes("revise")
            ? "To ask for changes, reply REVISE and your comment."
            : "",
        ]
      : []
  ).filter(Boolean);
  const replyHint = replyTo
    ? "Or reply to this mail with one of the responses above, on the first line."
    : "";

  const linkNote = decider
    ? [
        `${replyTo ? "Links and the reply address" : "Links"} are yours alone and expire at ${iso(exp * 1000)}; the first decision counts.`,
      ]
    : [];
  const text = [
    lead,
    "",
    body,
    "",
    ...(links.length ? ["One-click decisions (each asks you to confirm):"] : []),
    ...links.map((l) => `- ${l.label}: ${l.url}`),
    ...(links.length ? [""] : []),
    ...wordy,
    ...(replyHint ? [replyHint] : []),
    `Open it in the inbox: ${inbox}`,
    ...(linkNote.length ? ["", ...linkNote] : []),
  ].join("\n");

  const buttons = links
    .map(
      (l) =>
        `<a href="${escapeHtml(l.url)}" style="display:inline-block;padding:8px 16px;margin:0 8px 8px 0;border:1px solid #555;border-radius:4px;text-decoration:none;color:#222">${escapeHtml(l.label)}</a>`,
    )
    .join("");
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">',
    paragraph(lead),
    `<pre style="white-space:pre-wrap;background:#f6f6f6;padding:12px">${escapeHtml(body)}</pre>`,
    links.length ? `<p>One-click decisions (each asks you to confirm):</p><p>${buttons}</p>` : "",
    ...wordy.map((w) => paragraph(w)),
    replyHint ? paragraph(replyHint) : "",
    `<p>${link(inbox, "Open it in the inbox")}</p>`,
    ...linkNote.map((l) => paragraph(l)),
    "</body></html>",
  ].join("\n");

  const root = threadRoot(options, request.id, to);
  const mail: ComposedMail = {
    to,
    subject: subjectOf(topic, request),
    text,
    html,
    messageId: topic === "created" ? root : messageIdOf(options, ctx.messageKey, to),
    headers: { ...AUTOMATIC_HEADERS },
  };
  if (replyTo) mail.replyTo = replyTo;
  if (topic !== "created") {
    mail.inReplyTo = root;
    mail.references = root;
  }
  return mail;
}

/** "Approved by alice (web) at 2026-…Z", and what else the decision says. */
export function noticeLines(request: ApprovalRequest): string[] {
  const d: Decision | undefined = request.decision;
  if (!d) return [`The request is ${request.status}.`];
  const at = iso(d.decidedAt);
  const who = `${oneLine(d.reviewer, 100)} (${d.channel})`;
  const lines: string[] = [];
  if (d.method === "timeout") {
    lines.push(
      d.outcome === "approved"
        ? `Approved by its deadline rule at ${at}.`
        : `Timed out at ${at}: nobody decided before the deadline.`,
    );
  } else {
    const verb: Record<string, string> = {
      approved: "Approved",
      rejected: "Rejected",
      revise: "Sent back for revision",
      cancelled: "Cancelled",
      timed_out: "Timed out",
    };
    lines.push(`${verb[d.outcome] ?? d.outcome} by ${who} at ${at}.`);
  }
  if (d.outcome === "approved" && d.method === "select" && d.selected) {
    const labels = request.items
      .map((item, i) =>
        d.selected?.includes(item.id) ? `${i + 1}. ${oneLine(item.label, 200)}` : "",
      )
      .filter(Boolean);
    lines.push(`Selected ${labels.length} of ${request.items.length}:`, ...labels);
  }
  if (d.comment?.trim()) lines.push(`Comment: ${oneLine(d.comment, 2000)}`);
  return lines;
}

export function composeNoticeMail(
  topic: OutboxTopic,
  given: ApprovalRequest,
  recipient: string,
  ctx: ComposeContext,
): ComposedMail {
  const request = outsideView(given, ctx.redactor);
  const to = recipient.toLowerCase();
  const lines = [`${oneLine(request.title, 200)}`, "", ...noticeLines(request)];
  const inbox = inboxUrl(ctx.publicUrl, request.id);
  const text = [...lines, "", `In the inbox: ${inbox}`].join("\n");
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">',
    preformatted(lines.join("\n")),
    `<p>${link(inbox, "Open it in the inbox")}</p>`,
    "</body></html>",
  ].join("\n");
  const root = threadRoot(ctx.options, request.id, to);
  return {
    to,
    subject: subjectOf(topic, request),
    text,
    html,
    messageId: messageIdOf(ctx.options, ctx.messageKey, to),
    inReplyTo: root,
    references: root,
    headers: { ...AUTOMATIC_HEADERS },
  };
}

/** A `test` message: proves the channel can send. */
export function composeTestMail(recipient: string, ctx: ComposeContext): ComposedMail {
  const text = `This is a test message from Airlock's email channel "${ctx.channelName}".`;
  return {
    to: recipient.toLowerCase(),
    subject: "[Airlock] Test message",
    text,
    html: `<!doctype html><html><body>${paragraph(text)}</body></html>`,
    messageId: messageIdOf(ctx.options, ctx.messageKey, recipient.toLowerCase()),
    headers: { ...AUTOMATIC_HEADERS },
  };
}

/** The message id of the first mail about a request to a recipient, which later mails answer. */
function threadRoot(options: ResolvedEmailOptions, requestId: string, to: string): string {
  return `<airlock.${requestId}.${short(to)}@${options.replyDomain}>`;
}

function messageIdOf(options: ResolvedEmailOptions, key: string, to: string): string {
  return `<airlock.${short(key)}.${short(to)}@${options.replyDomain}>`;
}

function short(s: string): string {
  return createHash("sha256").update(s).digest("hex").slice(0, 16);
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** One line of at most `max` characters, control characters removed (subjects, notices). */
export function oneLine(s: string, max = 500): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  const flat = s.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ").trim();
  return clip(flat, max);
}
