// The compare-and-set loop every change of a stored request goes through (decide, cancel, claim):
// read, compute the transition, write it only if nobody changed the request in between, else read
// again. A deadline is a deadline: a pending request found past it is timed out first, through the
// same guarded write, whatever was asked, so a decision that arrives late loses to the timeout (and
// the conflict names it), and one that arrives after an escalation is checked against the new approvers.
import { ConflictError } from "../core/errors.js";
import type { ApprovalRequest } from "../core/schemas.js";
import { applyTimeout, isOverdue, type Transition } from "../core/state.js";

export interface TransactDeps {
  load(id: string): Promise<ApprovalRequest>;
  /** A copy of the request this engine saw last (recent.ts), tried before reading the store. */
  peek?(id: string): ApprovalRequest | undefined;
  /** Writes `t` if the stored version is still `expectedVersion`; undefined when it was not. */
  commit(t: Transition, expectedVersion: number): Promise<ApprovalRequest | undefined>;
  now(): number;
  /** Told of each timeout or escalation this loop committed on the way. */
  onDeadline(stored: ApprovalRequest): void;
}

/** What a step decides for the current request: a transition to write, or a request to return as it
 * is (an idempotent replay). It throws to refuse. */
export type Step = (
  current: ApprovalRequest,
  now: number,
) => Promise<Transition | { done: ApprovalRequest }>;

const ATTEMPTS = 20;

export async function transact(
  deps: TransactDeps,
  id: string,
  step: Step,
): Promise<ApprovalRequest> {
  // A remembered copy is only trusted by the write's own version check: when it is refused, or when
  // the step refuses or replays on what may be an old copy, the loop reads the store and starts over.
  const remembered = deps.peek?.(id);
  if (remembered) {
    const now = deps.now();
    if (!isOverdue(remembered, now)) {
      const outcome = await step(remembered, now).catch(() => undefined);
      if (outcome && !("done" in outcome)) {
        const stored = await deps.commit(outcome, remembered.version);
        if (stored) return stored;
      }
    }
  }
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await deps.load(id);
    const now = deps.now();
    if (isOverdue(current, now)) {
      const stored = await deps.commit(applyTimeout(current, now), current.version);
      if (stored) deps.onDeadline(stored);
      continue; // read again: the step now meets a settled or escalated request
    }
    const outcome = await step(current, now);
    if ("done" in outcome) return outcome.done;
    const stored = await deps.commit(outcome, current.version);
    if (stored) return stored;
    // Lost a race (another approval, an escalation, a decision): read again and re-apply.
  }
  throw new ConflictError(`request ${id} kept changing; gave up after ${ATTEMPTS} attempts`);
}
