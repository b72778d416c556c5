// The body of a request mail and of its link page: the request's review view fitted to what a mail
// shows (view-fit.ts, MAIL_VIEW_BUDGET) as text (view-text.ts), the context pattern 1's reviewers
// weigh it by (progress, high-priority critiques, estimates), and the replies it takes in the reply
// grammar. A view that was cut says how much is not shown and offers no approving reply.
import type { ApprovalRequest } from "../../core/schemas.js";
import { countOf, messageDetails } from "../../reply/details.js";
import { terminalSafe, timeLeftMs } from "../../reply/format.js";
import { type FittedView, notShown } from "../view-fit.js";
import { viewTextLines } from "../view-text.js";

export interface MailBodyOptions {
  /** Now (epoch ms), for the time left. */
  now: number;
  /** The request's page in the inbox: where a view that was cut is seen in full. */
  inbox: string;
}

/** The replies `request` accepts, without the approving ones when its view did not fit. */
export function replyOptions(request: ApprovalRequest, fits: boolean): [string, string][] {
  const d = messageDetails(request);
  const allowed = new Set(request.allowed);
  const n = request.items.length;
  const out: [string, string][] = [];
  if (n > 0) {
    if (fits && allowed.has("approve"))
      out.push(["APPROVE ALL", `to proceed with all ${d.itemNoun}`]);
    if (allowed.has("reject")) out.push(["SKIP", "to finish with current findings"]);
    if (fits && allowed.has("select")) {
      const example = n >= 5 ? "1,3,5" : n >= 3 ? "1,3" : n === 2 ? "1,2" : "1";
      out.push([`SELECT ${example}`, `to approve specific ${d.itemNoun} by number`]);
    }
  } else {
    if (fits && allowed.has("approve")) out.push(["APPROVE", "to go ahead"]);
    if (allowed.has("reject")) out.push(["REJECT <reason>", "to stop it"]);
  }
  if (allowed.has("revise")) out.push(["REVISE <comment>", "to ask for changes"]);
  return out;
}

function timeoutSentence(ms: number): string {
  if (ms <= 0) return "the deadline has passed";
  if (ms < 60_000) return `Response required within ${Math.ceil(ms / 1000)} seconds`;
  const minutes = Math.floor(ms / 60_000);
  return `Response required within ${minutes} minute${minutes === 1 ? "" : "s"}`;
}

/** The body of a request mail (and of its link page): `request` as the mail may show it (redacted),
 * `fitted` its view fitted to the mail. Terminal-safe text: no control character of the agent's
 * reaches the reader. */
export function mailBody(
  request: ApprovalRequest,
  fitted: FittedView,
  options: MailBodyOptions,
): string {
  const d = messageDetails(request);
  const out = viewTextLines(fitted, {
    itemsLabel: `${d.itemsTitle} (${countOf(request.items.length, d.itemNoun)})`,
  });
  if (d.progress.length) {
    out.push("", "Current status:", ...d.progress.map(([k, v]) => `- ${k}: ${v}`));
  }
  if (d.highPriorityCritiques.length) {
    out.push("", "Key issues identified:", ...d.highPriorityCritiques.map((c) => `- ${c}`));
  }
  if (d.estimatedMinutes !== undefined || d.estimatedCost !== undefined) out.push("");
  if (d.estimatedMinutes !== undefined) {
    out.push(`Estimated additional time: ~${d.estimatedMinutes} minutes`);
  }
  if (d.estimatedCost !== undefined) out.push(`Estimated additional cost: ~${d.estimatedCost}`);
  if (!fitted.fits) {
    out.push(
      "",
      `NOT ALL OF THIS REQUEST FITS IN A MAIL (${notShown(fitted.omitted)}), so it cannot be approved from this mail. Open it in the inbox to see all of it and to approve: ${options.inbox}`,
    );
  }
  out.push("", "Response options:");
  for (const [reply, meaning] of replyOptions(request, fitted.fits)) {
    out.push(`- Reply ${reply} ${meaning}`);
  }
  const left = timeLeftMs(request, { now: options.now });
  if (left !== undefined) out.push("", `Timeout: ${timeoutSentence(left)}`);
  return terminalSafe(out.join("\n"), { multiline: true });
}
