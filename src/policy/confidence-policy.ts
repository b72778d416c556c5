// The confidence policy as the engine's `policy`: scores the request's action and args with
// `calculateConfidence` and maps the score to a level with the thresholds.

import type { Policy } from "../core/policy.js";
import type { ParsedRequestInput } from "../core/schemas.js";
import {
  type ApprovalThresholds,
  type ConfidenceContext,
  calculateConfidence,
  DEFAULT_THRESHOLDS,
  determineApprovalLevel,
} from "./confidence.js";

export interface ConfidencePolicyOptions extends Partial<ApprovalThresholds> {
  /** Replaces `calculateConfidence` (same inputs, a score in 0..100). */
  score?: (toolName: string, args: Record<string, unknown>, context: ConfidenceContext) => number;
  /** Where the caller's context lives in a request. @default `input.hitl.context` (what hitlTool
   * keeps), else `input.metadata.context` when an object */
  context?: (input: ParsedRequestInput) => ConfidenceContext;
}

export function confidencePolicy(options: ConfidencePolicyOptions = {}): Policy {
  const thresholds: ApprovalThresholds = {
    autoThreshold: options.autoThreshold ?? DEFAULT_THRESHOLDS.autoThreshold,
    quickThreshold: options.quickThreshold ?? DEFAULT_THRESHOLDS.quickThreshold,
  };
  const score = options.score ?? calculateConfidence;
  const contextOf = options.context ?? callContext;
  return ({ input }) => {
    const confidence = score(input.action, input.args, contextOf(input));
    const level = determineApprovalLevel(confidence, thresholds);
    return {
      level,
      confidence,
      reason: `confidence ${confidence} for ${input.action}: ${explain(level, thresholds)}`,
    };
  };
}

function explain(level: string, t: ApprovalThresholds): string {
  if (level === "auto") return `auto (>= ${t.autoThreshold})`;
  if (level === "quick") return `quick review (>= ${t.quickThreshold}, < ${t.autoThreshold})`;
  return `full review (< ${t.quickThreshold})`;
}

function callContext(input: ParsedRequestInput): ConfidenceContext {
  const c = input.hitl?.context ?? input.metadata.context;
  return c !== null && typeof c === "object" && !Array.isArray(c) ? (c as ConfidenceContext) : {};
}
