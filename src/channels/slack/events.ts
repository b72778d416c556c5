// Slack events, over HTTP or Socket Mode alike: a reply in the thread of a request message, in the
// reply grammar (APPROVE ALL, SELECT 1,3, REJECT …, REVISE …), decides that request. The thread's
// parent carries the request id in its message metadata. Other messages are conversation: ignored.
import type { ApprovalRequest } from "../../core/schemas.js";
import { parseReply, replyToDecision } from "../../reply/parse.js";
import { digestOf } from "../view-fit.js";
import { METADATA_EVENT_TYPE } from "./blocks.js";
import { decideAs, pendingNote, refuse } from "./decide.js";
import { blindApproval, type SlackContext, tell } from "./interactions.js";
import { field, list, record, text } from "./json.js";

/** The answer to an Events API body: the challenge of a `url_verification`, else nothing. */
export async function handleEvent(
  ctx: SlackContext,
  body: Record<string, unknown>,
): Promise<{ challenge: string } | undefined> {
  if (text(body.type) === "url_verification") return { challenge: text(body.challenge) ?? "" };
  if (text(body.type) !== "event_callback") return undefined;
  const event = record(body.event);
  if (event && text(event.type) === "message") await threadReply(ctx, event);
  return undefined;
}

async function threadReply(ctx: SlackContext, event: Record<string, unknown>): Promise<void> {
  // Bots (Airlock's own thread replies among them) and edits, joins and deletions decide nothing.
  if (event.bot_id !== undefined || event.subtype !== undefined) return;
  const channel = text(event.channel);
  const threadTs = text(event.thread_ts);
  const ts = text(event.ts);
  const user = text(event.user);
  const message = text(event.text);
  if (!channel || !threadTs || !ts || threadTs === ts || !message) return;

  const parent = await requestOfThread(ctx, channel, threadTs);
  if (!parent) return;
  const { requestId, viewDigest } = parent;
  let request: ApprovalRequest;
  try {
    request = await ctx.deps.airlock.get(requestId);
  } catch {
    return;
  }
  const reply = parseReply(message, request.items);
  const who = user ? ctx.deps.identities.bySlackUser(user) : undefined;
  if (!reply.ok) {
    // A thread is also a place to talk: only people who can decide are told how to answer.
    if (who && request.status === "pending") {
      await tell(ctx, channel, user, `Not recorded: ${reply.error}.`, threadTs);
    }
    return;
  }
  if (!who) {
    await refuse(ctx, `Slack user ${user ?? "(none)"} is not mapped to a reviewer`, {
      requestId,
      actor: user ? `slack:${user}` : undefined,
    });
    await tell(
      ctx,
      channel,
      user,
      "Airlock does not know your Slack account, so it cannot record your decision.",
      threadTs,
    );
    return;
  }
  const {
    reviewer: _reviewer,
    channel: _channel,
    groups: _groups,
    ...decision
  } = replyToDecision(reply, { reviewer: who.name, channel: "slack" });
  // An approval by reply is refused where the Approve button is not offered (view-fit.ts).
  if (decision.outcome === "approved") {
    const blind = await blindApproval(ctx, requestId, viewDigest, user);
    if (blind) return tell(ctx, channel, user, blind, threadTs);
  }
  // Bound to the view the thread's message shows, as its buttons are.
  if (viewDigest !== undefined) decision.viewDigest = viewDigest;
  const result = await decideAs(ctx, requestId, user, decision, `slack:${channel}:${ts}`);
  if (!result.ok) return tell(ctx, channel, user, result.message, threadTs);
  const note = pendingNote(result.request);
  if (note) await tell(ctx, channel, user, note, threadTs);
}

/** The request id (and the digest of the view the message shows) in the metadata of the thread's
 * parent message, if Airlock posted it: its metadata alone proves nothing (any app, or a user's
 * token, can post the same metadata naming any request), so the parent must also have been posted
 * by this channel's own bot. */
async function requestOfThread(
  ctx: SlackContext,
  channel: string,
  threadTs: string,
): Promise<{ requestId: string; viewDigest?: string } | undefined> {
  try {
    const history = await ctx.client.conversations.history({
      channel,
      latest: threadTs,
      inclusive: true,
      limit: 1,
      include_all_metadata: true,
    });
    const parent = record(list(history.messages)[0]);
    if (!parent || text(parent.ts) !== threadTs) return undefined;
    if (text(field(parent, "metadata", "event_type")) !== METADATA_EVENT_TYPE) return undefined;
    const own = await ctx.ownBotId();
    if (own === undefined || text(parent.bot_id) !== own) {
      ctx.deps.logger.warn(
        { channel, threadTs, postedBy: text(parent.bot_id) ?? text(parent.user) },
        own === undefined
          ? "a Slack thread reply ignored: Slack did not say which bot this channel is"
          : "a Slack thread reply answers a message Airlock's bot did not post; ignored",
      );
      return undefined;
    }
    const requestId = text(field(parent, "metadata", "event_payload", "request_id"));
    if (!requestId) return undefined;
    const viewDigest = digestOf(field(parent, "metadata", "event_payload", "view_digest"));
    return viewDigest === undefined ? { requestId } : { requestId, viewDigest };
  } catch (err) {
    ctx.deps.logger.warn({ err, channel }, "could not read the parent of a Slack thread");
    return undefined;
  }
}
