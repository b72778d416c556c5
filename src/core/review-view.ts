// The review view: what a reviewer is shown of a request, as one structured document computed here
// and nowhere else, and its digest. A surface renders the view (each in its own way) and sends back
// the digest it displayed with the decision; the engine refuses a decision whose digest is not the
// request's current one (`view_changed`) and records the digest with the decision, so an approval
// proves what was shown. The view holds what a person judges by (the agent's words labelled as
// such, the exact args, the preview, the items, who asks and who may decide, the revision it
// replaces) and nothing that moves on its own (no countdown, no votes so far).
import { ViewChangedError } from "./errors.js";
import { canonicalJson, sha256 } from "./hash.js";
import type { ApprovalRequest } from "./schemas.js";

export interface ReviewView {
  id: string;
  title: string;
  action: string;
  risk?: string;
  confidence?: number;
  level: string;
  requester: string;
  approvers: string[];
  quorum: number;
  /** The agent's own account of the request: its words, not a fact Airlock checked. */
  agentSummary?: string;
  /** Exactly what runs when approved as is. */
  args: Record<string, unknown>;
  argsHash: string;
  preview?: string;
  items: { id: string; label: string; detail?: string }[];
  allowed: string[];
  /** What a response must look like, when the request allows `respond` and describes one. */
  responseSchema?: Record<string, unknown>;
  revisionOf?: string;
  question?: string;
  command?: string;
}

/** The request's review view. */
export function reviewViewOf(r: ApprovalRequest): ReviewView {
  const view: ReviewView = {
    id: r.id,
    title: r.title,
    action: r.action,
    level: r.level,
    requester: r.requester,
    approvers: [...r.approvers],
    quorum: r.quorum,
    args: r.args,
    argsHash: r.argsHash,
    items: r.items.map((i) =>
      i.detail === undefined
        ? { id: i.id, label: i.label }
        : { id: i.id, label: i.label, detail: i.detail },
    ),
    allowed: [...r.allowed],
  };
  if (r.risk !== undefined) view.risk = r.risk;
  if (r.confidence !== undefined) view.confidence = r.confidence;
  if (r.summary !== undefined) view.agentSummary = r.summary;
  if (r.preview !== undefined) view.preview = r.preview;
  if (r.responseSchema !== undefined) view.responseSchema = r.responseSchema;
  if (r.revisionOf !== undefined) view.revisionOf = r.revisionOf;
  if (r.question !== undefined) view.question = r.question;
  if (r.command !== undefined) view.command = r.command;
  return view;
}

/** SHA-256 (hex) of the view's canonical JSON. */
export function viewDigestOf(r: ApprovalRequest): string {
  return sha256(canonicalJson(reviewViewOf(r)));
}

/** Throws `view_changed` (HTTP 409) when a decision was taken on a view that is no longer the
 * request's. */
export function checkViewDigest(r: ApprovalRequest, shown: string | undefined): void {
  if (shown === undefined) return;
  const now = viewDigestOf(r);
  if (shown !== now) {
    throw new ViewChangedError(
      `view_changed: the view of ${r.id} changed since it was shown (digest ${shown.slice(0, 12)}…, now ${now.slice(0, 12)}…); look at it again before deciding`,
      r,
    );
  }
}
