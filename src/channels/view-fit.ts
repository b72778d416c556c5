// What of a request's review view (core/review-view.ts) a surface with a size limit can show. The
// view's variable parts (the title, the question and command, the agent's words, the exact args as
// canonical pretty-printed JSON, the preview, the items) share one budget of characters per
// channel; a part that does not fit is cut, and the count of characters not shown is kept. A view
// that was cut is not all there: the surface says so, links to the inbox's full view and offers no
// approval (saying no needs no full view). Each surface renders the parts in its own way; the
// budget and the cutting are decided here, once, so a message and the route that receives its
// answer agree on whether it fitted.
import type { Redactor } from "../audit/redact.js";
import { isAirlockError } from "../core/errors.js";
import { canonicalJson } from "../core/hash.js";
import { type ReviewView, reviewViewOf } from "../core/review-view.js";
import type { ApprovalRequest } from "../core/schemas.js";
import { outsideView } from "./outside.js";

/** Characters of a view's parts a Slack message shows (a section holds 3,000; a message about 50
 * blocks): beyond this, the message shows what fits and offers no approval. */
export const SLACK_VIEW_BUDGET = 12_000;
/** Characters of a view's parts a mail (and its link page) shows. */
export const MAIL_VIEW_BUDGET = 20_000;

export type ViewPartKey =
  | "title"
  | "question"
  | "command"
  | "agentSummary"
  | "args"
  | "preview"
  | "items";

export interface ViewPart {
  key: ViewPartKey;
  /** The part's heading, in words. */
  label: string;
  /** The part in full. */
  text: string;
  /** What the surface shows of it: `text`, or its head when cut. */
  shown: string;
  /** Characters of `text` not shown. */
  omitted: number;
}

export interface FittedView {
  view: ReviewView;
  /** The parts the view has, in the order a reviewer reads them (title first, items last). */
  parts: ViewPart[];
  /** Characters not shown, over every part. */
  omitted: number;
  /** Everything shown: the surface may offer approval. */
  fits: boolean;
}

export const PART_LABELS: Readonly<Record<ViewPartKey, string>> = {
  title: "Title",
  question: "Question",
  command: "Command",
  agentSummary: "The agent says",
  args: "Exact arguments (what runs if approved)",
  preview: "Preview",
  items: "Items",
};

/** Order parts are given budget in: what runs first, the agent's own words last. */
const BUDGET_ORDER: readonly ViewPartKey[] = [
  "args",
  "command",
  "question",
  "items",
  "preview",
  "agentSummary",
  "title",
];
/** Order parts are read in. */
const READING_ORDER: readonly ViewPartKey[] = [
  "title",
  "question",
  "command",
  "agentSummary",
  "args",
  "preview",
  "items",
];

/** Canonical JSON text (core/hash.ts: keys sorted at every depth, what the args hash binds)
 * indented by two spaces: re-indented as it stands, so its order and escapes are kept. */
export function prettyJson(canonical: string): string {
  let out = "";
  let depth = 0;
  let inString = false;
  const newline = () => `\n${"  ".repeat(depth)}`;
  for (let i = 0; i < canonical.length; i++) {
    const ch = canonical[i] as string;
    if (inString) {
      out += ch;
      if (ch === "\\") {
        out += canonical[i + 1] ?? "";
        i++;
      } else if (ch === '"') inString = false;
      continue;
    }
    switch (ch) {
      case '"':
        inString = true;
        out += ch;
        break;
      case "{":
      case "[": {
        const close = ch === "{" ? "}" : "]";
        if (canonical[i + 1] === close) {
          out += ch + close;
          i++;
          break;
        }
        depth++;
        out += ch + newline();
        break;
      }
      case "}":
      case "]":
        depth--;
        out += newline() + ch;
        break;
      case ",":
        out += `,${newline()}`;
        break;
      case ":":
        out += ": ";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

/** `value` as canonical, pretty-printed JSON: how every surface shows the exact args. */
export function argsJson(value: unknown): string {
  return prettyJson(canonicalJson(value));
}

/** The items as lines: `1. label — detail`. */
export function itemsText(view: ReviewView): string {
  return view.items
    .map((item, i) => `${i + 1}. ${item.label}${item.detail ? ` — ${item.detail}` : ""}`)
    .join("\n");
}

function partTexts(view: ReviewView): [ViewPartKey, string][] {
  const out: [ViewPartKey, string][] = [["title", view.title]];
  if (view.question?.trim()) out.push(["question", view.question]);
  if (view.command?.trim()) out.push(["command", view.command]);
  if (view.agentSummary?.trim()) out.push(["agentSummary", view.agentSummary]);
  out.push(["args", argsJson(view.args)]);
  if (view.preview?.trim()) out.push(["preview", view.preview]);
  if (view.items.length > 0) out.push(["items", itemsText(view)]);
  return out;
}

/** The head of `text` in at most `max` characters, never cutting a surrogate pair in two. */
function head(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max);
  const code = text.charCodeAt(end - 1);
  if (end > 0 && code >= 0xd800 && code <= 0xdbff) end--;
  return text.slice(0, end);
}

/** The view's parts within `budget` characters: each part in BUDGET_ORDER takes what it needs of
 * what is left; a part that does not get it all is cut. */
export function fitView(view: ReviewView, budget: number): FittedView {
  const texts = new Map(partTexts(view));
  const parts = new Map<ViewPartKey, ViewPart>();
  let left = budget;
  for (const key of BUDGET_ORDER) {
    const text = texts.get(key);
    if (text === undefined) continue;
    const shown = head(text, left);
    left -= shown.length;
    parts.set(key, {
      key,
      label: key === "items" ? `Items (${view.items.length})` : PART_LABELS[key],
      text,
      shown,
      omitted: text.length - shown.length,
    });
  }
  const ordered = READING_ORDER.flatMap((k) => {
    const p = parts.get(k);
    return p ? [p] : [];
  });
  const omitted = ordered.reduce((n, p) => n + p.omitted, 0);
  return { view, parts: ordered, omitted, fits: omitted === 0 };
}

/** The request's view as an outside channel shows it (redacted: outside.ts), fitted to `budget`.
 * The digest a decision from that channel carries is the real request's (`viewDigestOf`), which is
 * what the engine checks: the reviewer saw `[redacted]` where a secret is, and the digest still
 * binds the exact request. */
export function outsideFit(
  request: ApprovalRequest,
  redactor: Redactor,
  budget: number,
): FittedView {
  return fitView(reviewViewOf(outsideView(request, redactor)), budget);
}

/** "12,345 more characters not shown". */
export function notShown(omitted: number): string {
  return `${omitted.toLocaleString("en")} more character${omitted === 1 ? "" : "s"} not shown`;
}

/** Why a channel offers no approval of a view it cut, in words; `where` names the channel. */
export function tooLargeToApprove(fitted: FittedView, where: string, inbox: string): string {
  return `This request is too large to show in ${where} in full (${notShown(fitted.omitted)}), so it cannot be approved from ${where}: open it in the inbox to see all of it and decide there: ${inbox}`;
}

/** Why a decision from a message or link sent before decisions carried a view digest is not taken
 * as an approval. */
export function noDigestToApprove(where: string, inbox: string): string {
  return `This ${where} was sent before Airlock showed a request's exact arguments there, so it cannot approve: open the request in the inbox to see what it would run and decide there: ${inbox}`;
}

/** Whether a refusal says the view changed since it was shown (core/review-view.ts). */
export function isViewChanged(err: unknown): boolean {
  return isAirlockError(err, "view_changed");
}

/** "The request changed since you saw it; look again", in a channel's words. */
export function viewChangedText(where: string, inbox: string): string {
  return `Not recorded: the request changed since ${where} showed it (what you saw is no longer what it asks). Look at it again in the inbox before deciding: ${inbox}`;
}

/** A 64-hex view digest, or undefined for anything else. */
export function digestOf(value: unknown): string | undefined {
  return typeof value === "string" && /^[0-9a-f]{64}$/.test(value) ? value : undefined;
}
