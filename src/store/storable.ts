// What every store refuses to write: text a column cannot keep as written. The memory store, which
// could keep it, refuses the same, so the three stores accept and refuse alike.
import { AirlockError, InvalidInputError } from "../core/errors.js";
import type { ApprovalRequest } from "../core/schemas.js";
import { textProblem } from "../core/text.js";

// A text column cannot keep every JavaScript string as written: PostgreSQL refuses a NUL, and both
// SQL stores turn a lone surrogate into U+FFFD, which would silently change a listed title or break
// the audit hash of an event. Such strings are refused (invalid_input) before any transaction opens,
// by the rule the core schemas apply to input (core/text.ts). The JSON document keeps both, escaped.

/** `value` when a text column keeps it as written; else an InvalidInputError naming `field`. */
export function columnText<T extends string | null | undefined>(value: T, field: string): T {
  const why = typeof value === "string" ? textProblem(value) : undefined;
  if (why) throw new InvalidInputError(`\`${field}\` ${why}`, field);
  return value;
}

/** Refuses a request whose text columns could not hold it as written (see `columnText`). */
export function checkColumns(r: ApprovalRequest): void {
  columnText(r.id, "id");
  columnText(r.key, "key");
  columnText(r.action, "action");
  columnText(r.title, "title");
  columnText(r.requester, "requester");
  for (const a of r.approvers) columnText(a, "approvers");
  columnText(r.correlationId, "correlationId");
  columnText(r.revisionOf, "revisionOf");
  columnText(r.decision?.reviewer, "decision.reviewer");
}

/** Refuses audit events whose text columns could not hold them as written (see `columnText`). */
export function checkDrafts(drafts: readonly { requestId?: string; actor: string }[]): void {
  for (const d of drafts) {
    columnText(d.requestId, "requestId");
    columnText(d.actor, "actor");
  }
}

/** The conflict every store raises when a request's id is taken (by another request or key). */
export function idTaken(id: string, cause?: unknown): AirlockError {
  const message = `request id \`${id}\` already exists`;
  return cause === undefined
    ? new AirlockError("conflict", message)
    : new AirlockError("conflict", message, { cause });
}
