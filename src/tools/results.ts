// What a wrapped tool returns instead of its own result: a pending marker (a human has to decide
// first) or a rejection the model can read (and must not retry as is). Both are plain JSON.
import type { Level } from "../core/schemas.js";
import type { NotRunReason } from "../engine/run-approved.js";
import type { PublicHitlConfig } from "./config.js";

export const HITL_PENDING_KEY = "__hitl_pending__";

export interface HitlResult {
  requiresApproval: true;
  approvalLevel: Exclude<Level, "auto">;
  confidenceScore: number;
  toolName: string;
  /** The call's arguments, with sensitive keys redacted. */
  toolArgs: Record<string, unknown>;
  config: PublicHitlConfig;
  /** The Airlock request to decide (and to `resume` the tool with); absent without a gate. */
  approvalId?: string;
  description: string;
}

/** The marker of a call waiting for a human (non-blocking mode). The key names are kept from the
 * pattern-3 wire format so front ends can detect it. */
export interface HitlPending {
  __hitl_pending__: true;
  hitl_result: HitlResult;
}

/** Why the call was not executed: `runApproved`'s reasons, all but `pending` and `responded` (a
 * response is no rejection: see HitlResponse); `invalid_args` when
 * the approved args do not fit the tool's `schema` (checked before the execution is claimed). */
export type RejectionCode = Exclude<NotRunReason, "pending" | "responded"> | "invalid_args";

/** A call that was not and will not be executed; `retry: false` tells the model not to repeat it. */
export interface HitlRejection {
  rejected: true;
  retry: false;
  reason: string;
  code: RejectionCode;
  toolName: string;
  approvalId: string;
  /** The reviewer's words, when they gave any. */
  comment?: string;
  reviewer?: string;
}

export function isHitlPending(value: unknown): value is HitlPending {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as Record<string, unknown>)[HITL_PENDING_KEY] === true
  );
}

export function isHitlRejection(value: unknown): value is HitlRejection {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return v.rejected === true && v.retry === false && typeof v.reason === "string";
}

/** A reviewer answered the call instead of approving it (the `respond` decision, for a tool with
 * `respond` set): the wrapped function did not run, and `response` is what the person said, for the
 * agent to use as the tool's result ("the person acts as the tool"). */
export interface HitlResponse {
  responded: true;
  /** The reviewer's answer: any JSON value, fitting `respond.schema` when the tool gave one. */
  response: unknown;
  toolName: string;
  approvalId: string;
  reviewer?: string;
  /** A note the reviewer added to the answer. */
  comment?: string;
}

export function isHitlResponse(value: unknown): value is HitlResponse {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return v.responded === true && "response" in v && typeof v.approvalId === "string";
}
