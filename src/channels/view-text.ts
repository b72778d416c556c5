// A review view (view-fit.ts: fitted to a channel's budget) as plain text: the title, who asks and
// who may decide, then each part under its heading (the agent's words labelled as such, the exact
// args as canonical pretty-printed JSON, the preview, the items), and where a part was cut, how
// much of it is not shown. The mail and its link page, and the console, render views with it.
import { type FittedView, notShown, type ViewPart } from "./view-fit.js";

export interface ViewTextOptions {
  /** Leave out the title line (the surface shows it already). @default false */
  withoutTitle?: boolean;
  /** Leave out the facts (action, risk, requester, approvers). @default false */
  withoutFacts?: boolean;
  /** The heading of the items part (e.g. "Proposed queries (3 queries)"). */
  itemsLabel?: string;
}

function heading(part: ViewPart, options: ViewTextOptions): string {
  if (part.key === "agentSummary") return "The agent says (its own words, not checked by Airlock):";
  if (part.key === "items" && options.itemsLabel) return `${options.itemsLabel}:`;
  return `${part.label}:`;
}

/** The view's facts in two lines. */
export function factLines(fitted: FittedView): string[] {
  const v = fitted.view;
  const first = [
    `Action: ${v.action}`,
    `Risk: ${v.risk ?? "not stated"}`,
    `Requested by: ${v.requester}`,
  ];
  const approvers = v.approvers.length > 0 ? v.approvers.join(", ") : "anyone but the requester";
  const second = [`Approvers: ${approvers}`];
  if (v.quorum > 1) second.push(`${v.quorum} approvals needed`);
  if (v.revisionOf) second.push(`revises ${v.revisionOf}`);
  return [first.join(" · "), second.join(" · ")];
}

/** The view as lines of text. */
export function viewTextLines(fitted: FittedView, options: ViewTextOptions = {}): string[] {
  const out: string[] = [];
  const title = fitted.parts.find((p) => p.key === "title");
  if (title && !options.withoutTitle) {
    out.push(title.shown + (title.omitted > 0 ? `… [${notShown(title.omitted)}]` : ""));
  }
  if (!options.withoutFacts) out.push(...factLines(fitted));
  for (const part of fitted.parts) {
    if (part.key === "title") continue;
    out.push("", heading(part, options));
    out.push(part.shown);
    if (part.omitted > 0) out.push(`[… ${notShown(part.omitted)}]`);
  }
  return out;
}
