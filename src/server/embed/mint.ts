// Who may mint an embed (approval card) token, for which reviewer, and whether a card still stands.
//
// Trust model. A card token lets its reviewer decide one request from a chat app's page. It is
// minted by the app's backend, which authenticates its own signed-in user, holding an `app` token
// (or by an admin). An agent never mints: the agent writes its request's approvers itself, so a card
// it could mint for any reviewer it names would approve its own gate (issue: "no credential an agent
// holds, nor anything minted with it, ever decides"). Besides:
//   - the reviewer must be one the server knows: a live reviewer token of that name, holding every
//     group the card carries, who (by name or one of those groups) may decide the request; never
//     the requester;
//   - a card stands only while its minter's token and one of its reviewer's tokens are live: it dies
//     with the reviewer's last token, and with the app's (checked on every use, `checkCardStands`);
//   - minting is rate limited per minter and capped per request;
//   - every refused mint answers the same sentence, so a caller learns nothing about which reviewer
//     names exist or which groups they hold.
// Every mint is audited (a `notified` event naming the minter and the reviewer), and the decision
// still goes through the engine's `decideAs`, which checks authority again at the moment of deciding.
import { actorOf, refusalOf } from "../../core/authority.js";
import { normalizeIdentity, sameIdentity } from "../../core/identity.js";
import type { ApprovalRequest } from "../../core/schemas.js";
import { hasRole, type Principal } from "../env.js";
import { HttpProblem } from "../problem.js";
import type { Role, TokenRecord, TokenStore } from "../tokens.js";
import type { EmbedClaims } from "./token.js";

/** The roles that may mint a card token: an app backend, or an admin. */
export const MINTING_ROLES: readonly Role[] = ["app", "admin"];
/** The most card tokens minted for one request, whoever mints them. */
export const MAX_MINTS_PER_REQUEST = 50;

export interface MintAsk {
  reviewer: string;
  groups: string[];
}

/** The one answer to every refused mint: it says what is needed, never what was found. */
export const MINT_REFUSED =
  "no card token minted: a card token is minted by an app or admin token for a reviewer who holds a live reviewer token with every group asked for and may decide this request (never its requester)";

const refused = (): HttpProblem => new HttpProblem(403, "forbidden", MINT_REFUSED);

/** True when the caller's token may mint at all (not an agent's, and an app's or an admin's). */
export function mayMint(caller: Principal): boolean {
  return !hasRole(caller, "agent") && MINTING_ROLES.some((r) => hasRole(caller, r));
}

/** The reviewer and groups the card may carry, or the one 403. Groups not asked for default to
 * those the reviewer's live tokens hold. */
export async function checkMint(
  caller: Principal,
  request: ApprovalRequest,
  ask: MintAsk,
  tokens: TokenStore,
  now = Date.now(),
): Promise<MintAsk> {
  if (!mayMint(caller)) throw refused();
  const reviewer = normalizeIdentity(ask.reviewer);
  const held = heldGroups(await tokens.list(), reviewer);
  if (held === undefined) throw refused();
  const asked = [...new Set(ask.groups.map(normalizeIdentity))];
  if (asked.some((g) => !held.has(g))) throw refused();
  const groups = asked.length > 0 ? asked : [...held];
  const actor = actorOf({ name: reviewer, groups, proof: "card_token", channel: "chat" });
  if (refusalOf(actor, request, now) !== undefined) throw refused();
  return { reviewer, groups };
}

/** Throws 401 unless the card's minter and reviewer still hold live tokens (a revoked reviewer, or
 * a revoked app, ends every card derived from them). */
export async function checkCardStands(claims: EmbedClaims, tokens: TokenStore): Promise<void> {
  const all = await tokens.list();
  const minter = all.find((t) => t.id === claims.minterTokenId);
  const held = heldGroups(all, claims.reviewer);
  const stands =
    minter !== undefined &&
    minter.revokedAt === undefined &&
    held !== undefined &&
    claims.groups.every((g) => held.has(normalizeIdentity(g)));
  if (stands) return;
  throw new HttpProblem(
    401,
    "unauthorized",
    "this card token no longer stands: its reviewer's or its app's token was revoked; ask the app for a new one",
    { headers: { "www-authenticate": 'Bearer realm="airlock", error="invalid_token"' } },
  );
}

/** The groups of the live reviewer tokens named `reviewer`, or undefined when there is none. */
function heldGroups(all: readonly TokenRecord[], reviewer: string): Set<string> | undefined {
  const mine = all.filter(
    (t) =>
      t.revokedAt === undefined &&
      t.roles.includes("reviewer") &&
      !t.roles.includes("agent") &&
      sameIdentity(t.name, reviewer),
  );
  if (mine.length === 0) return undefined;
  return new Set(mine.flatMap((t) => t.groups.map(normalizeIdentity)));
}
