// `airlock-hitl/console`: the terminal console of pattern 2 (`airlock review`): prompting an operator
// for a decision and reviewing the pending queue. Named exports only.
export {
  type ConsoleDecision,
  operatorDecision,
  type PromptOptions,
  promptOperator,
  reviewTimeoutMs,
} from "./console.js";
export { type ReviewOptions, type ReviewResult, runReview } from "./review.js";
