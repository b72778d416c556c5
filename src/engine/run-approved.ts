// `runApproved(api, id, run)`: the one way to execute what a human approved. It reads the request
// (waiting while it is pending), checks that the approval binds the arguments about to be used and
// has not expired (`verifyApproval`), claims the execution under a lease (`claimExecution`, a
// compare-and-set, so a double resume or a replayed job is refused), calls `run` with the approved
// arguments, once, renewing the lease while it runs, and only after `run` returned or threw records
// what happened (`finishExecution`: `executed` with a digest of the result, or `execution_failed`).
// A process killed in between leaves a claim that becomes `unknown` at the end of its lease: the log
// never says `executed` for an action that did not return (core/execution.ts). Everything short of an
// approval is a typed result, not an exception: a caller branches on `ok` and can tell the model or
// the user why nothing ran.
import { verifyApproval } from "../core/binding.js";
import { isAirlockError } from "../core/errors.js";
import type { ExecutionOutcome } from "../core/execution.js";
import { DEFAULT_LEASE_MS } from "../core/execution.js";
import { hashArgs } from "../core/hash.js";
import type { ApprovalRequest } from "../core/schemas.js";
import { isApproved, isPending } from "../core/state.js";
import type { AirlockApi } from "./api.js";

/** Why `run` was not called. `rejected`, `revise`, `timed_out`, `cancelled` and `responded` are the
 * request's terminal status (`responded`: a reviewer answered instead of approving; the result
 * carries the `response`); `pending` only with `wait: false`; `not_approved`, `args_mismatch` and `expired`
 * come from `verifyApproval`; `already_executed` means the execution was claimed before (by this
 * caller's earlier run, another process, or a replayed job) or could not be claimed any more;
 * `execution_unknown` means an earlier claim's process stopped reporting, so nobody knows whether it
 * ran, and the request is not `idempotent`: a person retries it, marks it done or abandons it. */
export type NotRunReason =
  | "pending"
  | "rejected"
  | "revise"
  | "timed_out"
  | "cancelled"
  | "responded"
  | "not_approved"
  | "args_mismatch"
  | "expired"
  | "already_executed"
  | "execution_unknown";

export type RunApprovedResult<T> =
  /** `run` was called once with the approved args; `request` is the request with its outcome recorded
   * (`execution.state` `executed`). `recorded: false` when the outcome could not be written (the
   * server was unreachable): the claim then turns `unknown` at the end of its lease. */
  | { ok: true; value: T; request: ApprovalRequest; recorded: boolean }
  /** `run` was not called because a reviewer answered instead: `response` is their answer (the
   * request's `decision.response`), for the caller to use in place of the action's result. */
  | {
      ok: false;
      reason: "responded";
      response: unknown;
      detail: string;
      request: ApprovalRequest;
    }
  /** `run` was not called; `detail` says why in a sentence. */
  | {
      ok: false;
      reason: Exclude<NotRunReason, "responded">;
      detail: string;
      request: ApprovalRequest;
    };

export interface RunApprovedOptions {
  /** Wait while the request is pending; with `false`, a pending request returns `reason: "pending"`.
   * @default true */
  wait?: boolean;
  /** How long to wait for the decision (not the gate's deadline); past it, `waitFor` rejects with
   * code `timeout`. @default no limit */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Who executes, recorded with the `claimed` and `executed` events. @default the request's
   * requester (on a server: the token's principal) */
  by?: string;
  /** How long the claim holds without news; it is renewed every third of it while `run` runs, so
   * only a process that died (or hangs) lets it run out. @default 300000 (5 minutes) */
  leaseMs?: number;
}

/** Runs `run(approvedArgs, request)` once for an approved request: see the file's header. `target`
 * is the request's id, or the request itself when the caller has just read it (saves a read). The
 * approved args are the reviewer's edited args when they edited, else the request's. Errors other
 * than "already claimed" (code `conflict`) propagate, and so does whatever `run` throws: the
 * execution stays claimed then, since the action may have partly happened. */
export async function runApproved<T>(
  api: Pick<
    AirlockApi,
    "get" | "waitFor" | "claimExecution" | "renewExecution" | "finishExecution"
  >,
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
  if (request.status === "responded") {
    const by = request.decision?.reviewer ? ` by ${request.decision.reviewer}` : "";
    return {
      ok: false,
      reason: "responded",
      response: request.decision?.response ?? null,
      detail: `request ${request.id} was answered${by} instead of approved; nothing ran`,
      request,
    };
  }
  if (!isApproved(request)) {
    const status =
      request.status === "approved"
        ? "not_approved" // approved without an approving decision: never produced, never run
        : (request.status as Exclude<
            ApprovalRequest["status"],
            "approved" | "pending" | "responded"
          >);
    const d = request.decision;
    const by = d?.reviewer ? ` by ${d.reviewer}` : "";
    const said = d?.comment ? `: "${d.comment}"` : "";
    return notRun(status, `request ${request.id} is ${status}${by}${said}`, request);
  }
  const check = verifyApproval(request);
  if (!check.ok) return notRun(check.reason, check.detail, request);
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  let claimed: ApprovalRequest;
  try {
    claimed = await api.claimExecution(request.id, {
      leaseMs,
      ...(options.by === undefined ? {} : { by: options.by }),
    });
  } catch (err) {
    if (!isAirlockError(err, "conflict")) throw err;
    const now = await api.get(request.id).catch(() => request);
    const unknown = now.execution?.state === "unknown";
    return notRun(unknown ? "execution_unknown" : "already_executed", err.message, now);
  }
  const attempt = claimed.execution?.attempt ?? 1;
  const stopRenewing = renewWhileRunning(api, request.id, attempt, leaseMs);
  let value: Awaited<T>;
  try {
    value = await run(check.args, claimed);
  } catch (err) {
    stopRenewing();
    await report(api, request.id, { attempt, ok: false, error: errorText(err) }, options.by);
    throw err;
  }
  stopRenewing();
  const outcome = { attempt, ok: true as const, ...digestOf(value) };
  const finished = await report(api, request.id, outcome, options.by);
  return { ok: true, value, request: finished ?? claimed, recorded: finished !== undefined };
}

/** Renews the claim's lease every third of it while the action runs; returns the stop. A renewal
 * that fails is left alone: the outcome is still accepted if the claim was marked unknown meanwhile. */
function renewWhileRunning(
  api: Pick<AirlockApi, "renewExecution">,
  id: string,
  attempt: number,
  leaseMs: number,
): () => void {
  const timer = setInterval(
    () => {
      api.renewExecution(id, { attempt, leaseMs }).catch(() => {});
    },
    Math.max(Math.floor(leaseMs / 3), 10),
  );
  // A claim never keeps a process alive on its own: the action it waits for does.
  timer.unref();
  return () => clearInterval(timer);
}

/** Writes the outcome; undefined when it could not be written. A repeat of an outcome that was
 * written (a retried call whose first answer was lost) finds it recorded and is taken as written. */
async function report(
  api: Pick<AirlockApi, "get" | "finishExecution">,
  id: string,
  outcome: ExecutionOutcome,
  by: string | undefined,
): Promise<ApprovalRequest | undefined> {
  try {
    return await api.finishExecution(id, outcome, by === undefined ? {} : { by });
  } catch (err) {
    if (!isAirlockError(err, "conflict")) return undefined;
    const now = await api.get(id).catch(() => undefined);
    const x = now?.execution;
    const want = outcome.ok ? "executed" : "failed";
    return x?.attempt === outcome.attempt && x.state === want ? now : undefined;
  }
}

/** The digest of what the action returned, when it has a JSON form. */
function digestOf(value: unknown): { resultDigest?: string } {
  if (value === undefined) return {};
  try {
    return { resultDigest: hashArgs(value) };
  } catch {
    return {};
  }
}

function errorText(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.trim() === "" ? "an error without a message" : text;
}

function notRun(
  reason: Exclude<NotRunReason, "responded">,
  detail: string,
  request: ApprovalRequest,
): {
  ok: false;
  reason: Exclude<NotRunReason, "responded">;
  detail: string;
  request: ApprovalRequest;
} {
  return { ok: false, reason, detail, request };
}
