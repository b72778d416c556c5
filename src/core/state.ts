// The state machine of a gate, as pure functions: given a request and what happened, compute the next
// request and the audit events to append. The engine then writes it with a compare-and-set on
// `version`, so only one of several racing transitions is ever stored.
import { checkResponseAgainst } from "./args-schema.js";
import { ConflictError, ForbiddenError, InvalidInputError } from "./errors.js";
import { hashArgs } from "./hash.js";
import { normalizeIdentity, sameIdentity } from "./identity.js";
import { checkViewDigest } from "./review-view.js";
import type {
  Allowed,
  ApprovalRequest,
  AuditDraft,
  Channel,
  Decision,
  EventType,
  Method,
  OnTimeout,
  ParsedDecisionInput,
  Proof,
  Status,
} from "./schemas.js";

export interface Transition {
  next: ApprovalRequest;
  events: AuditDraft[];
  /** Set when this transition made the request terminal. */
  decision?: Decision;
}

// --- the rules, each written once ---------------------------------------------------------------

/** Each kind of human decision: its outcome, the method recorded by default, the other methods a
 * caller may name instead, and what the request's `allowed` must contain (`undefined`: always
 * allowed, since a reviewer can always say no). An approval that both edits and selects needs
 * `edit` and `select`. `respond` answers the request instead of deciding it (the reviewer's
 * `response` goes to the waiting agent, nothing is approved): only where the request allows it. */
export const DECISION_KINDS = {
  approve: { outcome: "approved", method: "approve_all", methods: [], allowed: "approve" },
  select: { outcome: "approved", method: "select", methods: [], allowed: "select" },
  edit: { outcome: "approved", method: "edit", methods: [], allowed: "edit" },
  reject: {
    outcome: "rejected",
    method: "reject",
    methods: ["skip", "parse_error", "error"],
    allowed: undefined,
  },
  revise: { outcome: "revise", method: "revise", methods: [], allowed: "revise" },
  respond: { outcome: "responded", method: "respond", methods: [], allowed: "respond" },
} as const satisfies Record<
  string,
  {
    outcome: ParsedDecisionInput["outcome"];
    method: Method;
    methods: readonly Method[];
    allowed: Allowed | undefined;
  }
>;
export type DecisionKind = keyof typeof DECISION_KINDS;

/** The kind of a decision input: by its outcome, then by what it carries (edited args, a selection). */
export function decisionKind(
  input: Pick<ParsedDecisionInput, "outcome" | "editedArgs" | "selected">,
): DecisionKind {
  if (input.outcome === "rejected") return "reject";
  if (input.outcome === "revise") return "revise";
  if (input.outcome === "responded") return "respond";
  if (input.editedArgs !== undefined) return "edit";
  if (input.selected !== undefined) return "select";
  return "approve";
}

/** The methods that may go with an outcome: every kind's methods, from the table. */
export function methodsFor(outcome: ParsedDecisionInput["outcome"]): Method[] {
  const out: Method[] = [];
  for (const k of Object.values(DECISION_KINDS)) {
    if (k.outcome === outcome) out.push(k.method, ...k.methods);
  }
  return out;
}

/** Methods by which a decision comes about without a person reviewing it: a policy (`auto`), a
 * request with nothing to approve (`no_items`), a deadline (`timeout`, `escalated`), a failure
 * (`error`) or a withdrawal (`cancel`). Review-time metrics leave them out. */
export const AUTOMATIC_METHODS: ReadonlySet<Method> = new Set<Method>([
  "auto",
  "no_items",
  "timeout",
  "escalated",
  "error",
  "cancel",
]);

/** The audit events that make a request terminal (see `terminal` below): who waits for a request
 * to settle, or checks the log, listens for these. */
export const TERMINAL_EVENT_TYPES: ReadonlySet<EventType> = new Set<EventType>([
  "decided",
  "timed_out",
  "cancelled",
]);

/** Pending is the only state that changes; every other status is final. */
export function isTerminal(status: Status): boolean {
  return status !== "pending";
}

export function isPending(request: Pick<ApprovalRequest, "status">): boolean {
  return request.status === "pending";
}

/** Approved, with the approving decision recorded: the only state anything may be executed in. */
export function isApproved(request: Pick<ApprovalRequest, "status" | "decision">): boolean {
  return request.status === "approved" && request.decision?.outcome === "approved";
}

// Identities (requester, approvers, reviewers, groups) are compared in their normal form (identity.ts),
// and new requests and decisions store them normalised, so `Alice` and `alice` are one person: one vote
// toward a quorum, and never the approver of their own request.

/** True when this reviewer, or one of their groups, is listed (or nobody is listed). */
export function mayDecide(
  request: Pick<ApprovalRequest, "approvers">,
  reviewer: string,
  groups: readonly string[],
): boolean {
  if (request.approvers.length === 0) return true;
  const listed = new Set(request.approvers.map(normalizeIdentity));
  return (
    listed.has(normalizeIdentity(reviewer)) || groups.some((g) => listed.has(normalizeIdentity(g)))
  );
}

/** True when this reviewer may decide the request now (approve as far as `allowed` lets them, and
 * always reject or cancel with a reason): it is pending, they did not request it, and they (or one of
 * their groups) are among its approvers. */
export function canDecide(request: ApprovalRequest, reviewer: string, groups: string[]): boolean {
  return (
    isPending(request) &&
    !sameIdentity(reviewer, request.requester) &&
    mayDecide(request, reviewer, groups)
  );
}

/** The deadline that still applies: a request has one only while it is pending. The one place that
 * says so (a terminal transition also drops the stored deadline). */
export function activeDeadline(
  request: Pick<ApprovalRequest, "status" | "deadline">,
): number | undefined {
  return isPending(request) ? request.deadline : undefined;
}

/** True when the request is pending and its deadline has come: whatever transition arrives now, the
 * timeout (applyTimeout) happens first. */
export function isOverdue(request: ApprovalRequest, now: number): boolean {
  const deadline = activeDeadline(request);
  return deadline !== undefined && deadline <= now;
}

export function conflictFor(request: ApprovalRequest): ConflictError {
  const d = request.decision;
  if (d?.method === "timeout") {
    const what = d.outcome === "approved" ? "was approved by its deadline rule" : "timed out";
    return new ConflictError(
      `request ${request.id} ${what} at ${new Date(d.decidedAt).toISOString()} before this decision arrived`,
      request,
    );
  }
  const who = d ? ` by ${d.reviewer} (${d.outcome}, ${d.method})` : "";
  return new ConflictError(`request ${request.id} was already decided${who}`, request);
}

export function applyDecision(
  request: ApprovalRequest,
  input: ParsedDecisionInput,
  now: number,
  /** How the door proved the reviewer (authority.ts), recorded with the decision. */
  proof?: Proof,
): Transition {
  if (!isPending(request)) throw conflictFor(request);
  if (sameIdentity(input.reviewer, request.requester)) {
    throw new ForbiddenError(
      `${input.reviewer} requested ${request.id} and cannot decide it: nobody approves their own request`,
    );
  }
  if (!mayDecide(request, input.reviewer, input.groups)) {
    throw new ForbiddenError(
      `${input.reviewer} is not an approver of ${request.id} (approvers: ${request.approvers.join(", ")})`,
    );
  }
  // The reviewer decided on what they were shown: refused when that is no longer the request.
  checkViewDigest(request, input.viewDigest);

  const kind = DECISION_KINDS[decisionKind(input)];
  const method = input.method ?? kind.method;
  const methods = methodsFor(input.outcome);
  if (!methods.includes(method)) {
    throw new InvalidInputError(
      `method \`${method}\` does not go with outcome \`${input.outcome}\` (expected one of ${methods.join(", ")})`,
      "method",
    );
  }
  // An approval that both edits and selects needs both allowed. A reviewer can always say no:
  // `allowed` restricts how one may approve (or ask for a revision), never the rejection.
  const needed: Allowed[] = kind.allowed === undefined ? [] : [kind.allowed];
  if (input.editedArgs !== undefined && input.selected !== undefined) needed.push("select");
  for (const kind of needed) {
    if (!request.allowed.includes(kind)) {
      throw new InvalidInputError(
        `this request does not allow \`${kind}\` (allowed: ${request.allowed.join(", ")})`,
        kind === "select" ? "selected" : "outcome",
      );
    }
  }

  if (
    input.outcome === "revise" &&
    request.revisionCommentRequired === true &&
    (input.comment ?? "").trim() === ""
  ) {
    throw new InvalidInputError(
      "this request needs a comment with a revision: say what should change",
      "comment",
    );
  }

  const selected = checkSelection(request, input);
  if (input.editedArgs !== undefined && input.outcome !== "approved") {
    throw new InvalidInputError("editedArgs can only come with an approval", "editedArgs");
  }
  checkResponse(request, input);

  const approvedArgs = input.editedArgs ?? request.args;
  const decision: Decision = {
    outcome: input.outcome,
    method,
    reviewer: normalizeIdentity(input.reviewer),
    channel: input.channel,
    decidedAt: now,
  };
  if (proof !== undefined) decision.proof = proof;
  if (selected !== undefined) decision.selected = selected;
  if (input.editedArgs !== undefined) decision.editedArgs = input.editedArgs;
  if (input.response !== undefined) decision.response = input.response;
  if (input.comment !== undefined) decision.comment = input.comment;
  if (input.key !== undefined) decision.key = input.key;
  if (input.viewDigest !== undefined) decision.viewDigest = input.viewDigest;
  if (input.outcome === "approved") {
    decision.argsHash = input.editedArgs === undefined ? request.argsHash : hashArgs(approvedArgs);
    if (input.validForMs !== undefined) decision.validUntil = now + input.validForMs;
  }

  if (input.outcome === "approved") {
    const earlier = request.decisions.filter((d) => d.outcome === "approved");
    if (earlier.some((d) => sameIdentity(d.reviewer, input.reviewer))) {
      throw new ConflictError(
        `${input.reviewer} already approved ${request.id}; ${request.quorum - earlier.length} more approval(s) from other people are needed`,
        request,
      );
    }
    if (earlier.some((d) => d.argsHash !== decision.argsHash)) {
      throw new InvalidInputError(
        "this approval is for other arguments than the approvals before it; a quorum must approve the same arguments (reject or ask for a revision instead)",
        "editedArgs",
      );
    }
    if (earlier.length + 1 < request.quorum) {
      const next = bump(request, now, { decisions: [...request.decisions, decision] });
      return {
        next,
        events: [
          event("decision_recorded", request, input.reviewer, now, {
            ...decisionData(decision),
            approvals: earlier.length + 1,
            quorum: request.quorum,
          }),
        ],
      };
    }
    // The quorum is met: the terminal approval covers only what every approver selected.
    if (selected !== undefined || earlier.some((d) => d.selected)) {
      decision.selected = intersect([...earlier.map((d) => d.selected), selected], request);
      if (decision.selected.length === 0) {
        throw new InvalidInputError(
          "this selection shares no item with the approvals so far, so nothing would be approved; reject instead",
          "selected",
        );
      }
    }
  }
  return terminal(request, decision, now);
}

export interface CancelInput {
  by: string;
  reason?: string | undefined;
  /** How the cancellation arrived. @default "api" */
  channel?: Channel | undefined;
  /** Cancelling as a reviewer (not as the requester or an admin): they must be able to decide the
   * request (`canDecide`) and must give a reason. */
  asReviewer?: { groups: string[] } | undefined;
}

export function applyCancel(request: ApprovalRequest, input: CancelInput, now: number): Transition {
  if (!isPending(request)) throw conflictFor(request);
  if (input.asReviewer) {
    if (!canDecide(request, input.by, input.asReviewer.groups)) {
      throw new ForbiddenError(
        `${input.by} may not decide ${request.id}, so may not cancel it either (approvers: ${request.approvers.join(", ") || "anyone"}; requested by ${request.requester})`,
      );
    }
    if ((input.reason ?? "").trim() === "") {
      throw new InvalidInputError(
        "a reviewer who cancels a request must say why: give a reason",
        "reason",
      );
    }
  }
  const decision: Decision = {
    outcome: "cancelled",
    method: "cancel",
    reviewer: normalizeIdentity(input.by),
    channel: input.channel ?? "api",
    decidedAt: now,
  };
  if (input.reason !== undefined) decision.comment = input.reason;
  return terminal(request, decision, now);
}

/** What the deadline does: reject, approve, or escalate to other approvers with a new deadline. */
export function applyTimeout(request: ApprovalRequest, now: number): Transition {
  if (!isPending(request)) throw conflictFor(request);
  const rule: OnTimeout = request.onTimeout;
  if (typeof rule === "object") {
    const { approvers, timeoutMs, onTimeout } = rule.escalate;
    const next = bump(request, now, {
      approvers: approvers.map(normalizeIdentity),
      deadline: now + timeoutMs,
      onTimeout: onTimeout ?? "reject",
      escalations: request.escalations + 1,
    });
    return {
      next,
      events: [
        event("escalated", request, "system", now, {
          from: request.approvers,
          to: next.approvers,
          deadline: next.deadline,
          step: next.escalations,
        }),
      ],
    };
  }
  const decision: Decision = {
    outcome: rule === "approve" ? "approved" : "timed_out",
    method: "timeout",
    reviewer: "system",
    channel: "system",
    decidedAt: now,
    comment:
      rule === "approve"
        ? "approved automatically when the deadline passed (onTimeout: approve)"
        : "no decision before the deadline",
  };
  if (rule === "approve") {
    decision.argsHash = request.argsHash;
    if (request.items.length) decision.selected = request.items.map((i) => i.id);
  }
  return terminal(request, decision, now);
}

/** The terminal decision a policy makes when it creates a request (auto approval, no items). */
export function applyAutomatic(
  request: ApprovalRequest,
  decision: Omit<Decision, "decidedAt" | "channel">,
  now: number,
): Transition {
  return terminal(request, { ...decision, channel: "system", decidedAt: now }, now);
}

function terminal(request: ApprovalRequest, decision: Decision, now: number): Transition {
  if (decision.outcome === "approved" && decision.selected === undefined && request.items.length) {
    decision.selected = request.items.map((i) => i.id);
  }
  const status = decision.outcome;
  const next = bump(request, now, {
    status,
    decision,
    decisions: [...request.decisions, decision],
  });
  delete next.deadline;
  const type =
    status === "timed_out" ? "timed_out" : status === "cancelled" ? "cancelled" : "decided";
  return {
    next,
    decision,
    // The request's creation time rides along, so whoever times reviews (metrics) needs no read.
    events: [
      event(type, request, decision.reviewer, now, {
        ...decisionData(decision),
        createdAt: request.createdAt,
      }),
    ],
  };
}

/** The request after a change: `changes` applied, `updatedAt` and `version` moved on. */
export function bump(
  request: ApprovalRequest,
  now: number,
  changes: Partial<ApprovalRequest>,
): ApprovalRequest {
  return { ...request, ...changes, updatedAt: now, version: request.version + 1 };
}

/** An audit event about `request`. */
export function event(
  type: AuditDraft["type"],
  request: ApprovalRequest,
  actor: string,
  at: number,
  data: Record<string, unknown>,
): AuditDraft {
  return { type, requestId: request.id, actor, at, data };
}

function decisionData(d: Decision): Record<string, unknown> {
  const data: Record<string, unknown> = {
    outcome: d.outcome,
    method: d.method,
    channel: d.channel,
  };
  if (d.proof !== undefined) data.proof = d.proof;
  if (d.selected) data.selected = d.selected;
  if (d.comment !== undefined) data.comment = d.comment;
  if (d.argsHash) data.argsHash = d.argsHash;
  if (d.editedArgs) data.editedArgs = d.editedArgs;
  if (d.response !== undefined) data.response = d.response;
  if (d.validUntil !== undefined) data.validUntil = d.validUntil;
  if (d.viewDigest !== undefined) data.viewDigest = d.viewDigest;
  return data;
}

/** A response comes with outcome `responded` and nothing else, and that outcome needs one; it must
 * fit the request's `responseSchema` when there is one. */
function checkResponse(request: ApprovalRequest, input: ParsedDecisionInput): void {
  if (input.outcome !== "responded") {
    if (input.response !== undefined) {
      throw new InvalidInputError(
        `a response can only come with outcome \`responded\`, not \`${input.outcome}\``,
        "response",
      );
    }
    return;
  }
  if (input.response === undefined) {
    throw new InvalidInputError(
      "outcome `responded` needs a `response`: the answer the waiting agent gets",
      "response",
    );
  }
  checkResponseAgainst(request.responseSchema, input.response);
}

/** Selections name items by id, never by position, and must be a non-empty subset of the items. */
function checkSelection(
  request: ApprovalRequest,
  input: ParsedDecisionInput,
): string[] | undefined {
  if (input.selected === undefined) return undefined;
  if (input.outcome !== "approved") {
    throw new InvalidInputError("a selection can only come with an approval", "selected");
  }
  if (request.items.length === 0) {
    throw new InvalidInputError(`request ${request.id} has no items to select from`, "selected");
  }
  if (input.selected.length === 0) {
    throw new InvalidInputError(
      "an empty selection is not an approval: select at least one item, or reject (skip)",
      "selected",
    );
  }
  const known = new Set(request.items.map((i) => i.id));
  const unknown = input.selected.filter((id) => !known.has(id));
  if (unknown.length) {
    throw new InvalidInputError(
      `unknown item id(s) ${unknown.map((u) => `\`${u}\``).join(", ")}; the items are ${[...known].join(", ")}`,
      "selected",
    );
  }
  // Keep the request's item order, drop duplicates.
  const chosen = new Set(input.selected);
  return request.items.filter((i) => chosen.has(i.id)).map((i) => i.id);
}

function intersect(selections: (string[] | undefined)[], request: ApprovalRequest): string[] {
  const all = request.items.map((i) => i.id);
  return selections.reduce<string[]>(
    (acc, sel) => (sel === undefined ? acc : acc.filter((id) => sel.includes(id))),
    all,
  );
}
