// Slack interactions, over HTTP or Socket Mode alike: a button on a request message (Approve with the
// ticked items, Reject, Revise which opens a modal) and the submission of that modal. The payload's
// authenticity was checked before (the request signature, or the Socket Mode connection).
import type { WebClient } from "@slack/web-api";
import { redactorOf } from "../../audit/redact.js";
import type { ApprovalRequest } from "../../core/schemas.js";
import { canDecide } from "../../core/state.js";
import { outsideView } from "../outside.js";
import {
  digestOf,
  noDigestToApprove,
  outsideFit,
  SLACK_VIEW_BUDGET,
  tooLargeToApprove,
} from "../view-fit.js";
import {
  ACTION,
  ITEMS_BLOCK,
  offersItems,
  REVISE_BLOCK,
  REVISE_INPUT,
  REVISE_VIEW,
  readButtonValue,
  reviseModal,
} from "./blocks.js";
import {
  type DecideContext,
  type DecideResult,
  decideAs,
  pendingNote,
  refuse,
  reviewerOf,
  type SlackDecision,
} from "./decide.js";
import { field, list, record, text } from "./json.js";

export interface SlackContext extends DecideContext {
  client: WebClient;
  /** The bot user id of this channel's token (`auth.test`), asked once; undefined when Slack could
   * not say. Only messages this bot posted are taken as Airlock's. */
  ownBotId(): Promise<string | undefined>;
}

/** What to answer Slack: nothing (an empty 200), or a body (a modal's `response_action`). */
export type InteractionAnswer = Record<string, unknown> | undefined;

export async function handleInteraction(
  ctx: SlackContext,
  payload: Record<string, unknown>,
): Promise<InteractionAnswer> {
  switch (text(payload.type)) {
    case "block_actions":
      await blockActions(ctx, payload);
      return undefined;
    case "view_submission":
      return viewSubmission(ctx, payload);
    default:
      return undefined;
  }
}

async function blockActions(ctx: SlackContext, payload: Record<string, unknown>): Promise<void> {
  const action = record(list(payload.actions)[0]);
  const actionId = text(action?.action_id);
  // The button carries the request and the digest of the view its message shows (blocks.ts).
  const { requestId: id, viewDigest } = readButtonValue(text(action?.value) ?? "");
  const requestId = id || undefined;
  const shown = viewDigest === undefined ? {} : { viewDigest };
  const user = text(field(payload, "user", "id"));
  const where = {
    channel:
      text(field(payload, "channel", "id")) ?? text(field(payload, "container", "channel_id")),
    messageTs: text(field(payload, "container", "message_ts")),
  };
  if (!action || !requestId) return; // ticking a checkbox, or a block that is not ours
  const key = `slack:${text(action.action_ts) ?? text(payload.trigger_id) ?? ""}`;
  let result: DecideResult;
  switch (actionId) {
    case ACTION.approve: {
      const blind = await blindApproval(ctx, requestId, viewDigest, user);
      if (blind) return tell(ctx, where.channel, user, blind);
      const approval = await approvalOf(ctx, requestId, payload);
      if (!approval.ok) return tell(ctx, where.channel, user, approval.message);
      result = await decideAs(ctx, requestId, user, { ...approval.decision, ...shown }, key);
      break;
    }
    case ACTION.reject:
      result = await decideAs(
        ctx,
        requestId,
        user,
        { outcome: "rejected", method: "reject", ...shown },
        key,
      );
      break;
    case ACTION.revise:
      return openReviseModal(ctx, requestId, user, text(payload.trigger_id), {
        ...where,
        viewDigest,
      });
    default:
      return; // the Edit link button opens the inbox by itself
  }
  if (!result.ok) return tell(ctx, where.channel, user, result.message);
  const note = pendingNote(result.request);
  if (note) await tell(ctx, where.channel, user, note);
}

/** Why an approval from Slack is refused before it reaches the engine, or undefined: a request whose
 * view a Slack message cannot show in full (view-fit.ts) is not approved from Slack, whatever the
 * payload asks, and neither is one from a message posted before messages carried a view digest. */
export async function blindApproval(
  ctx: SlackContext,
  requestId: string,
  viewDigest: string | undefined,
  user: string | undefined,
): Promise<string | undefined> {
  let request: ApprovalRequest;
  try {
    request = await ctx.deps.airlock.get(requestId);
  } catch {
    return `Not recorded: request ${requestId} does not exist (any more).`;
  }
  if (request.status !== "pending") return undefined; // the engine says who settled it
  const inbox = `${ctx.deps.publicUrl}/requests/${encodeURIComponent(requestId)}`;
  const fitted = outsideFit(request, redactorOf(ctx.deps.airlock), SLACK_VIEW_BUDGET);
  const why = !fitted.fits
    ? tooLargeToApprove(fitted, "Slack", inbox)
    : viewDigest === undefined
      ? noDigestToApprove("Slack message", inbox)
      : undefined;
  if (why) {
    await refuse(
      ctx,
      !fitted.fits
        ? "a Slack approval of a request too large to show in Slack"
        : "a Slack approval without the view digest of the message it came from",
      { requestId, actor: user ? `slack:${user}` : undefined },
    );
  }
  return why;
}

/** An approval of everything, or of the ticked items when fewer than all are ticked. */
async function approvalOf(
  ctx: SlackContext,
  requestId: string,
  payload: Record<string, unknown>,
): Promise<{ ok: true; decision: SlackDecision } | { ok: false; message: string }> {
  const all: SlackDecision = { outcome: "approved", method: "approve_all" };
  const state = record(field(payload, "state", "values", ITEMS_BLOCK));
  if (!state) return { ok: true, decision: all };
  let request: ApprovalRequest;
  try {
    request = await ctx.deps.airlock.get(requestId);
  } catch {
    return { ok: false, message: `Not recorded: request ${requestId} does not exist (any more).` };
  }
  if (!offersItems(request)) return { ok: true, decision: all };
  const ticked = new Set<number>();
  for (const element of Object.values(state)) {
    for (const option of list(record(element)?.selected_options)) {
      const index = Number(text(record(option)?.value));
      if (Number.isInteger(index) && index >= 0 && index < request.items.length) ticked.add(index);
    }
  }
  if (ticked.size === 0) {
    return { ok: false, message: "Not recorded: tick at least one item to approve, or Reject." };
  }
  // Every item ticked is "approve all" only where the request allows it; a request that allows
  // selecting but not approving outright takes the same as a selection of every item.
  if (ticked.size === request.items.length && request.allowed.includes("approve")) {
    return { ok: true, decision: all };
  }
  const selected = request.items.filter((_, i) => ticked.has(i)).map((item) => item.id);
  return { ok: true, decision: { outcome: "approved", method: "select", selected } };
}

async function openReviseModal(
  ctx: SlackContext,
  requestId: string,
  user: string | undefined,
  triggerId: string | undefined,
  where: {
    channel: string | undefined;
    messageTs: string | undefined;
    viewDigest: string | undefined;
  },
): Promise<void> {
  const who = await reviewerOf(ctx, user, requestId);
  if (!who.ok) return tell(ctx, where.channel, user, who.message);
  let request: ApprovalRequest;
  try {
    request = await ctx.deps.airlock.get(requestId);
  } catch {
    return tell(ctx, where.channel, user, `Request ${requestId} does not exist (any more).`);
  }
  // Asked before the modal opens, so nobody writes a comment that cannot count; the decision
  // itself is checked again by the state machine.
  if (!canDecide(request, who.name, who.groups)) {
    const why =
      request.status !== "pending"
        ? `request ${requestId} is already ${request.status}`
        : `${who.name} may not decide request ${requestId}`;
    return tell(ctx, where.channel, user, `You cannot ask for a revision: ${why}.`);
  }
  if (!triggerId) return;
  const origin: { channel?: string; messageTs?: string; viewDigest?: string } = {};
  if (where.channel) origin.channel = where.channel;
  if (where.messageTs) origin.messageTs = where.messageTs;
  if (where.viewDigest) origin.viewDigest = where.viewDigest;
  try {
    // Block Kit JSON built by hand; the SDK's View type is a union too wide to build against.
    const view = reviseModal(
      outsideView(request, redactorOf(ctx.deps.airlock)),
      origin,
    ) as unknown as Parameters<WebClient["views"]["open"]>[0]["view"];
    await ctx.client.views.open({ trigger_id: triggerId, view });
  } catch (err) {
    ctx.deps.logger.warn({ err, requestId }, "could not open the Slack revision modal");
    await tell(ctx, where.channel, user, "Could not open the revision form; try again.");
  }
}

async function viewSubmission(
  ctx: SlackContext,
  payload: Record<string, unknown>,
): Promise<InteractionAnswer> {
  const view = record(payload.view);
  if (text(view?.callback_id) !== REVISE_VIEW) return undefined;
  let requestId: string | undefined;
  let viewDigest: string | undefined;
  try {
    const meta = record(JSON.parse(text(view?.private_metadata) ?? "null"));
    requestId = text(meta?.requestId);
    viewDigest = digestOf(meta?.viewDigest);
  } catch {
    requestId = undefined;
  }
  if (!requestId) return modalError("This form does not name a request; open it again.");
  const comment = text(field(view, "state", "values", REVISE_BLOCK, REVISE_INPUT, "value")) ?? "";
  const key = `slack:${text(payload.trigger_id) ?? text(view?.id) ?? ""}`;
  const user = text(field(payload, "user", "id"));
  const result = await decideAs(
    ctx,
    requestId,
    user,
    {
      outcome: "revise",
      method: "revise",
      comment: comment.trim(),
      ...(viewDigest === undefined ? {} : { viewDigest }),
    },
    key,
  );
  return result.ok ? undefined : modalError(result.message);
}

function modalError(message: string): InteractionAnswer {
  return { response_action: "errors", errors: { [REVISE_BLOCK]: message.slice(0, 2000) } };
}

/** A message only `user` sees, in the channel (and thread) they wrote in. */
export async function tell(
  ctx: SlackContext,
  channel: string | undefined,
  user: string | undefined,
  message: string,
  threadTs?: string,
): Promise<void> {
  if (!channel || !user) return;
  try {
    await ctx.client.chat.postEphemeral({
      channel,
      user,
      text: message,
      ...(threadTs ? { thread_ts: threadTs } : {}),
    });
  } catch (err) {
    ctx.deps.logger.warn({ err, channel }, "could not answer a Slack user");
  }
}
