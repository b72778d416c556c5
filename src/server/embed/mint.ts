// Who may mint an embed token, and for which reviewer.
//
// Trust model. The token is minted by the chat app's backend, which knows who its signed-in user is
// and vouches for that name: whoever mints can decide through the card as that reviewer. So:
//   - an admin may mint for any reviewer who may decide the request (any groups it names are
//     believed);
//   - the agent that created the request (its requester) may mint only for a reviewer the server
//     itself knows: one holding a live reviewer token of that name, with every group asked for, who
//     (by name or one of those groups) may decide the request. The requester chooses its request's
//     approvers, so its word alone would let it list a made-up "puppet" and approve its own gate
//     through it; the server's own record of reviewers closes that.
// Never for the requester itself (nobody approves their own request). Every mint is audited (a
// `notified` event naming the minter and the reviewer), and the decision still goes through the
// engine's state machine, which checks the approvers again at the moment of deciding.
import { normalizeIdentity, sameIdentity } from "../../core/identity.js";
import type { ApprovalRequest } from "../../core/schemas.js";
import { mayDecide } from "../../core/state.js";
import { hasRole, type Principal } from "../env.js";
import { HttpProblem } from "../problem.js";
import type { TokenStore } from "../tokens.js";

export interface MintAsk {
  reviewer: string;
  groups: string[];
}

/** The reviewer and groups the token may carry, or a 403 saying why not. */
export async function checkMint(
  caller: Principal,
  request: ApprovalRequest,
  ask: MintAsk,
  tokens: TokenStore,
): Promise<MintAsk> {
  const reviewer = normalizeIdentity(ask.reviewer);
  const groups = [...new Set(ask.groups.map(normalizeIdentity))];
  const admin = hasRole(caller, "admin");
  if (!admin && !sameIdentity(request.requester, caller.name)) {
    throw new HttpProblem(
      403,
      "forbidden",
      `only an admin or the request's requester (${request.requester}) may mint an embed token for ${request.id}`,
    );
  }
  if (sameIdentity(reviewer, request.requester)) {
    throw new HttpProblem(
      403,
      "forbidden",
      `${reviewer} created ${request.id} and may not decide it: nobody approves their own request`,
      { field: "reviewer" },
    );
  }
  const approvers = request.approvers.join(", ") || "any reviewer";
  if (admin) {
    if (!mayDecide(request, reviewer, groups)) throw notApprover(reviewer, request, approvers);
    return { reviewer, groups };
  }
  // The requester's word is not enough: the server's own record of the reviewer is needed.
  const held = await heldGroups(tokens, reviewer);
  if (held === undefined) {
    throw new HttpProblem(
      403,
      "forbidden",
      `${reviewer} holds no reviewer token on this server, so the requester cannot vouch for it: give the reviewer a token (role reviewer), or mint with an admin token`,
      { field: "reviewer" },
    );
  }
  const unknown = groups.filter((g) => !held.has(g));
  if (unknown.length) {
    throw new HttpProblem(
      403,
      "forbidden",
      `no reviewer token of ${reviewer} holds the group(s) ${unknown.join(", ")}`,
      { field: "groups" },
    );
  }
  if (!mayDecide(request, reviewer, groups)) throw notApprover(reviewer, request, approvers);
  return { reviewer, groups };
}

/** The groups of the live reviewer tokens named `reviewer`, or undefined when there is none. */
async function heldGroups(tokens: TokenStore, reviewer: string): Promise<Set<string> | undefined> {
  const mine = (await tokens.list()).filter(
    (t) =>
      t.revokedAt === undefined && t.roles.includes("reviewer") && sameIdentity(t.name, reviewer),
  );
  if (mine.length === 0) return undefined;
  return new Set(mine.flatMap((t) => t.groups.map(normalizeIdentity)));
}

function notApprover(reviewer: string, request: ApprovalRequest, approvers: string): HttpProblem {
  return new HttpProblem(
    403,
    "forbidden",
    `${reviewer} may not decide ${request.id} (approvers: ${approvers}); name one of its approvers, or give the group through which they approve`,
    { field: "reviewer" },
  );
}
