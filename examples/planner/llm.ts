// A planner that asks an OpenAI-compatible chat-completions endpoint (any local server speaking that
// API works). Each step sends a JSON-mode prompt naming the exact shape wanted and checks the answer
// with zod. When a step fails (server unreachable, HTTP error, output that is not the JSON asked for)
// it raises a PlannerError that says what happened and what to do, or, when a fallback planner is
// given, reports that error through `onFallback` and answers with the fallback instead.
import { z } from "zod";
import {
  type IntentInput,
  type PlanInput,
  type Planner,
  PlannerError,
  type ReflectionInput,
  reflectionSchema,
  researchPlanSchema,
  robotIntentSchema,
  type SynthesisInput,
  synthesisSchema,
} from "./types.js";

export interface LlmPlannerOptions {
  /** Base URL of the API (e.g. `http://127.0.0.1:11434/v1`), or the full `/chat/completions` URL. */
  url: string;
  model: string;
  apiKey?: string;
  /** @default 60000 */
  timeoutMs?: number;
  /** Answers a step the model could not answer. Without it, the step throws. */
  fallback?: Planner;
  /** Told about every step that fell back, with the error that caused it. */
  onFallback?: (error: PlannerError) => void;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
}

/** The chat-completions URL for a base URL. */
export function completionsUrl(url: string): string {
  const trimmed = url.trim().replace(/\/+$/, "");
  return trimmed.endsWith("/chat/completions") ? trimmed : `${trimmed}/chat/completions`;
}

export function llmPlanner(options: LlmPlannerOptions): Planner {
  const endpoint = completionsUrl(options.url);
  const doFetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const where = `the LLM planner (model \`${options.model}\` at ${endpoint})`;

  async function complete(task: string, instructions: string, input: unknown): Promise<unknown> {
    const system = [
      `TASK: ${task}`,
      instructions,
      "Reply with one JSON object only, no prose and no code fence.",
    ].join("\n");
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    let response: Response;
    try {
      response = await doFetch(endpoint, {
        method: "POST",
        headers,
        signal: AbortSignal.timeout(timeoutMs),
        body: JSON.stringify({
          model: options.model,
          temperature: 0,
          response_format: { type: "json_object" },
          messages: [
            { role: "system", content: system },
            { role: "user", content: JSON.stringify(input) },
          ],
        }),
      });
    } catch (err) {
      throw new PlannerError(
        "llm_unreachable",
        `${where} could not be reached: ${err instanceof Error ? err.message : String(err)}. Check that the server runs and AIRLOCK_LLM_URL points at it, or unset AIRLOCK_LLM_URL to use the offline planner.`,
        { cause: err },
      );
    }
    const body = await response.text();
    if (!response.ok) {
      throw new PlannerError(
        "llm_http",
        `${where} answered HTTP ${response.status}: ${clip(body)}. Check AIRLOCK_LLM_MODEL and AIRLOCK_LLM_API_KEY.`,
      );
    }
    const content = messageContent(body);
    if (content === undefined) {
      throw new PlannerError(
        "llm_bad_output",
        `${where} answered without choices[0].message.content: ${clip(body)}. Is it an OpenAI-compatible chat-completions endpoint?`,
      );
    }
    try {
      return JSON.parse(stripFence(content));
    } catch {
      throw new PlannerError(
        "llm_bad_output",
        `${where} did not answer with JSON for ${task}: ${clip(content)}. Use a model that follows JSON mode, or unset AIRLOCK_LLM_URL to use the offline planner.`,
      );
    }
  }

  async function step<T>(
    task: string,
    instructions: string,
    schema: z.ZodType<T>,
    input: unknown,
    fallback: ((p: Planner) => Promise<T>) | undefined,
  ): Promise<T> {
    try {
      const raw = await complete(task, instructions, input);
      const parsed = schema.safeParse(raw);
      if (!parsed.success) {
        throw new PlannerError(
          "llm_bad_output",
          `${where} answered ${task} with JSON of the wrong shape (${parsed.error.issues
            .slice(0, 3)
            .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
            .join("; ")}): ${clip(JSON.stringify(raw))}`,
        );
      }
      return parsed.data;
    } catch (err) {
      if (!(err instanceof PlannerError) || !options.fallback || !fallback) throw err;
      options.onFallback?.(err);
      return fallback(options.fallback);
    }
  }

  return {
    name: `llm:${options.model}`,
    planResearch: (input: PlanInput) =>
      step(
        "plan_research",
        `Plan a research report without searching.${input.clarifications?.length ? " The reviewer answered clarifying questions (clarifications): make the queries and outline fit their answers, and ask none of those questions again." : ""} Shape: {"clarifyingQuestions": string[], "expandedQueries": string[] (at most ${input.maxQueries} search queries), "outline": string[] (section headings)}.`,
        researchPlanSchema,
        input,
        (p) => p.planResearch(input),
      ).then((plan) => ({
        ...plan,
        expandedQueries: plan.expandedQueries.slice(0, Math.max(1, input.maxQueries)),
      })),
    reflect: (input: ReflectionInput) =>
      step(
        "reflect",
        `Critique the research findings (confidence is 0..1). Shape: {"critique": [{"issue": string, "importance": "high"|"medium"|"low"}], "additionalQuestions": string[], "recommendedQueries": string[] (at most ${input.maxQueries} search queries that would fill the gaps)}.`,
        reflectionSchema,
        input,
        (p) => p.reflect(input),
      ).then((r) => ({
        ...r,
        recommendedQueries: r.recommendedQueries.slice(0, Math.max(0, input.maxQueries)),
      })),
    parseIntent: (input: IntentInput) =>
      step(
        "parse_intent",
        `Turn the robot operator's command into an intent. Apply every revision comment in "feedback", in order (e.g. "skip position 2" removes position 2). Use only positions from "knownPositions" unless the operator names others. Shape: {"task": "tack_weld"|"inspect", "positions": number[]}.`,
        robotIntentSchema,
        input,
        (p) => p.parseIntent(input),
      ),
    synthesize: (input: SynthesisInput) =>
      step(
        "synthesize",
        `Write the report section "${input.heading}" from the notes only, citing them as [ref]; do not repeat what reportSoFar says;${input.clarifications?.length ? " weigh what the reviewer's answers (clarifications) say matters to them;" : ""} at most ${input.maxChars} characters of markdown prose, no heading. Shape: {"markdown": string}.`,
        synthesisSchema,
        input,
        (p) => p.synthesize(input).then((markdown) => ({ markdown })),
      ).then((s) => s.markdown.trim().slice(0, input.maxChars)),
  };
}

/** The part of a chat-completions answer the planner reads. */
const completionSchema = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1),
});

function messageContent(body: string): string | undefined {
  try {
    return completionSchema.parse(JSON.parse(body)).choices[0]?.message.content;
  } catch {
    return undefined;
  }
}

/** Some models wrap JSON in a ```json fence even in JSON mode. */
function stripFence(text: string): string {
  const m = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/i.exec(text);
  return m?.[1] ?? text;
}

function clip(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > 200 ? `${one.slice(0, 197)}...` : one;
}
