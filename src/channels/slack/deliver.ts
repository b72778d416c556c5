// Delivering one outbox message to Slack: a new request is posted with its buttons; its end (decided,
// timed out, cancelled) replaces that message's buttons with the outcome; an escalation or a reminder
// is a reply in its thread. The message posted on creation is found through its receipt.
import type { WebClient } from "@slack/web-api";
import type { OutboxMessage } from "../../core/outbox.js";
import { viewDigestOf } from "../../core/review-view.js";
import type { ApprovalRequest } from "../../core/schemas.js";
import { deliveryRedactor, outsideView } from "../outside.js";
import type { DeliveryContext, DeliveryResult, IdentityDirectory } from "../types.js";
import { deliveryFailure, slackErrorCode } from "./api.js";
import {
  type Block,
  escapeMrkdwn,
  METADATA_EVENT_TYPE,
  outcomeBlocks,
  outcomeLine,
  requestBlocks,
  requestText,
  slackTime,
} from "./blocks.js";
import { text } from "./json.js";

export interface DeliverDeps {
  client: WebClient;
  /** Where new messages go (a name or an id). */
  channel: string;
  identities: IdentityDirectory;
}

/** Where a message was posted, as its receipt says. */
interface Posted {
  channel: string;
  ts: string;
}

export async function deliverToSlack(
  deps: DeliverDeps,
  message: OutboxMessage,
  ctx: DeliveryContext,
): Promise<DeliveryResult> {
  if (ctx.signal.aborted) return { ok: false, retry: true, error: "the delivery was stopped" };
  // Everything below reaches Slack: the request as an outside channel may see it. Its buttons carry
  // the digest of the real request's review view, which is what the engine checks a decision by.
  const request = ctx.request && outsideView(ctx.request, deliveryRedactor(ctx));
  const viewDigest = ctx.request && viewDigestOf(ctx.request);
  if (message.topic === "test") {
    return post(deps, {
      channel: deps.channel,
      text: `Airlock test message from ${ctx.publicUrl}: this channel is set up.`,
    });
  }
  if (!request) return { ok: true, detail: "the request no longer exists: nothing to post" };
  const original = postedOnCreation(ctx.previous);
  switch (message.topic) {
    case "created":
      // A request decided before this message went out is posted as it ended, without buttons.
      if (request.status !== "pending" && request.decision) return final(deps, request, undefined);
      return post(deps, {
        channel: deps.channel,
        text: requestText(request),
        blocks: requestBlocks(
          request,
          `${ctx.publicUrl}/requests/${encodeURIComponent(request.id)}`,
          viewDigest ?? "",
        ),
        // A reply in the thread is bound to the view this message shows, as the buttons are.
        metadata: {
          event_type: METADATA_EVENT_TYPE,
          event_payload: { request_id: request.id, view_digest: viewDigest },
        },
        unfurl_links: false,
        unfurl_media: false,
      });
    case "decided":
    case "timed_out":
    case "cancelled":
      if (!request.decision) return { ok: true, detail: "the request has no decision to show" };
      return final(deps, request, original);
    case "escalated":
    case "reminder":
      if (request.status !== "pending")
        return { ok: true, detail: "the request is over: no nudge" };
      return post(deps, {
        channel: original?.channel ?? deps.channel,
        ...(original ? { thread_ts: original.ts } : {}),
        text: nudgeText(deps, request, message.topic),
      });
    case "execution_unknown":
      return post(deps, {
        channel: original?.channel ?? deps.channel,
        ...(original ? { thread_ts: original.ts } : {}),
        text: unknownText(request, `${ctx.publicUrl}/requests/${encodeURIComponent(request.id)}`),
      });
    default:
      return { ok: false, retry: false, error: `unknown topic ${String(message.topic)}` };
  }
}

/** The request's end: the original message updated in place, or a new message when there is none. */
async function final(
  deps: DeliverDeps,
  request: ApprovalRequest,
  original: Posted | undefined,
): Promise<DeliveryResult> {
  const decision = request.decision;
  if (!decision) return { ok: true, detail: "the request has no decision to show" };
  const content = {
    text: `${request.title}: ${outcomeLine(decision)}`,
    blocks: outcomeBlocks(request, decision),
  };
  if (original) {
    try {
      await deps.client.chat.update({ channel: original.channel, ts: original.ts, ...content });
      return { ok: true, receipt: { ...original } };
    } catch (err) {
      const code = slackErrorCode(err);
      // Deleted by someone, or too old to edit: the outcome still has to reach the channel.
      if (code !== "message_not_found" && code !== "cant_update_message") {
        return deliveryFailure(err, "chat.update");
      }
    }
  }
  return post(deps, {
    channel: original?.channel ?? deps.channel,
    ...content,
    metadata: { event_type: METADATA_EVENT_TYPE, event_payload: { request_id: request.id } },
  });
}

async function post(
  deps: DeliverDeps,
  args: Record<string, unknown> & { channel: string; text: string; blocks?: Block[] },
): Promise<DeliveryResult> {
  try {
    const res = await deps.client.chat.postMessage(
      args as Parameters<WebClient["chat"]["postMessage"]>[0],
    );
    const channel = text(res.channel) ?? args.channel;
    const ts = text(res.ts);
    if (!ts)
      return { ok: false, retry: true, error: "chat.postMessage: Slack answered without a ts" };
    const receipt: Record<string, unknown> = { channel, ts };
    if (typeof args.thread_ts === "string") receipt.thread_ts = args.thread_ts;
    return { ok: true, receipt };
  } catch (err) {
    return deliveryFailure(err, "chat.postMessage");
  }
}

/** The message posted when the request was created: the latest `created` message with a receipt. */
function postedOnCreation(previous: OutboxMessage[]): Posted | undefined {
  for (let i = previous.length - 1; i >= 0; i--) {
    const m = previous[i];
    if (m?.topic !== "created") continue;
    const channel = text(m.receipt?.channel);
    const ts = text(m.receipt?.ts);
    if (channel && ts) return { channel, ts };
  }
  return undefined;
}

/** An approved action whose process stopped reporting: a person should find out and settle it. */
function unknownText(request: ApprovalRequest, link: string): string {
  const x = request.execution;
  const by = x ? ` by ${escapeMrkdwn(x.claimedBy)} at ${slackTime(x.claimedAt)}` : "";
  return `:warning: *${escapeMrkdwn(request.title)}* was approved and claimed${by}, but is not known to have run: no outcome was reported. Find out, then retry it, mark it done or abandon it: <${link}|open it in the inbox>.`;
}

/** An escalation or a reminder, naming (mentioning, when their Slack ids are known) who may decide. */
function nudgeText(
  deps: DeliverDeps,
  request: ApprovalRequest,
  topic: "escalated" | "reminder",
): string {
  const people = deps.identities
    .reviewersFor(request)
    .map((r) => (r.slack ? `<@${r.slack}>` : escapeMrkdwn(r.name)));
  const who = people.length > 0 ? people.join(", ") : escapeMrkdwn(request.approvers.join(", "));
  const deadline =
    request.deadline === undefined ? "" : `; deadline ${slackTime(request.deadline)}`;
  const title = escapeMrkdwn(request.title);
  if (topic === "escalated") {
    return `:arrow_up: *${title}* was escalated${who ? ` to ${who}` : ""}${deadline}.`;
  }
  return `:alarm_clock: Reminder: *${title}* still waits for a decision${who ? ` from ${who}` : ""}${deadline}.`;
}
