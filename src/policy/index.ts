// `airlock-hitl/policy`: the policies' parts beyond the root's (`confidencePolicy`, `firstVerdict`,
// `smallFileWrites`, `when`, `createLearnedTrust`): the confidence score and its thresholds, rule
// predicates, learned trust's pieces, args shapes. Named exports only.
export { argsShape, argsShapeHash } from "./args-shape.js";
export { strictestVerdict } from "./compose.js";
export {
  type ApprovalThresholds,
  BASE_SCORES,
  type ConfidenceContext,
  calculateConfidence,
  DEFAULT_THRESHOLDS,
  determineApprovalLevel,
} from "./confidence.js";
export type { ConfidencePolicyOptions } from "./confidence-policy.js";
export {
  DEFAULT_TRUST_THRESHOLD,
  type LearnedTrust,
  type LearnedTrustOptions,
  learnedTrustPolicy,
  suggestTrustRules,
  type TrustSuggestion,
} from "./learned-trust.js";
export { forActions, isSmallFileWrite, type RulePredicate } from "./rules.js";
