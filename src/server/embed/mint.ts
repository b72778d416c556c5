// Who may mint an embed token, and for which reviewer.
//
// Trust model. The token is minted by the chat app's backend, which knows who its signed-in user is
// and vouches for that name. Two callers may mint:
//   - an admin, for any reviewer who may decide the request (any groups it names are believed);
//   - the agent that created the request (its requester), for a reviewer the request lists BY NAME
//     among its approvers, or for one who holds a reviewer token on this server whose groups (or
//     name) the request lists. A requester cannot vouch for group membership on its own: otherwise
//     it could name a puppet "in group ops" and approve its own gate through it.
// Never for the requester itself (nobody approves their own request), and never for a name that
// may not decide the request. The decision still goes through the engine's state machine, which
// checks all of this again at the moment of deciding.
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
  // The requester's word is enough for a name the request itself lists.
  const listedByName = request.approvers.some((a) => sameIdentity(a, reviewer));
  if (listedByName && groups.length === 0) return { reviewer, groups };
  // Anything else (groups, or a request open to any reviewer) needs the server's own record of the
  // reviewer: a live reviewer token of that name holding the groups asked for.
  const held = await heldGroups(tokens, reviewer);
  if (held === undefined) {
    throw new HttpProblem(
      403,
      "forbidden",
      `${reviewer} is not listed by name among the approvers of ${request.id} (${approvers}) and holds no reviewer token on this server: the requester cannot vouch for it; ask an admin to mint the token`,
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
