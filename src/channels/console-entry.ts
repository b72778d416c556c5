// `airlock-hitl/console`: the terminal console of pattern 2 (`airlock review`): prompting an operator
// for a decision, reviewing the pending queue on the local database or through a server, and the
// console's renderer of a review view. Named exports only.
export {
  type ConsoleDecision,
  operatorDecision,
  type PromptOptions,
  promptOperator,
  promptReviewer,
  type ReviewerPromptOptions,
  reviewTimeoutMs,
} from "./console.js";
export {
  type ConsoleShown,
  consoleShownOf,
  consoleViewLines,
  type RevisionShown,
} from "./console-view.js";
export {
  type RemoteReviewOptions,
  type ReviewOptions,
  type ReviewResult,
  runRemoteReview,
  runReview,
} from "./review.js";
