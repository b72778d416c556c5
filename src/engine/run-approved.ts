// `runApproved(api, id, run)`: the one way to execute what a human approved. It reads the request
// (waiting while it is pending), checks that the approval binds the arguments about to be used and
// has not expired (`verifyApproval`), claims the execution (`claimExecution`, a compare-and-set, so a
// double resume or a replayed job is refused), and only then calls `run` with the approved arguments,
// once. Everything short of an approval is a typed result, not an exception: a caller branches on
// `ok` and can tell the model or the user why nothing ran.
import { verifyApproval } from "../core/binding.js";
import { isAirlockError } from "../core/errors.js";
import type { ApprovalRequest } from "../core/schemas.js";
import { isApproved, isPending } from "../core/state.js";
import type { AirlockApi } from "./api.js";

/** Why `run` was not called. `rejected`, `revise`, `timed_out` and `cancelled` are the request's
 * terminal status; `pending` only with `wait: false`; `not_approved`, `args_mismatch` and `expired`
 * come from `verifyApproval`; `already_executed` means the execution was claimed before (by this
 * caller's earlier run, another process, or a replayed job) or could not be claimed any more. */
export type NotRunReason =
  | "pending"
  | "rejected"
  | "revise"
  | "timed_out"
  | "cancelled"
  | "not_approved"
  | "args_mismatch"
  | "expired"
  | "already_executed";

export type RunApprovedResult<T> =
  /** `run` ran once with the approved args; `request` is the request as claimed (`executedAt` set). */
  | { ok: true; value: T; request: ApprovalRequest }
  /** `run` was not called; `detail` says why in a sentence. */
  | { ok: false; reason: NotRunReason; detail: string; request: ApprovalRequest };

export interface RunApprovedOptions {
  /** Wait while the request is pending; with `false`, a pending request returns `reason: "pending"`.
   * @default true */
  wait?: boolean;
  /** How long to wait for the decision (not the gate's deadline); past it, `waitFor` rejects with
   * code `timeout`. @default no limit */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Who executes, recorded with the `executed` event. @default the request's requester */
  by?: string;
}

/** Runs `run(approvedArgs, request)` once for an approved request: see the file's header. `target`
 * is the request's id, or the request itself when the caller has just read it (saves a read). The
 * approved args are the reviewer's edited args when they edited, else the request's. Errors other
 * than "already claimed" (code `conflict`) propagate, and so does whatever `run` throws: the
 * execution stays claimed then, since the action may have partly happened. */
export async function runApproved<T>(
  api: Pick<AirlockApi, "get" | "waitFor" | "claimExecution">,
  target: string | ApprovalRequest,
  run: (args: Record<string, unknown>, request: ApprovalRequest) => T | Promise<T>,
  options: RunApprovedOptions = {},
): Promise<RunApprovedResult<Awaited<T>>> {
  let request = typeof target === "string" ? await api.get(target) : target;
  if (isPending(request)) {
    if (options.wait === false) {
      return notRun("pending", `request ${request.id} is still pending`, request);
    }
    const wait: { timeoutMs?: number; signal?: AbortSignal } = {};
    if (options.timeoutMs !== undefined) wait.timeoutMs = options.timeoutMs;
    if (options.signal !== undefined) wait.signal = options.signal;
    request = await api.waitFor(request.id, wait);
  }
  if (!isApproved(request)) {
    const status =
      request.status === "approved"
        ? "not_approved" // approved without an approving decision: never produced, never run
        : (request.status as Exclude<ApprovalRequest["status"], "approved" | "pending">);
    const d = request.decision;
    const by = d?.reviewer ? ` by ${d.reviewer}` : "";
    const said = d?.comment ? `: "${d.comment}"` : "";
    return notRun(status, `request ${request.id} is ${status}${by}${said}`, request);
  }
  const check = verifyApproval(request);
  if (!check.ok) return notRun(check.reason, check.detail, request);
  let claimed: ApprovalRequest;
  try {
    claimed = await api.claimExecution(
      request.id,
      options.by === undefined ? {} : { by: options.by },
    );
  } catch (err) {
    if (!isAirlockError(err, "conflict")) throw err;
    return notRun("already_executed", err.message, request);
  }
  return { ok: true, value: await run(check.args, claimed), request: claimed };
}

function notRun(
  reason: NotRunReason,
  detail: string,
  request: ApprovalRequest,
): { ok: false; reason: NotRunReason; detail: string; request: ApprovalRequest } {
  return { ok: false, reason, detail, request };
}
