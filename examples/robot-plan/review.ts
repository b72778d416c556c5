// Who reviews a plan. The agent only opens a gate and waits for it; a reviewer is anything that decides
// it: the inbox, the `airlock` CLI, or, in-process, the operator's terminal prompt below.

import { operatorDecision, promptOperator } from "../../src/channels/console.js";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import type { Gate } from "../shared/gate.js";

/** Decides (or leaves undecided) one plan-review request. */
export type PlanReviewer = (request: ApprovalRequest, gate: Gate) => Promise<void>;

export interface ConsoleReviewerOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** @default "operator" */
  reviewer?: string;
}

/** The terminal prompt of pattern 2: `[a]pprove [r]evise [d]ecline`, asked until the gate's deadline.
 * No answer in time records nothing: the gate's own deadline times it out. */
export function consoleReviewer(opts: ConsoleReviewerOptions): PlanReviewer {
  const reviewer = opts.reviewer ?? "operator";
  return async (request, gate) => {
    const timeoutMs = Math.max(0, (request.deadline ?? Date.now()) - Date.now());
    const answer = await promptOperator(request, {
      input: opts.input,
      output: opts.output,
      timeoutMs,
      ownRequest: true,
    });
    const decision = operatorDecision(answer, { reviewer });
    if (decision) await gate.decide(request.id, decision);
  };
}
