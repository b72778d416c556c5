// One decision from Slack: the Slack user mapped to a reviewer through the configured identities,
// then `airlock.decideAs()`, which asks core/authority.ts (approvers, quorum, no self-approval). Its
// refusals become a sentence for the person who clicked; refusals of who they are are audited.
import { actorOf } from "../../core/authority.js";
import { isAirlockError } from "../../core/errors.js";
import type { ApprovalRequest, DecisionInput } from "../../core/schemas.js";
import type { InboundDeps } from "../types.js";
import { isViewChanged, viewChangedText } from "../view-fit.js";

export type SlackDecision = Omit<DecisionInput, "reviewer" | "groups" | "channel" | "key">;

export type DecideResult =
  | { ok: true; request: ApprovalRequest; reviewer: string }
  | { ok: false; message: string };

export interface DecideContext {
  deps: InboundDeps;
  /** The configured channel's name (the audit's `target`). */
  target: string;
}

/** Records a refused attempt without letting an audit failure hide the answer to the user. */
export async function refuse(
  ctx: DecideContext,
  reason: string,
  extra: { requestId?: string | undefined; actor?: string | undefined } = {},
): Promise<void> {
  const refusal: Parameters<InboundDeps["refuse"]>[0] = {
    channel: "slack",
    target: ctx.target,
    reason,
  };
  if (extra.requestId !== undefined) refusal.requestId = extra.requestId;
  if (extra.actor !== undefined) refusal.actor = extra.actor;
  try {
    await ctx.deps.refuse(refusal);
  } catch (err) {
    ctx.deps.logger.error({ err, target: ctx.target }, "could not audit a refused Slack attempt");
  }
}

/** The reviewer behind a Slack user, or a refusal (audited) when the configuration does not know them. */
export async function reviewerOf(
  ctx: DecideContext,
  slackUser: string | undefined,
  requestId: string | undefined,
): Promise<{ ok: true; name: string; groups: string[] } | { ok: false; message: string }> {
  const who = slackUser ? ctx.deps.identities.bySlackUser(slackUser) : undefined;
  if (!slackUser || !who) {
    await refuse(ctx, `Slack user ${slackUser ?? "(none)"} is not mapped to a reviewer`, {
      requestId,
      actor: slackUser ? `slack:${slackUser}` : undefined,
    });
    return {
      ok: false,
      message:
        "Airlock does not know your Slack account, so it cannot record your decision. Ask an administrator to add your Slack user id to the identities.",
    };
  }
  return { ok: true, name: who.name, groups: who.groups };
}

/** Decides `requestId` as the reviewer behind `slackUser`. `key` makes a retried delivery of the
 * same interaction a replay rather than a second vote. */
export async function decideAs(
  ctx: DecideContext,
  requestId: string,
  slackUser: string | undefined,
  decision: SlackDecision,
  key: string | undefined,
): Promise<DecideResult> {
  const who = await reviewerOf(ctx, slackUser, requestId);
  if (!who.ok) return who;
  // A signed interaction from a mapped Slack user: authority (core/authority.ts) decides the rest.
  const actor = actorOf({
    name: who.name,
    groups: who.groups,
    proof: "slack_signature",
    channel: "slack",
  });
  try {
    const request = await ctx.deps.airlock.decideAs(actor, requestId, {
      ...decision,
      ...(key === undefined ? {} : { key: key.slice(0, 200) }),
    });
    return { ok: true, request, reviewer: who.name };
  } catch (err) {
    if (isAirlockError(err, "forbidden")) {
      await refuse(ctx, err.message, { requestId, actor: who.name });
      return { ok: false, message: `Not recorded: ${err.message}.` };
    }
    if (isViewChanged(err)) {
      return {
        ok: false,
        message: viewChangedText(
          "the Slack message",
          `${ctx.deps.publicUrl}/requests/${encodeURIComponent(requestId)}`,
        ),
      };
    }
    if (isAirlockError(err, "conflict") || isAirlockError(err, "invalid_input")) {
      return { ok: false, message: `Not recorded: ${err.message}.` };
    }
    if (isAirlockError(err, "not_found")) {
      return {
        ok: false,
        message: `Not recorded: request ${requestId} does not exist (any more).`,
      };
    }
    ctx.deps.logger.error({ err, requestId }, "a Slack decision failed");
    return {
      ok: false,
      message: "Not recorded: Airlock could not record the decision; try again.",
    };
  }
}

/** A sentence confirming a decision that did not end the request (an approval towards a quorum). */
export function pendingNote(request: ApprovalRequest): string | undefined {
  if (request.status !== "pending") return undefined;
  const approvals = request.decisions.filter((d) => d.outcome === "approved").length;
  return `Your approval is recorded: ${approvals} of ${request.quorum} needed.`;
}
