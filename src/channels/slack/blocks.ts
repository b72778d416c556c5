// What Airlock posts to Slack, as Block Kit: the request message (title, summary, facts, the items as
// checkboxes, the decision buttons), the line that replaces its buttons once the request is over, the
// thread replies (escalation, reminder) and the revision modal. Pure functions: no API calls here.
import { doorLabels } from "../../core/labels.js";
import type { ApprovalRequest, Decision } from "../../core/schemas.js";
import { clip } from "../../core/text.js";
import { countOf, messageDetails } from "../../reply/details.js";

/** Block Kit is plain JSON; only the fields used here are typed. */
export type Block = Record<string, unknown>;

/** The `metadata.event_type` of a request message: how a thread reply finds its request. */
export const METADATA_EVENT_TYPE = "airlock_request";

/** action_id / callback_id values Airlock's blocks carry. */
export const ACTION = {
  approve: "airlock_approve",
  reject: "airlock_reject",
  revise: "airlock_revise",
  edit: "airlock_edit",
  items: "airlock_items",
} as const;
export const ITEMS_BLOCK = "airlock_items";
export const REVISE_VIEW = "airlock_revise";
export const REVISE_BLOCK = "airlock_revise_comment";
export const REVISE_INPUT = "comment";

/** Slack's limits: checkbox options per element, elements per actions block, text lengths. */
const OPTIONS_PER_CHECKBOXES = 10;
/** Beyond this many items the message lists none to tick: the inbox is the place to select. */
export const MAX_CHECKBOX_ITEMS = 100;
const MAX_SECTION_CHARS = 3000;
const MAX_HEADER_CHARS = 150;
const MAX_OPTION_CHARS = 75;

/** Escapes the three characters Slack's mrkdwn gives a meaning to (links, mentions). */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function plain(text: string, max: number) {
  return { type: "plain_text", text: clip(text, max), emoji: false };
}

function mrkdwn(text: string) {
  return { type: "mrkdwn", text: clip(text, MAX_SECTION_CHARS) };
}

/** A moment as Slack shows it in the reader's own time zone, with UTC text as the fallback. */
export function slackTime(ms: number): string {
  return `<!date^${Math.floor(ms / 1000)}^{date_short_pretty} {time}|${utc(ms)}>`;
}

/** "2026-11-23 20:40 UTC": for plain text (notification previews). */
export function utc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** Whether the message offers the items as checkboxes: the request lets one approve a selection. */
export function offersItems(request: ApprovalRequest): boolean {
  return (
    request.items.length > 0 &&
    request.items.length <= MAX_CHECKBOX_ITEMS &&
    request.allowed.includes("select")
  );
}

export function requestText(request: ApprovalRequest): string {
  return `Approval requested: ${request.title}`;
}

/** The message posted when a request is created. `inboxUrl` is the request's page in the inbox. */
export function requestBlocks(request: ApprovalRequest, inboxUrl: string): Block[] {
  const details = messageDetails(request);
  const blocks: Block[] = [{ type: "header", text: plain(request.title, MAX_HEADER_CHARS) }];
  if (request.summary?.trim()) {
    blocks.push({ type: "section", text: mrkdwn(escapeMrkdwn(request.summary.trim())) });
  }
  const context: string[] = [];
  if (details.mainQuery) context.push(`*Question:* ${escapeMrkdwn(details.mainQuery)}`);
  if (details.command) context.push(`*Command:* ${escapeMrkdwn(details.command)}`);
  for (const issue of details.highPriorityCritiques.slice(0, 5)) {
    context.push(`:warning: ${escapeMrkdwn(issue)}`);
  }
  if (context.length > 0) blocks.push({ type: "section", text: mrkdwn(context.join("\n")) });

  const facts = [
    `*Risk:* ${request.risk ?? "not stated"}`,
    `*Requested by:* ${escapeMrkdwn(request.requester)}`,
    `*Deadline:* ${request.deadline === undefined ? "none" : slackTime(request.deadline)}`,
    `*Action:* \`${escapeMrkdwn(clip(request.action, 200))}\``,
  ];
  if (request.quorum > 1) facts.push(`*Approvals needed:* ${request.quorum}`);
  blocks.push({ type: "section", fields: facts.map(mrkdwn) });

  if (request.items.length > 0) {
    const heading = `*${escapeMrkdwn(details.itemsTitle)}* (${countOf(request.items.length, details.itemNoun)})`;
    if (offersItems(request)) {
      blocks.push({ type: "section", text: mrkdwn(heading) });
      blocks.push({ type: "actions", block_id: ITEMS_BLOCK, elements: itemCheckboxes(request) });
    } else {
      const listed = request.items
        .slice(0, 20)
        .map((item, i) => `${i + 1}. ${escapeMrkdwn(clip(item.label, 200))}`);
      if (request.items.length > listed.length) {
        listed.push(`… and ${request.items.length - listed.length} more in the inbox`);
      }
      blocks.push({ type: "section", text: mrkdwn(`${heading}\n${listed.join("\n")}`) });
    }
  }
  blocks.push({
    type: "actions",
    block_id: "airlock_decision",
    elements: buttons(request, inboxUrl),
  });
  return blocks;
}

/** One checkboxes element per ten items (Slack's limit), every item ticked. An option's value is the
 * item's position, so long item ids never meet Slack's value limit. */
function itemCheckboxes(request: ApprovalRequest): Block[] {
  const elements: Block[] = [];
  for (let start = 0; start < request.items.length; start += OPTIONS_PER_CHECKBOXES) {
    const options = request.items.slice(start, start + OPTIONS_PER_CHECKBOXES).map((item, i) => ({
      text: plain(`${start + i + 1}. ${item.label}`, MAX_OPTION_CHARS),
      value: String(start + i),
    }));
    elements.push({
      type: "checkboxes",
      action_id: `${ACTION.items}_${start / OPTIONS_PER_CHECKBOXES}`,
      options,
      initial_options: options,
    });
  }
  return elements;
}

function buttons(request: ApprovalRequest, inboxUrl: string): Block[] {
  const out: Block[] = [];
  // The verb first, the agent's label after it unless it inverts it (core/labels.ts); the approve
  // verb always on the primary (green) button.
  const labels = doorLabels(request);
  if (request.allowed.includes("approve") || request.allowed.includes("select")) {
    out.push({
      type: "button",
      action_id: ACTION.approve,
      text: plain(labels.approve, 75),
      style: "primary",
      value: request.id,
    });
  }
  out.push({
    type: "button",
    action_id: ACTION.reject,
    text: plain(labels.reject, 75),
    style: "danger",
    value: request.id,
  });
  if (request.allowed.includes("revise")) {
    out.push({
      type: "button",
      action_id: ACTION.revise,
      text: plain(labels.revise, 75),
      value: request.id,
    });
  }
  if (request.allowed.includes("edit")) {
    out.push({
      type: "button",
      action_id: ACTION.edit,
      text: plain("Edit", 75),
      url: inboxUrl,
      value: request.id,
    });
  }
  return out;
}

const OUTCOME_WORDS: Record<Decision["outcome"], string> = {
  approved: "Approved",
  rejected: "Rejected",
  revise: "Sent back for revision",
  timed_out: "Timed out",
  cancelled: "Cancelled",
};

/** "Approved by alice (web) at 2026-11-23 20:40 UTC", "Timed out at …": what became of the request. */
export function outcomeLine(decision: Decision, time: (ms: number) => string = utc): string {
  const at = time(decision.decidedAt);
  if (decision.method === "timeout") {
    return decision.outcome === "approved"
      ? `Approved by its deadline rule at ${at}`
      : `${OUTCOME_WORDS[decision.outcome]} at ${at}`;
  }
  const who = `${decision.reviewer} (${decision.channel})`;
  return `${OUTCOME_WORDS[decision.outcome]} by ${who} at ${at}`;
}

/** The request message once it is over: its title and what became of it, no buttons. */
export function outcomeBlocks(request: ApprovalRequest, decision: Decision): Block[] {
  const lines = [`*${escapeMrkdwn(outcomeLine(decision, slackTime))}*`];
  if (decision.selected !== undefined && request.items.length > 0) {
    lines.push(`${decision.selected.length} of ${request.items.length} items approved`);
  }
  if (decision.comment?.trim()) {
    lines.push(`> ${escapeMrkdwn(clip(decision.comment.trim(), 2000)).replace(/\n/g, "\n> ")}`);
  }
  return [
    { type: "header", text: plain(request.title, MAX_HEADER_CHARS) },
    { type: "section", text: mrkdwn(lines.join("\n")) },
  ];
}

/** The modal a reviewer writes their revision request in. */
export function reviseModal(
  request: ApprovalRequest,
  origin: { channel?: string; messageTs?: string },
): Block {
  return {
    type: "modal",
    callback_id: REVISE_VIEW,
    private_metadata: JSON.stringify({ requestId: request.id, ...origin }),
    title: plain("Ask for a revision", 24),
    submit: plain("Send", 24),
    close: plain("Cancel", 24),
    blocks: [
      { type: "section", text: mrkdwn(`*${escapeMrkdwn(clip(request.title, 500))}*`) },
      {
        type: "input",
        block_id: REVISE_BLOCK,
        optional: request.revisionCommentRequired !== true,
        label: plain("What should change?", 2000),
        element: { type: "plain_text_input", action_id: REVISE_INPUT, multiline: true },
      },
    ],
  };
}
