// The reasoning steps of the example agents, behind one small interface: research planning,
// reflection on findings, robot intent parsing and synthesis. Two implementations: the offline
// rule-based planner (the default) and an OpenAI-compatible chat-completions planner.
// The zod schemas check what a model returns before an agent acts on it.
import { z } from "zod";

export const researchPlanSchema = z.object({
  clarifyingQuestions: z.array(z.string().min(1)).max(10),
  expandedQueries: z.array(z.string().min(1)).min(1).max(10),
  outline: z.array(z.string().min(1)).min(1).max(12),
});
export type ResearchPlan = z.infer<typeof researchPlanSchema>;

export const critiqueSchema = z.object({
  issue: z.string().min(1),
  importance: z.enum(["high", "medium", "low"]),
});
export type Critique = z.infer<typeof critiqueSchema>;

export const reflectionSchema = z.object({
  critique: z.array(critiqueSchema).max(20),
  additionalQuestions: z.array(z.string().min(1)).max(20),
  recommendedQueries: z.array(z.string().min(1)).max(20),
});
export type Reflection = z.infer<typeof reflectionSchema>;

export const ROBOT_TASKS = ["tack_weld", "inspect"] as const;
export const robotIntentSchema = z.object({
  task: z.enum(ROBOT_TASKS),
  positions: z.array(z.number().int()).max(50),
});
export type RobotIntent = z.infer<typeof robotIntentSchema>;

export const synthesisSchema = z.object({ markdown: z.string() });

/** One answered sub-question of a research run. */
export interface Finding {
  question: string;
  answer: string;
  /** 0..1 */
  confidence: number;
  sources: string[];
}

/** A clarifying question of a plan and the reviewer's answer to it (pattern 5's `respond`). */
export interface Clarification {
  question: string;
  answer: string;
}

export interface PlanInput {
  query: string;
  /** The most expanded queries to propose. */
  maxQueries: number;
  /** The reviewer's answers to an earlier plan's clarifying questions: the plan is made for them,
   * and asks none of those questions again. */
  clarifications?: Clarification[];
}

export interface ReflectionInput {
  mainQuery: string;
  findings: Finding[];
  /** The most extra queries to recommend. */
  maxQueries: number;
}

export interface IntentInput {
  /** The operator's command, e.g. "weld at position 1 and 2". */
  command: string;
  /** Revision comments from earlier reviews, oldest first ("skip position 2"). */
  feedback: string[];
  /** The positions that exist in the cell. */
  knownPositions: number[];
}

export interface SourceNote {
  /** The citation number shown as [n]. */
  ref: number;
  title: string;
  text: string;
}

export interface SynthesisInput {
  query: string;
  heading: string;
  /** Every heading of the report, so a section can leave to the others what belongs to them. */
  outline: string[];
  notes: SourceNote[];
  /** The report so far, so a section does not repeat another. */
  reportSoFar: string;
  /** The longest section text wanted, in characters. */
  maxChars: number;
  /** The reviewer's answers to the plan's clarifying questions: what the report should weigh. */
  clarifications?: Clarification[];
}

export interface Planner {
  /** "rule-based", or "llm:<model>". */
  readonly name: string;
  planResearch(input: PlanInput): Promise<ResearchPlan>;
  reflect(input: ReflectionInput): Promise<Reflection>;
  parseIntent(input: IntentInput): Promise<RobotIntent>;
  /** Markdown prose for one report section, citing notes as [n]. */
  synthesize(input: SynthesisInput): Promise<string>;
}

export type PlannerErrorCode =
  | "not_understood"
  | "config"
  | "llm_unreachable"
  | "llm_http"
  | "llm_bad_output";

/** A reasoning step that could not be done; `code` says why. */
export class PlannerError extends Error {
  readonly code: PlannerErrorCode;
  constructor(code: PlannerErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PlannerError";
    this.code = code;
  }
}

export function isPlannerError(value: unknown): value is PlannerError {
  return value instanceof Error && value.name === "PlannerError" && "code" in value;
}
