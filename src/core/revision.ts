// `revisionOf` links a new request to the one it revises: reviewers see it as the next version, with
// a diff against it. Only the same requester's request, sent back for revision (or answered with a
// response the agent then folded into a new version), can be revised; else one agent could present
// its request as the revision of another agent's reviewed plan.
import { InvalidInputError } from "./errors.js";
import { normalizeIdentity, sameIdentity } from "./identity.js";
import type { ApprovalRequest, ParsedRequestInput } from "./schemas.js";
import type { Store } from "./store.js";

/** Refuses (invalid_input on `revisionOf`) a revision of an unknown request, of another requester's
 * request, or of a request not in status `revise` or `responded`. A replay (same key, same input: `inputHash`) is
 * returned instead of refused, so a caller replaying after a crash still gets its first request
 * even when the revised one has been pruned since. Undefined when the input may be created. */
export async function checkRevisionOf(
  store: Pick<Store, "getRequest" | "getRequestByKey">,
  input: ParsedRequestInput,
  inputHash: string,
): Promise<ApprovalRequest | undefined> {
  const id = input.revisionOf;
  if (id === undefined) return undefined;
  const previous = await store.getRequest(id);
  const problem = revisionProblem(previous, id, input.requester);
  if (problem === undefined) return undefined;
  if (input.key !== undefined) {
    const first = await store.getRequestByKey(normalizeIdentity(input.requester), input.key);
    if (first?.inputHash === inputHash) return first;
  }
  throw new InvalidInputError(`invalid request: \`revisionOf\`: ${problem}`, "revisionOf");
}

function revisionProblem(
  previous: ApprovalRequest | undefined,
  id: string,
  requester: string,
): string | undefined {
  // Another requester's request is answered like a missing one: its id tells the caller nothing.
  if (previous === undefined || !sameIdentity(previous.requester, requester)) {
    return `no request \`${id}\` of requester \`${normalizeIdentity(requester)}\`; a revision names one of its requester's own requests`;
  }
  if (previous.status !== "revise" && previous.status !== "responded") {
    return `request \`${id}\` is \`${previous.status}\`, not \`revise\` or \`responded\`; only a request sent back for revision (or answered with a response) can be revised`;
  }
  return undefined;
}
