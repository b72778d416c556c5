// Which planner runs: the offline rule-based one, unless AIRLOCK_LLM_URL names an OpenAI-compatible
// chat-completions server (then AIRLOCK_LLM_MODEL is required and AIRLOCK_LLM_API_KEY optional).
import { llmPlanner } from "./llm.js";
import { ruleBasedPlanner } from "./rule-based.js";
import { type Planner, PlannerError } from "./types.js";

export { completionsUrl, type LlmPlannerOptions, llmPlanner } from "./llm.js";
export { ruleBasedPlanner } from "./rule-based.js";
export {
  type Clarification,
  type Critique,
  type Finding,
  type IntentInput,
  isPlannerError,
  type PlanInput,
  type Planner,
  PlannerError,
  type PlannerErrorCode,
  type Reflection,
  type ReflectionInput,
  type ResearchPlan,
  type RobotIntent,
  type SourceNote,
  type SynthesisInput,
} from "./types.js";

export interface CreatePlannerOptions {
  /** Told when an LLM step failed and the offline planner answered instead. */
  onFallback?: (error: PlannerError) => void;
  fetch?: typeof fetch;
}

export function createPlanner(
  env: NodeJS.ProcessEnv = process.env,
  options: CreatePlannerOptions = {},
): Planner {
  const url = env.AIRLOCK_LLM_URL?.trim();
  if (!url) return ruleBasedPlanner();
  const model = env.AIRLOCK_LLM_MODEL?.trim();
  if (!model) {
    throw new PlannerError(
      "config",
      "Expected `AIRLOCK_LLM_MODEL` to name the model when `AIRLOCK_LLM_URL` is set, got nothing. Set it, or unset AIRLOCK_LLM_URL to use the offline planner.",
    );
  }
  try {
    new URL(url);
  } catch {
    throw new PlannerError(
      "config",
      `Expected \`AIRLOCK_LLM_URL\` to be a URL such as http://127.0.0.1:11434/v1, got \`${url}\`.`,
    );
  }
  const apiKey = env.AIRLOCK_LLM_API_KEY?.trim();
  return llmPlanner({
    url,
    model,
    ...(apiKey ? { apiKey } : {}),
    fallback: ruleBasedPlanner(),
    ...(options.onFallback ? { onFallback: options.onFallback } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** A sentence for the log saying which planner runs. */
export function describePlanner(planner: Planner): string {
  return planner.name === "rule-based"
    ? "planner: offline rule-based (set AIRLOCK_LLM_URL to use a model)"
    : `planner: ${planner.name} (falls back to the offline planner when a step fails)`;
}
