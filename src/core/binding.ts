// Binding an approval to what it approved: before executing, check that the request was approved,
// that the arguments about to be used hash to what the reviewer saw (or edited), and that the
// approval has not expired. An approval can never be stretched to other arguments or a later day.
import { hashArgs } from "./hash.js";
import type { ApprovalRequest } from "./schemas.js";
import { isApproved } from "./state.js";

export type ExecutionCheck =
  | { ok: true; args: Record<string, unknown> }
  | { ok: false; reason: "not_approved" | "args_mismatch" | "expired"; detail: string };

/** The args to execute with when `args` is omitted: the edited args if any, else the request's. */
export function verifyApproval(
  request: ApprovalRequest,
  args?: Record<string, unknown>,
  now: number = Date.now(),
): ExecutionCheck {
  const d = request.decision;
  if (!isApproved(request) || !d) {
    return {
      ok: false,
      reason: "not_approved",
      detail: `request ${request.id} is ${request.status}, not approved`,
    };
  }
  const approved = d.editedArgs ?? request.args;
  const toRun = args ?? approved;
  const expected = d.argsHash ?? request.argsHash;
  if (hashArgs(toRun) !== expected) {
    return {
      ok: false,
      reason: "args_mismatch",
      detail: `the arguments differ from what ${d.reviewer} approved (hash ${expected.slice(0, 12)}…)`,
    };
  }
  if (d.validUntil !== undefined && now > d.validUntil) {
    return {
      ok: false,
      reason: "expired",
      detail: `the approval of ${request.id} expired at ${new Date(d.validUntil).toISOString()}`,
    };
  }
  return { ok: true, args: toRun };
}
