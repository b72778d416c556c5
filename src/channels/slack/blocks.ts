// What Airlock posts to Slack, as Block Kit: the request message (its review view: the title, the
// agent's words labelled as such, the exact args, the preview, the items, the facts; the items as
// checkboxes, the decision buttons), the line that replaces its buttons once the request is over, the
// thread replies (escalation, reminder) and the revision modal. Pure functions: no API calls here.
import { doorLabels } from "../../core/labels.js";
import { reviewViewOf } from "../../core/review-view.js";
import type { ApprovalRequest, Decision } from "../../core/schemas.js";
import { clip } from "../../core/text.js";
import { countOf, messageDetails } from "../../reply/details.js";
import { fitView, notShown, SLACK_VIEW_BUDGET, type ViewPart } from "../view-fit.js";

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

/** What a button on a request message carries: the request's id and the digest of the review view
 * the message shows (core/review-view.ts), so the decision is bound to what was shown. */
export function buttonValue(requestId: string, viewDigest: string): string {
  return `${requestId} ${viewDigest}`;
}

/** A button's value read back: the request id, and the view digest when the message carried one
 * (messages posted before views were bound carry the id alone). */
export function readButtonValue(value: string): { requestId: string; viewDigest?: string } {
  const [requestId = "", digest] = value.trim().split(/\s+/, 2);
  return digest && /^[0-9a-f]{64}$/.test(digest)
    ? { requestId, viewDigest: digest }
    : { requestId };
}

/** Section texts of at most MAX_SECTION_CHARS for one part of the view: its heading on the first,
 * the text (escaped; in a code block for args and previews) cut at chunk boundaries, and what was
 * not shown said after it. */
function partSections(part: ViewPart, label = part.label): string[] {
  const code = part.key === "args" || part.key === "preview";
  const heading =
    part.key === "agentSummary"
      ? "*The agent says* (its own words, not checked by Airlock):"
      : `*${escapeMrkdwn(label)}:*`;
  const room = MAX_SECTION_CHARS - heading.length - 16;
  const chunks = chunk(escapeMrkdwn(part.shown), room);
  const out = chunks.map((c, i) => {
    const body = code ? `\`\`\`${c}\`\`\`` : c;
    return i === 0 ? `${heading}\n${body}` : body;
  });
  if (part.omitted > 0) out.push(`_… ${notShown(part.omitted)}_`);
  return out;
}

/** `text` in pieces of at most `max` characters, never cutting an escape (`&amp;`) or a surrogate
 * pair, preferring to cut after a line. */
function chunk(text: string, max: number): string[] {
  if (text === "") return [" "];
  const out: string[] = [];
  let rest = text;
  for (let guard = 0; rest.length > 0 && guard < 10_000; guard++) {
    if (rest.length <= max) {
      out.push(rest);
      break;
    }
    let end = rest.lastIndexOf("\n", max);
    if (end < max / 2) end = max;
    const amp = rest.lastIndexOf("&", end - 1);
    if (amp > end - 5 && amp >= 0) end = amp;
    const code = rest.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end--;
    out.push(rest.slice(0, end));
    rest = rest.slice(end);
  }
  return out;
}

/** The message posted when a request is created, rendered from the request's review view
 * (`request` is the request as Slack may see it: redacted). `viewDigest` is the digest of the real
 * request's view, carried by the buttons. A view that does not fit (SLACK_VIEW_BUDGET) shows what
 * fits, says how much is not shown, links to the inbox, and has no approve button. */
export function requestBlocks(
  request: ApprovalRequest,
  inboxUrl: string,
  viewDigest: string,
): Block[] {
  const fitted = fitView(reviewViewOf(request), SLACK_VIEW_BUDGET);
  const { view } = fitted;
  const details = messageDetails(request);
  const blocks: Block[] = [{ type: "header", text: plain(view.title, MAX_HEADER_CHARS) }];
  const itemsLabel = `${details.itemsTitle} (${countOf(view.items.length, details.itemNoun)})`;
  for (const part of fitted.parts) {
    // The header holds a title that is not longer than it; a longer one is given in full below it.
    if (part.key === "title" && part.text.length <= MAX_HEADER_CHARS) continue;
    const label = part.key === "items" ? itemsLabel : part.label;
    for (const text of partSections(part, label)) {
      blocks.push({ type: "section", text: mrkdwn(text) });
    }
  }
  const critiques = details.highPriorityCritiques
    .slice(0, 5)
    .map((issue) => `:warning: ${escapeMrkdwn(issue)}`);
  if (critiques.length > 0) {
    blocks.push({ type: "section", text: mrkdwn(critiques.join("\n")) });
  }

  const facts = [
    `*Risk:* ${view.risk ?? "not stated"}`,
    `*Requested by:* ${escapeMrkdwn(view.requester)}`,
    `*Deadline:* ${request.deadline === undefined ? "none" : slackTime(request.deadline)}`,
    `*Action:* \`${escapeMrkdwn(clip(view.action, 200))}\``,
    `*Approvers:* ${escapeMrkdwn(clip(view.approvers.join(", ") || "anyone but the requester", 500))}`,
  ];
  if (view.quorum > 1) facts.push(`*Approvals needed:* ${view.quorum}`);
  if (view.revisionOf) facts.push(`*Revises:* \`${escapeMrkdwn(view.revisionOf)}\``);
  blocks.push({ type: "section", fields: facts.map(mrkdwn) });

  if (fitted.fits && offersItems(request)) {
    const heading = `*Tick the ${escapeMrkdwn(details.itemNoun)} to approve:*`;
    blocks.push({ type: "section", text: mrkdwn(heading) });
    blocks.push({ type: "actions", block_id: ITEMS_BLOCK, elements: itemCheckboxes(request) });
  }
  if (!fitted.fits) {
    blocks.push({
      type: "section",
      text: mrkdwn(
        `:warning: *Not all of this request fits in a Slack message* (${notShown(fitted.omitted)}), so it cannot be approved here. <${inboxUrl}|Open it in the inbox> to see all of it and to approve; you can still reject it here.`,
      ),
    });
  }
  blocks.push({
    type: "actions",
    block_id: "airlock_decision",
    elements: buttons(request, inboxUrl, viewDigest, fitted.fits),
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

function buttons(
  request: ApprovalRequest,
  inboxUrl: string,
  viewDigest: string,
  fits: boolean,
): Block[] {
  const out: Block[] = [];
  const value = buttonValue(request.id, viewDigest);
  // The verb first, the agent's label after it unless it inverts it (core/labels.ts); the approve
  // verb always on the primary (green) button.
  const labels = doorLabels(request);
  // No approve button on a view the message could not show in full: approving blind is refused.
  if (fits && (request.allowed.includes("approve") || request.allowed.includes("select"))) {
    out.push({
      type: "button",
      action_id: ACTION.approve,
      text: plain(labels.approve, 75),
      style: "primary",
      value,
    });
  }
  out.push({
    type: "button",
    action_id: ACTION.reject,
    text: plain(labels.reject, 75),
    style: "danger",
    value,
  });
  if (request.allowed.includes("revise")) {
    out.push({
      type: "button",
      action_id: ACTION.revise,
      text: plain(labels.revise, 75),
      value,
    });
  }
  if (fits && request.allowed.includes("edit")) {
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
  responded: "Answered",
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
  /** Where the button was, and the digest of the view its message showed (kept with the form, so
   * the revision is bound to that view too). */
  origin: { channel?: string; messageTs?: string; viewDigest?: string },
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
