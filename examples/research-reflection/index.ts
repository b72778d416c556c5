// Pattern 1: a research pipeline as fixed steps, where the approval step always runs.
//   analyse → generate reflection (no searches) → approval → execute approved searches → final state
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { createPlanner, type Planner } from "../planner/index.js";
import { type Gate, type Log, newRunId, quiet } from "../shared/gate.js";
import { createSearchIndex } from "../shared/search-index.js";
import { type ApprovalDecision, getResearchApproval } from "./approval.js";
import { DEFAULT_MAIN_QUERY, DEFAULT_SUB_QUESTIONS, HEAT_PUMP_CORPUS } from "./corpus.js";
import {
  analyse,
  executeApprovedSearches,
  generateReflection,
  type ResearchState,
  summarizeProgress,
} from "./steps.js";

export {
  type ApprovalDecision,
  decideByReply,
  getResearchApproval,
  RESEARCH_ACTION,
  toApprovalDecision,
} from "./approval.js";
export type { ReflectionMetadata, ResearchState } from "./steps.js";

export interface ResearchReflectionOptions {
  airlock: Gate;
  planner?: Planner;
  log?: Log;
  signal?: AbortSignal;
  mainQuery?: string;
  subQuestions?: readonly string[];
  /** `false` auto-approves every recommended query (the `--no-approval` run). @default true */
  requireApproval?: boolean;
  /** The gate's deadline. @default 3600000 (one hour) */
  timeoutMs?: number;
  /** @default 3 */
  maxAdditionalSearches?: number;
  /** @default 3 */
  resultsPerSearch?: number;
  /** Part of the gate's idempotency key: the same run id replays the same gate. @default random */
  runId?: string;
  /** Who the gates name as requester. Against a server it must be the agent token's name (the
   * server refuses any other). @default "research-pipeline" */
  requester?: string;
  /** Called when the gate waits for a person, with the text message for chat or email. */
  onApprovalRequest?: (request: ApprovalRequest, message: string) => void | Promise<void>;
}

export interface ResearchReflectionResult {
  state: ResearchState;
  approval: ApprovalDecision;
  /** The approval message (text format), when a gate was created. */
  message?: string;
  requestId?: string;
}

export async function runResearchReflection(
  opts: ResearchReflectionOptions,
): Promise<ResearchReflectionResult> {
  const log = opts.log ?? quiet;
  const planner = opts.planner ?? createPlanner();
  const index = createSearchIndex(HEAT_PUMP_CORPUS);
  const mainQuery = opts.mainQuery ?? DEFAULT_MAIN_QUERY;
  const runId = opts.runId ?? newRunId();

  const analysed = analyse(mainQuery, opts.subQuestions ?? DEFAULT_SUB_QUESTIONS, index);
  const progress = summarizeProgress(analysed);
  log(
    `analyse: ${progress.completedCount} sub-questions of "${mainQuery}", average confidence ${progress.avgConfidence}, ${progress.lowConfidenceCount} low`,
  );

  const output = await generateReflection(analysed, planner, opts.maxAdditionalSearches ?? 3);
  const { critique, recommendedQueries } = output.reflection;
  log(
    `reflection (${planner.name}): ${critique.length} critiques, ${recommendedQueries.length} recommended queries`,
  );

  const { decision, message } = await getResearchApproval(opts.airlock, output.reflection, {
    mainQuery,
    progress,
    requireApproval: opts.requireApproval ?? true,
    timeoutMs: opts.timeoutMs ?? 3_600_000,
    requester: opts.requester ?? "research-pipeline",
    key: `research-reflection:${runId}`,
    ...(opts.signal ? { signal: opts.signal } : {}),
    onRequest: async (request, text) => {
      log(
        `approval: waiting on request ${request.id}; reply APPROVE ALL, SKIP or SELECT 1,3 (${recommendedQueries.length} queries)`,
      );
      await opts.onApprovalRequest?.(request, text);
    },
  });
  log(
    `approval: ${decision.approvalMethod}, ${decision.approved ? `${decision.selectedQueries.length} of ${recommendedQueries.length} queries approved` : "not approved"}${decision.reviewer ? ` by ${decision.reviewer}` : ""}${decision.reviewerNotes ? ` (${decision.reviewerNotes})` : ""}`,
  );

  const state = executeApprovedSearches(output, decision, index, opts.resultsPerSearch ?? 3, log);
  log(
    `done: ${state.reflection_metadata?.searches_performed.length ?? 0} searches performed, ${state.reflection_metadata?.improvements_made ?? 0} findings improved`,
  );
  const result: ResearchReflectionResult = { state, approval: decision };
  if (message !== undefined) result.message = message;
  if (decision.requestId !== undefined) result.requestId = decision.requestId;
  return result;
}
