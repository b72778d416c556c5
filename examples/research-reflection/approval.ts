// The approval step of pattern 1. It always runs: with `requireApproval: false` the gate approves
// itself (method `auto`, recorded), with no recommended queries it settles as `no_items`, and any
// failure (the server unreachable, the wait broken) is "not approved" with method `error`.
// The queries are the request's items; `formatRequest(request, "text")` gives the message for chat
// and email, answered with `APPROVE ALL`, `SKIP` or `SELECT 1,3` through `decideByReply`.
import type { ApprovalRequest, Channel } from "../../src/core/schemas.js";
import { formatRequest } from "../../src/reply/format.js";
import { type ParsedReply, parseReply, replyToDecision } from "../../src/reply/parse.js";
import type { Reflection } from "../planner/index.js";
import { errorMessage, type Gate } from "../shared/gate.js";
import type { ProgressSummary } from "./steps.js";

/** The seed's `ApprovalDecision`, with Airlock's method names. */
export interface ApprovalDecision {
  approved: boolean;
  selectedQueries: string[];
  /** approve_all, select, auto, skip, reject, parse_error, no_items, timeout, revise, cancel, error */
  approvalMethod: string;
  reviewerNotes: string;
  timestamp: number;
  requestId?: string;
  reviewer?: string;
}

export interface ApprovalStepOptions {
  mainQuery: string;
  progress: ProgressSummary;
  requireApproval: boolean;
  timeoutMs: number;
  requester: string;
  key?: string;
  signal?: AbortSignal;
  /** Called once the gate exists, with the message to send to a chat or email reviewer. */
  onRequest?: (request: ApprovalRequest, message: string) => void | Promise<void>;
}

/** Rough figures per extra query: two model calls and a few fetches. */
export const MINUTES_PER_QUERY = 2;
export const DOLLARS_PER_QUERY = 0.04;

export const RESEARCH_ACTION = "research.search";

export async function getResearchApproval(
  gate: Gate,
  reflection: Reflection,
  opts: ApprovalStepOptions,
): Promise<{ decision: ApprovalDecision; request?: ApprovalRequest; message?: string }> {
  const queries = reflection.recommendedQueries;
  let created: ApprovalRequest | undefined;
  try {
    created = await gate.request({
      ...(opts.key ? { key: opts.key } : {}),
      action: RESEARCH_ACTION,
      title: `Run ${queries.length} additional research ${queries.length === 1 ? "query" : "queries"}?`,
      summary: statusDigest(opts.progress, reflection),
      items: queries.map((q, i) => ({ id: `q${i + 1}`, label: q })),
      args: { queries },
      allowed: ["approve", "reject", "select"],
      requireApproval: opts.requireApproval,
      timeoutMs: opts.timeoutMs,
      requester: opts.requester,
      metadata: {
        mainQuery: opts.mainQuery,
        estimatedMinutes: queries.length * MINUTES_PER_QUERY,
        estimatedCost: Math.round(queries.length * DOLLARS_PER_QUERY * 100) / 100,
        itemsTitle: "Proposed Additional Research",
        itemNoun: "queries",
        // Under their own key: the digest in `summary` already shows them (see statusDigest).
        research: { progress: opts.progress, critiques: reflection.critique },
      },
    });
    const message = formatRequest(created, "text");
    if (created.status === "pending") await opts.onRequest?.(created, message);
    const settled =
      created.status === "pending"
        ? await gate.waitFor(created.id, opts.signal ? { signal: opts.signal } : {})
        : created;
    return { decision: toApprovalDecision(settled), request: settled, message };
  } catch (err) {
    const reason = `Approval failed: ${errorMessage(err)}`;
    // Leave no orphan gate behind for a reviewer to decide in vain.
    if (created?.status === "pending") {
      await gate.cancel(created.id, { reason }).catch(() => undefined);
    }
    const decision: ApprovalDecision = {
      approved: false,
      selectedQueries: [],
      approvalMethod: "error",
      reviewerNotes: reason,
      timestamp: Date.now(),
    };
    if (created) decision.requestId = created.id;
    return { decision };
  }
}

/** Progress and high-priority critiques as plain lines (they read well as text and as markdown), in
 * `summary` so that every channel shows them: the inbox renders the summary, and the text message of
 * `formatRequest` puts it between the main query and the proposed queries. */
function statusDigest(progress: ProgressSummary, reflection: Reflection): string {
  const high = reflection.critique.filter((c) => c.importance === "high");
  return [
    "Current status:",
    `- Sub-questions analyzed: ${progress.completedCount}`,
    `- Average confidence: ${progress.avgConfidence}`,
    `- Low confidence areas: ${progress.lowConfidenceCount}`,
    ...(high.length ? ["", "Key issues identified:", ...high.map((c) => `- ${c.issue}`)] : []),
  ].join("\n");
}

const DEFAULT_NOTES: Record<string, string> = {
  auto: "Approval not required by configuration",
  no_items: "No additional queries recommended",
  timeout: "No decision before the deadline",
};

/** Reads the gate's terminal state as the pipeline's decision. Only an approval selects queries. */
export function toApprovalDecision(request: ApprovalRequest): ApprovalDecision {
  const d = request.decision;
  const method = d?.method ?? "error";
  const approved = request.status === "approved";
  const chosen = new Set(d?.selected ?? request.items.map((i) => i.id));
  const decision: ApprovalDecision = {
    approved,
    selectedQueries: approved
      ? request.items.filter((i) => chosen.has(i.id)).map((i) => i.label)
      : [],
    approvalMethod: method,
    reviewerNotes: d?.comment ?? DEFAULT_NOTES[method] ?? "",
    timestamp: d?.decidedAt ?? Date.now(),
    requestId: request.id,
  };
  if (d?.reviewer) decision.reviewer = d.reviewer;
  return decision;
}

/** Decides the gate from a typed reply (`APPROVE ALL`, `SKIP`, `SELECT 1,3`), as a chat or email
 * channel would. An unreadable reply is recorded as `parse_error`, never as an approval. */
export async function decideByReply(
  gate: Gate,
  requestId: string,
  text: string,
  who: { reviewer: string; channel?: Channel },
): Promise<{ reply: ParsedReply; request: ApprovalRequest }> {
  const request = await gate.get(requestId);
  const reply = parseReply(text, request.items);
  const decision = replyToDecision(reply, {
    reviewer: who.reviewer,
    channel: who.channel ?? "chat",
  });
  if (reply.approved && reply.dropped.length) {
    decision.comment = `Out-of-range numbers ignored: ${reply.dropped.join(", ")}`;
  }
  return { reply, request: await gate.decide(requestId, decision) };
}
