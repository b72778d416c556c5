// The engine's log lines for settled gates, named as operators search for them (pattern 2). The same
// fact has the same field name on every line: `correlation_id`, `request_id`, `outcome`, `reviewer`
// (who decided or cancelled), and `review_duration_ms` (from creation to the decision or timeout).
import type { Logger } from "pino";
import type { ApprovalRequest } from "../core/schemas.js";
import { isPending } from "../core/state.js";

/** "Approval requested", or "Approval settled by policy" (then its decision line too). */
export function logCreated(logger: Logger, r: ApprovalRequest): void {
  logger.info(
    {
      correlation_id: r.correlationId,
      request_id: r.id,
      action: r.action,
      level: r.level,
      deadline: r.deadline,
    },
    isPending(r) ? "Approval requested" : "Approval settled by policy",
  );
  if (!isPending(r)) logDecision(logger, r);
}

/** "Approval cancelled", with who cancelled as `reviewer`, like a decision. */
export function logCancelled(logger: Logger, r: ApprovalRequest): void {
  logger.info(
    {
      correlation_id: r.correlationId,
      request_id: r.id,
      outcome: "cancelled",
      reviewer: r.decision?.reviewer,
      review_duration_ms: (r.decision?.decidedAt ?? r.updatedAt) - r.createdAt,
    },
    "Approval cancelled",
  );
}

/** "Approved action claimed": a process is about to run it (`claimExecution`). */
export function logClaimed(logger: Logger, r: ApprovalRequest): void {
  logger.info(
    {
      correlation_id: r.correlationId,
      request_id: r.id,
      by: r.execution?.claimedBy,
      attempt: r.execution?.attempt,
    },
    "Approved action claimed",
  );
}

/** "Approved action executed" once the action returned, or "Approved action failed". */
export function logExecuted(logger: Logger, r: ApprovalRequest): void {
  const x = r.execution;
  const base = { correlation_id: r.correlationId, request_id: r.id, attempt: x?.attempt };
  if (x?.state === "failed") {
    logger.warn({ ...base, by: x.claimedBy, error: x.error }, "Approved action failed");
    return;
  }
  logger.info({ ...base, by: r.executedBy }, "Approved action executed");
}

/** "Human decision recorded" (or "Human review timeout") for a request that just became terminal. */
export function logDecision(logger: Logger, r: ApprovalRequest): void {
  const d = r.decision;
  if (!d) return;
  const base = { correlation_id: r.correlationId, request_id: r.id, action: r.action };
  if (d.method === "timeout") {
    logger.warn(
      { ...base, outcome: d.outcome, review_duration_ms: d.decidedAt - r.createdAt },
      "Human review timeout",
    );
    return;
  }
  logger.info(
    {
      ...base,
      outcome: d.outcome,
      method: d.method,
      reviewer: d.reviewer,
      channel: d.channel,
      review_duration_ms: d.decidedAt - r.createdAt,
    },
    "Human decision recorded",
  );
}

/** What a deadline did: an escalation (still pending) or the timeout's decision. */
export function logDeadline(logger: Logger, stored: ApprovalRequest): void {
  if (!isPending(stored)) {
    logDecision(logger, stored);
    return;
  }
  logger.warn(
    {
      correlation_id: stored.correlationId,
      request_id: stored.id,
      approvers: stored.approvers,
      deadline: stored.deadline,
    },
    "Approval escalated",
  );
}
