// Object-level authorization: which requests a caller may see and act on.
//
//   admin     sees every request.
//   agent     sees the requests it created (requester = its name).
//   reviewer  sees the requests it may decide (it or one of its groups is among the approvers, or
//             the request names no approvers), and any it created itself.
//
// A request the caller may not see is answered exactly like one that does not exist: 404 with the
// same message, on every route (read, wait, decide, cancel, audit). So nobody learns that an id
// exists from a status code. 403 is kept for what a visible request does not allow the caller (an
// agent deciding, a reviewer cancelling, anybody deciding their own request) and for routes the
// caller's role does not open.

import { type Actor, actorOf } from "../core/authority.js";
import { NotFoundError } from "../core/errors.js";
import { sameIdentity } from "../core/identity.js";
import type { ApprovalRequest, Channel, Proof } from "../core/schemas.js";
import { mayDecide } from "../core/state.js";
import type { ListFilter } from "../core/store.js";
import type { Airlock } from "../engine/engine.js";
import { hasRole, type Principal } from "./env.js";
import { HttpProblem } from "./problem.js";

export function canSee(p: Principal, r: Pick<ApprovalRequest, "requester" | "approvers">): boolean {
  if (hasRole(p, "admin")) return true;
  if (sameIdentity(r.requester, p.name) && (hasRole(p, "agent") || hasRole(p, "reviewer"))) {
    return true;
  }
  return hasRole(p, "reviewer") && isApprover(p, r);
}

/** True when the caller, or one of its groups, is among the request's approvers (or it names none).
 * The rule is the state machine's (`mayDecide`), names compared in their normal form. */
export function isApprover(p: Principal, r: Pick<ApprovalRequest, "approvers">): boolean {
  return mayDecide(r, p.name, p.groups);
}

/** The request, if the caller may see it; otherwise the same not_found a missing id gets. */
export async function loadVisible(
  airlock: Airlock,
  p: Principal,
  id: string,
): Promise<ApprovalRequest> {
  const r = await airlock.get(id);
  if (!canSee(p, r)) throw new NotFoundError("request", id);
  return r;
}

/** Narrows a listing to what the caller may see, so every row returned is visible; `undefined`
 * when nothing could be (an agent asking for another requester's requests).
 * A reviewer lists what it may decide, or, with `requester` set to its own name, what it created. */
export function scopeList(p: Principal, filter: ListFilter): ListFilter | undefined {
  if (hasRole(p, "admin")) return filter;
  const identities = [p.name, ...p.groups];
  const mine = (name: string) => identities.some((i) => sameIdentity(i, name));
  const ownRequests = filter.requester !== undefined && sameIdentity(filter.requester, p.name);
  if (hasRole(p, "reviewer") && !ownRequests) {
    const asked =
      filter.approver === undefined
        ? identities
        : (Array.isArray(filter.approver) ? filter.approver : [filter.approver]).filter(mine);
    // With no name left, the store matches only requests open to everyone, which are visible.
    return { ...filter, approver: asked };
  }
  if (hasRole(p, "agent") || hasRole(p, "reviewer")) {
    if (filter.requester !== undefined && !ownRequests) return undefined;
    return { ...filter, requester: p.name };
  }
  throw new HttpProblem(403, "forbidden", `the token of ${p.name} has no role that lists requests`);
}

/** The actor (core/authority.ts) an authenticated caller stands for, proven by `proof`: what every
 * route hands to the engine's `decideAs`, which alone says whether it may decide. */
export function actorFor(p: Principal, proof: Proof, channel: Channel): Actor {
  return actorOf({
    name: p.name,
    groups: p.groups,
    roles: p.roles,
    proof,
    channel,
    mintedWithRoles: p.mintedWithRoles,
  });
}

/** Cancelling is for whoever created the request, for admins, and for a reviewer who may decide
 * it, who must say why (`reason`): a reviewer's way to withdraw a request it cannot simply reject
 * (e.g. one whose agent allowed only approval). */
export function assertMayCancel(
  p: Principal,
  r: ApprovalRequest,
  reason: string | undefined,
): void {
  if (hasRole(p, "admin") || sameIdentity(r.requester, p.name)) return;
  if (hasRole(p, "reviewer") && isApprover(p, r)) {
    if (reason === undefined || reason.trim() === "") {
      throw new HttpProblem(
        422,
        "invalid_input",
        `a reviewer cancelling ${r.id} must give a \`reason\` (it goes to the requester and the audit log)`,
        { field: "reason" },
      );
    }
    return;
  }
  throw new HttpProblem(
    403,
    "forbidden",
    `${p.name} did not create ${r.id}, may not decide it, and so may not cancel it`,
  );
}

/** Decides per event whether a caller may see it, remembering the answer per request. A request's
 * requester never changes and its approvers change only by escalation, which forgets the answer.
 * `lookup` reads what the check needs (the server's event hub shares one read among all streams);
 * by default the request is read from the engine. */
export function eventVisibility(
  airlock: Airlock,
  p: Principal,
  lookup?: (
    requestId: string,
  ) => Promise<Pick<ApprovalRequest, "requester" | "approvers"> | undefined>,
) {
  const cache = new Map<string, boolean>();
  const MAX = 10_000;
  const read = lookup ?? ((id: string) => airlock.get(id));
  return async (requestId: string | undefined, type: string): Promise<boolean> => {
    if (hasRole(p, "admin")) return true;
    if (requestId === undefined) return false;
    if (type === "escalated") cache.delete(requestId);
    const known = cache.get(requestId);
    if (known !== undefined) return known;
    let visible: boolean;
    try {
      const r = await read(requestId);
      visible = r !== undefined && canSee(p, r);
    } catch {
      return false; // not remembered: the next event of this request asks again
    }
    if (cache.size >= MAX) cache.clear();
    cache.set(requestId, visible);
    return visible;
  };
}
