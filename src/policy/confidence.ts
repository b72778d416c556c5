// Confidence scoring of a tool call (pattern 3): a base score per tool, adjusted by who calls it and
// what it does, clamped to 0..100; then the level a human must give: auto, quick or full.
import type { Level } from "../core/schemas.js";

/** What the caller knows about the invocation. Both camelCase and the snake_case keys agents often
 * send (`user_role`, `workspace_verified`) are read. */
export interface ConfidenceContext {
  userId?: string;
  userRole?: string;
  workspaceId?: string;
  workspaceVerified?: boolean;
  /** Marks the call as a bulk operation (same effect as `args.bulk: true`). */
  bulk?: boolean;
  [key: string]: unknown;
}

/** Base score per tool name; tools not listed start at `DEFAULT_BASE_SCORE`. */
export const BASE_SCORES: Readonly<Record<string, number>> = Object.freeze({
  sign_contract: 50,
  delete_project: 40,
  approve_expense: 60,
  send_notification: 80,
  update_task_status: 85,
});

/** Unknown tools start neutral. */
export const DEFAULT_BASE_SCORE = 70;

/** The adjustments, in points. */
export const CONFIDENCE_MODIFIERS = Object.freeze({
  admin: 10,
  verifiedWorkspace: 5,
  /** Applied when `args.amount` is a number strictly greater than `LARGE_AMOUNT`. */
  largeAmount: -15,
  bulk: -10,
});

export const LARGE_AMOUNT = 1000;

export interface ApprovalThresholds {
  /** Confidence at or above which a call runs without a human. @default 85 */
  autoThreshold: number;
  /** Confidence at or above which an inline (quick) approval is enough; below it, full review. @default 60 */
  quickThreshold: number;
}

export const DEFAULT_THRESHOLDS = {
  autoThreshold: 85,
  quickThreshold: 60,
} as const satisfies ApprovalThresholds;

export interface ConfidenceOptions {
  /** Replaces (does not merge with) `BASE_SCORES`. */
  baseScores?: Readonly<Record<string, number>>;
  defaultScore?: number;
}

/**
 * Scores a tool invocation from 0 to 100 (an integer when the inputs are integers).
 * - base: `BASE_SCORES[toolName]`, else 70
 * - `userRole` (or `user_role`) `"admin"`: +10
 * - `workspaceVerified` (or `workspace_verified`) true: +5
 * - `args.amount` a number > 1000: −15 (exactly 1000 is not penalised)
 * - bulk operation (`args.bulk === true`, `context.bulk === true`, or "bulk" in the tool name): −10
 * - clamped to 0..100
 */
export function calculateConfidence(
  toolName: string,
  args: Readonly<Record<string, unknown>> = {},
  context: Readonly<ConfidenceContext> = {},
  options: ConfidenceOptions = {},
): number {
  const bases = options.baseScores ?? BASE_SCORES;
  let score = Object.hasOwn(bases, toolName)
    ? (bases[toolName] ?? DEFAULT_BASE_SCORE)
    : (options.defaultScore ?? DEFAULT_BASE_SCORE);

  if (pick(context, "userRole", "user_role") === "admin") score += CONFIDENCE_MODIFIERS.admin;
  if (pick(context, "workspaceVerified", "workspace_verified") === true) {
    score += CONFIDENCE_MODIFIERS.verifiedWorkspace;
  }
  const amount = args.amount;
  if (typeof amount === "number" && amount > LARGE_AMOUNT) {
    score += CONFIDENCE_MODIFIERS.largeAmount;
  }
  if (isBulk(toolName, args, context)) score += CONFIDENCE_MODIFIERS.bulk;
  return clampScore(score);
}

/** `auto` at or above `autoThreshold`, `quick` at or above `quickThreshold`, else `full`. */
export function determineApprovalLevel(
  confidence: number,
  thresholds: Partial<ApprovalThresholds> = {},
): Level {
  const auto = thresholds.autoThreshold ?? DEFAULT_THRESHOLDS.autoThreshold;
  const quick = thresholds.quickThreshold ?? DEFAULT_THRESHOLDS.quickThreshold;
  // NaN compares false everywhere, so a broken score falls through to the strictest level.
  if (confidence >= auto) return "auto";
  if (confidence >= quick) return "quick";
  return "full";
}

export function clampScore(score: number): number {
  if (Number.isNaN(score)) return 0;
  return Math.min(100, Math.max(0, score));
}

function isBulk(
  toolName: string,
  args: Readonly<Record<string, unknown>>,
  context: Readonly<ConfidenceContext>,
): boolean {
  return args.bulk === true || context.bulk === true || /bulk/i.test(toolName);
}

function pick(context: Readonly<ConfidenceContext>, camel: string, snake: string): unknown {
  return context[camel] ?? context[snake];
}
