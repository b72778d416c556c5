// What became of an approved action, as pure transitions (like state.ts for decisions). A process
// claims the execution under a lease before it runs the action (`claimed`), then reports the outcome
// after the action returned (`executed`, with a digest of the result) or threw (`execution_failed`).
// The log therefore says `executed` only once the action is known to have run. A claim whose lease
// ran out with no report (its process died somewhere between claim and report) becomes `unknown`:
// approved, not known to have run. Such a claim is claimed again only when the request was declared
// `idempotent`; otherwise a person settles it (retry, done, abandon), and that is audited too.
import { ConflictError, InvalidInputError } from "./errors.js";
import type { ApprovalRequest, Execution } from "./schemas.js";
import { bump, event, isApproved, type Transition } from "./state.js";

/** How long a claim holds without a renewal when the caller names none. */
export const DEFAULT_LEASE_MS = 5 * 60_000;
/** The longest lease a claim may ask for (a day): a long action renews its lease instead. */
export const MAX_LEASE_MS = 24 * 3600_000;
/** The most of an error message kept with a failed execution. */
const MAX_ERROR_CHARS = 2000;

export type ExecutionResolution = "retry" | "done" | "abandon";
export const EXECUTION_RESOLUTIONS: readonly ExecutionResolution[] = ["retry", "done", "abandon"];

/** Whether `request`'s execution may be claimed now, and if not, why (a sentence). */
export function claimRefusal(request: ApprovalRequest, now: number): string | undefined {
  if (!isApproved(request) || !request.decision) {
    return `request ${request.id} is ${request.status}, not approved: there is nothing to execute`;
  }
  const validUntil = request.decision.validUntil;
  if (validUntil !== undefined && now > validUntil) {
    return `the approval of ${request.id} expired at ${iso(validUntil)}; ask again`;
  }
  const x = request.execution;
  if (!x) {
    // Stored before execution states: `executedAt` was written when the execution was claimed.
    if (request.executedAt !== undefined) {
      return `request ${request.id} was already executed by ${request.executedBy ?? "someone"} at ${iso(request.executedAt)}; an approval runs once`;
    }
    return undefined;
  }
  switch (x.state) {
    case "released":
      return undefined;
    case "claimed":
      if (request.idempotent === true && leaseOver(x, now)) return undefined;
      return `request ${request.id} was claimed for execution by ${x.claimedBy} at ${iso(x.claimedAt)} (attempt ${x.attempt}); an approval runs once`;
    case "unknown":
      if (request.idempotent === true) return undefined;
      return `request ${request.id} was claimed by ${x.claimedBy} at ${iso(x.claimedAt)} and is not known to have run (its process stopped reporting); a person must retry it, mark it done or abandon it`;
    case "executed":
      return `request ${request.id} was already executed by ${request.executedBy ?? x.claimedBy} at ${iso(x.endedAt ?? x.claimedAt)}; an approval runs once`;
    case "failed":
      return `request ${request.id} was run by ${x.claimedBy} at ${iso(x.claimedAt)} and failed (${x.error ?? "no message"}); a person must retry it, mark it done or abandon it`;
    case "abandoned":
      return `request ${request.id}'s execution was abandoned by ${x.resolvedBy ?? "someone"}; ask again`;
  }
}

/** Claims an approved request's execution for `leaseMs`: a second claim (a double resume, a retried
 * job) is a conflict that names the first. A claim's outcome is reported with its `attempt`. */
export function applyClaim(
  request: ApprovalRequest,
  input: { by: string; leaseMs?: number },
  now: number,
): Transition {
  const refusal = claimRefusal(request, now);
  if (refusal) throw new ConflictError(refusal, request);
  const leaseMs = checkLease(input.leaseMs);
  const attempt = (request.execution?.attempt ?? 0) + 1;
  const execution: Execution = {
    state: "claimed",
    attempt,
    claimedAt: now,
    claimedBy: input.by,
    leaseUntil: now + leaseMs,
  };
  const next = bump(request, now, { execution });
  const argsHash = request.decision?.argsHash ?? request.argsHash;
  const data: Record<string, unknown> = { attempt, leaseUntil: now + leaseMs, argsHash };
  if (request.execution) data.after = request.execution.state;
  return { next, events: [event("claimed", request, input.by, now, data)] };
}

/** Extends a live claim's lease (a long action still running); no audit event. */
export function applyRenewal(
  request: ApprovalRequest,
  input: { attempt: number; leaseMs?: number },
  now: number,
): Transition {
  const x = ownClaim(request, input.attempt);
  if (x.state !== "claimed") {
    throw new ConflictError(
      `the execution of ${request.id} (attempt ${input.attempt}) is ${x.state}; only a claimed execution has a lease to renew`,
      request,
    );
  }
  const leaseUntil = now + checkLease(input.leaseMs);
  return { next: bump(request, now, { execution: { ...x, leaseUntil } }), events: [] };
}

export type ExecutionOutcome =
  | { attempt: number; ok: true; resultDigest?: string }
  | { attempt: number; ok: false; error: string };

/** Records what the action did, after it returned or threw. Accepted from a claim that was already
 * marked `unknown` too: the action did run, and the log says what is true. */
export function applyOutcome(
  request: ApprovalRequest,
  outcome: ExecutionOutcome,
  by: string,
  now: number,
): Transition {
  const x = ownClaim(request, outcome.attempt);
  if (x.state !== "claimed" && x.state !== "unknown") {
    throw new ConflictError(
      `the execution of ${request.id} (attempt ${outcome.attempt}) is already ${x.state}; its outcome is recorded once`,
      request,
    );
  }
  const { leaseUntil: _lease, ...rest } = x;
  if (outcome.ok) {
    const execution: Execution = { ...rest, state: "executed", endedAt: now };
    if (outcome.resultDigest !== undefined) execution.resultDigest = outcome.resultDigest;
    const next = bump(request, now, { execution, executedAt: now, executedBy: x.claimedBy });
    const data: Record<string, unknown> = {
      attempt: x.attempt,
      argsHash: request.decision?.argsHash ?? request.argsHash,
    };
    if (outcome.resultDigest !== undefined) data.resultDigest = outcome.resultDigest;
    if (x.state === "unknown") data.after = "unknown";
    return { next, events: [event("executed", request, by, now, data)] };
  }
  const error = outcome.error.slice(0, MAX_ERROR_CHARS);
  const execution: Execution = { ...rest, state: "failed", endedAt: now, error };
  return {
    next: bump(request, now, { execution }),
    events: [event("execution_failed", request, by, now, { attempt: x.attempt, error })],
  };
}

/** Whether a claim's lease has run out with no outcome reported. */
export function isStaleClaim(request: ApprovalRequest, now: number): boolean {
  const x = request.execution;
  return x?.state === "claimed" && x.leaseUntil !== undefined && x.leaseUntil <= now;
}

/** A claim whose lease ran out with no outcome: its process died, or hangs, somewhere between the
 * claim and the report. Nothing says whether the action ran. */
export function applyUnknown(request: ApprovalRequest, now: number): Transition {
  const x = request.execution;
  if (!x || !isStaleClaim(request, now)) {
    throw new ConflictError(`the execution of ${request.id} has no lapsed claim`, request);
  }
  const { leaseUntil, ...rest } = x;
  return {
    next: bump(request, now, { execution: { ...rest, state: "unknown" } }),
    events: [
      event("execution_unknown", request, "system", now, {
        attempt: x.attempt,
        claimedBy: x.claimedBy,
        claimedAt: x.claimedAt,
        leaseUntil,
      }),
    ],
  };
}

/** A person settles an execution that is not known to have run, or that failed: `retry` lets the
 * next claim run it again, `done` records that it did happen (the person's word, not the tool's),
 * `abandon` gives it up. Who may do it is authority's question (mayResolveExecution). */
export function applyResolution(
  request: ApprovalRequest,
  input: { resolution: ExecutionResolution; by: string; comment?: string },
  now: number,
): Transition {
  const x = request.execution;
  if (!x || (x.state !== "unknown" && x.state !== "failed")) {
    const state = x ? x.state : "not claimed";
    throw new ConflictError(
      `the execution of ${request.id} is ${state}: only an execution that is unknown or failed is settled by a person`,
      request,
    );
  }
  if (!EXECUTION_RESOLUTIONS.includes(input.resolution)) {
    throw new InvalidInputError(
      `Expected \`resolution\` to be one of ${EXECUTION_RESOLUTIONS.join(", ")}, got \`${String(input.resolution)}\``,
    );
  }
  const state = ({ retry: "released", done: "executed", abandon: "abandoned" } as const)[
    input.resolution
  ];
  const execution: Execution = { ...x, state, endedAt: now, resolvedBy: input.by };
  if (input.comment !== undefined) execution.comment = input.comment;
  const changes: Partial<ApprovalRequest> = { execution };
  if (state === "executed") Object.assign(changes, { executedAt: now, executedBy: input.by });
  const data: Record<string, unknown> = {
    resolution: input.resolution,
    attempt: x.attempt,
    was: x.state,
  };
  if (input.comment !== undefined) data.comment = input.comment;
  return {
    next: bump(request, now, changes),
    events: [event("execution_resolved", request, input.by, now, data)],
  };
}

function ownClaim(request: ApprovalRequest, attempt: number): Execution {
  const x = request.execution;
  if (!x) {
    throw new ConflictError(`the execution of ${request.id} was never claimed`, request);
  }
  if (x.attempt !== attempt) {
    throw new ConflictError(
      `the execution of ${request.id} is at attempt ${x.attempt}, not ${attempt}: another claim took it over`,
      request,
    );
  }
  return x;
}

function checkLease(leaseMs: number | undefined): number {
  if (leaseMs === undefined) return DEFAULT_LEASE_MS;
  if (!Number.isInteger(leaseMs) || leaseMs < 1 || leaseMs > MAX_LEASE_MS) {
    throw new InvalidInputError(
      `Expected \`leaseMs\` to be a whole number of milliseconds from 1 to ${MAX_LEASE_MS}, got \`${leaseMs}\``,
    );
  }
  return leaseMs;
}

function leaseOver(x: Execution, now: number): boolean {
  return x.leaseUntil !== undefined && x.leaseUntil <= now;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
