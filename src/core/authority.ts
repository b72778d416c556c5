// Authority: who is acting, how that was proven, and whether that identity may decide a request.
//
// The one home of the rule every door asks (HTTP API, inbox, bulk, embed card, Slack, mail link and
// reply, console, CLI, MCP, adapters): a door proves who is acting in its own way (a bearer token, a
// session cookie, a signed Slack payload, a signed mail link, an SMTP envelope), turns that proof into
// an `Actor`, and hands the actor to the engine's `decideAs`, which applies `decidingIdentity` inside
// the decision's compare-and-set. No door restates the rule.
//
// The rule:
//   - a credential an agent holds, or anything minted with one, never decides, in any quorum seat;
//   - the requester never decides its own request;
//   - only a listed approver (by name or group) decides; an admin is credited with the request's
//     approvers (it may decide anything it did not create);
//   - only while the request is pending and before its deadline (the engine times an overdue request
//     out first, so a late decision loses to the timeout);
//   - distinct people for a quorum: identities are compared in their normal form (identity.ts), so
//     one person counts once (applyDecision refuses their second approval).
import { ForbiddenError } from "./errors.js";
import { normalizeIdentity, sameIdentity } from "./identity.js";
import type { ApprovalRequest, Channel, Proof } from "./schemas.js";
import { isOverdue, isPending, mayDecide } from "./state.js";

/** Who is acting, as a door proved it. */
export interface Actor {
  /** The identity decisions are recorded under (normal form). */
  readonly name: string;
  /** Groups the actor approves through, matched against a request's approvers. */
  readonly groups: readonly string[];
  /** An admin is credited with every approver of a request it did not create. */
  readonly admin: boolean;
  /** False for a credential with no deciding role (an agent's, an app backend's). */
  readonly decides: boolean;
  /** True when the credential is an agent's, or was minted with an agent's credential: such an
   * actor never decides, whatever else it carries. */
  readonly agent: boolean;
  readonly proof: Proof;
  /** How the decision arrives (the decision's `channel`). */
  readonly channel: Channel;
}

export interface ActorInput {
  name: string;
  groups?: readonly string[] | undefined;
  /** The credential's roles (`agent`, `reviewer`, `admin`, `app`) when it is a token; a proof that is
   * not a token (a Slack user, a mail address, the local user) stands for a reviewer. */
  roles?: readonly string[] | undefined;
  proof: Proof;
  channel: Channel;
  /** The roles of the credential this one was minted with (a card token's minter). */
  mintedWithRoles?: readonly string[] | undefined;
}

/** The actor a door's proof stands for. Agent-ness is sticky: a token with the `agent` role, or
 * anything minted with one, is an agent's credential whatever other roles it also carries. */
export function actorOf(input: ActorInput): Actor {
  const roles = input.roles;
  const agent = (roles ?? []).includes("agent") || (input.mintedWithRoles ?? []).includes("agent");
  const admin = !agent && (roles ?? []).includes("admin");
  const decides =
    !agent &&
    (roles === undefined || admin || roles.includes("reviewer") || input.proof === "card_token");
  return {
    name: normalizeIdentity(input.name),
    groups: [...new Set((input.groups ?? []).map(normalizeIdentity))],
    admin,
    decides,
    agent,
    proof: input.proof,
    channel: input.channel,
  };
}

/** Why an actor may not decide a request, as a code a door can phrase for its readers. */
export type RefusalReason =
  | "agent"
  | "no_deciding_role"
  | "not_pending"
  | "overdue"
  | "requester"
  | "not_approver"
  | "already_approved";

export interface Refusal {
  reason: RefusalReason;
  /** A sentence for the actor: it names nothing of the request but what the actor may see. */
  message: string;
}

/** Why the actor may not decide the request now, or undefined when it may. Without `now` the
 * deadline is not checked (the engine times an overdue request out first, in the transaction). */
export function refusalOf(
  actor: Actor,
  request: ApprovalRequest,
  now?: number,
): Refusal | undefined {
  const no = (reason: RefusalReason, message: string): Refusal => ({ reason, message });
  if (actor.agent) {
    return no(
      "agent",
      `${actor.name} acts with an agent's credential, and no credential an agent holds (nor anything minted with one) decides a request: a person decides ${request.id} with their own reviewer token`,
    );
  }
  if (!actor.decides) {
    return no(
      "no_deciding_role",
      `the credential of ${actor.name} may read ${request.id} but not decide it`,
    );
  }
  if (!isPending(request)) return no("not_pending", `${request.id} is ${request.status}`);
  if (now !== undefined && isOverdue(request, now)) {
    return no("overdue", `${request.id} passed its deadline and can no longer be decided`);
  }
  if (sameIdentity(actor.name, request.requester)) {
    return no(
      "requester",
      `${actor.name} requested ${request.id} and cannot decide it: nobody approves their own request`,
    );
  }
  if (!mayDecide(request, actor.name, decidingGroups(actor, request))) {
    return no("not_approver", `${actor.name} is not an approver of ${request.id}`);
  }
  if (
    request.decisions.some((d) => d.outcome === "approved" && sameIdentity(d.reviewer, actor.name))
  ) {
    return no(
      "already_approved",
      `${actor.name} approved ${request.id} already; the quorum needs other people`,
    );
  }
  return undefined;
}

/** Why `actor` may not settle an execution of `request` that is not known to have run or failed
 * (retry, mark done, abandon), or undefined when they may: the same people who may decide it (an
 * approver, an admin), never an agent's credential nor the requester. */
export function resolutionRefusal(actor: Actor, request: ApprovalRequest): Refusal | undefined {
  const no = (reason: RefusalReason, message: string): Refusal => ({ reason, message });
  if (actor.agent) {
    return no(
      "agent",
      `${actor.name} acts with an agent's credential, and no credential an agent holds settles what became of an approved action: a person does, with their own reviewer token`,
    );
  }
  if (!actor.decides) {
    return no(
      "no_deciding_role",
      `the credential of ${actor.name} may read ${request.id} but not settle its execution`,
    );
  }
  if (sameIdentity(actor.name, request.requester)) {
    return no("requester", `${actor.name} requested ${request.id} and cannot settle its execution`);
  }
  if (!mayDecide(request, actor.name, decidingGroups(actor, request))) {
    return no("not_approver", `${actor.name} is not an approver of ${request.id}`);
  }
  return undefined;
}

/** The groups the engine credits the actor with: its own, and for an admin the request's approvers. */
export function decidingGroups(actor: Actor, request: ApprovalRequest): string[] {
  if (!actor.admin) return [...actor.groups];
  return [...new Set([...actor.groups, ...request.approvers.map(normalizeIdentity)])];
}

/** Refusals that are about who is acting, answered 403 here with `refusalOf`'s words (which name no
 * approver or group). The others are about the request's state and stay the state machine's: a
 * request no longer pending answers 409 with the winning decision, a second approval by the same
 * person 409, and an overdue one loses to its timeout. */
const FORBIDDEN: ReadonlySet<RefusalReason> = new Set([
  "agent",
  "no_deciding_role",
  "requester",
  "not_approver",
]);

/** The reviewer and groups the state machine decides `request` under. Throws ForbiddenError when
 * the actor may not decide this request at all; the state checks (pending, quorum, deadline) then
 * run in `applyDecision` with this identity, which repeats the identity checks as a backstop. */
export function decidingIdentity(
  actor: Actor,
  request: ApprovalRequest,
): { reviewer: string; groups: string[] } {
  // refusalOf asks who is acting before the request's state: an agent never reaches the state machine.
  const refused = refusalOf(actor, request);
  if (refused && FORBIDDEN.has(refused.reason)) throw new ForbiddenError(refused.message);
  return { reviewer: actor.name, groups: decidingGroups(actor, request) };
}

/** A decision's fields without the identity a door must not choose itself (reviewer, groups,
 * channel): what `decideAs` takes beside the actor. */
export function withoutIdentity<
  T extends { reviewer?: unknown; groups?: unknown; channel?: unknown },
>(input: T): Omit<T, "reviewer" | "groups" | "channel"> {
  const { reviewer: _reviewer, groups: _groups, channel: _channel, ...fields } = input;
  return fields;
}
