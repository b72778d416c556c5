// A scripted language model for the AI SDK, built on the SDK's own `MockLanguageModelV4` (from
// `ai/test`), so the example and its tests run offline. It behaves like a small tool-using model:
//   - when the conversation ends with a user message, it calls the scripted tool(s);
//   - when it ends with tool results, it answers in text saying what each tool returned, or why it
//     was denied or failed, so a test can read what reached the model.
import { MockLanguageModelV4 } from "ai/test";

export interface ScriptedCall {
  toolName: string;
  input: Record<string, unknown>;
}

type ModelOptions = NonNullable<ConstructorParameters<typeof MockLanguageModelV4>[0]>;
type DoGenerate = Extract<NonNullable<ModelOptions["doGenerate"]>, (...args: never[]) => unknown>;
type DoStream = Extract<NonNullable<ModelOptions["doStream"]>, (...args: never[]) => unknown>;
type Prompt = Parameters<DoGenerate>[0]["prompt"];

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** `calls(turn)` gives the tool calls for the n-th user turn (0-based); tool call ids are
 * `${idPrefix}-${turn}-${i}`, so a test knows them in advance. */
export function scriptedModel(
  calls: (turn: number) => ScriptedCall[],
  options: { idPrefix?: string } = {},
): MockLanguageModelV4 {
  const prefix = options.idPrefix ?? "call";
  type ToolCallPart = { type: "tool-call"; toolCallId: string; toolName: string; input: string };
  const reply = (prompt: Prompt): { text: string } | { toolCalls: ToolCallPart[] } => {
    const last = prompt.at(-1);
    if (last?.role === "tool") return { text: describeResults(prompt) };
    const turn = prompt.filter((m) => m.role === "user").length - 1;
    const toolCalls = calls(turn).map(
      (c, i): ToolCallPart => ({
        type: "tool-call",
        toolCallId: `${prefix}-${turn}-${i}`,
        toolName: c.toolName,
        input: JSON.stringify(c.input),
      }),
    );
    return toolCalls.length ? { toolCalls } : { text: "Nothing to do." };
  };
  const doGenerate: DoGenerate = async ({ prompt }) => {
    const r = reply(prompt);
    if ("toolCalls" in r) {
      return {
        content: r.toolCalls,
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: [],
      };
    }
    return {
      content: [{ type: "text", text: r.text }],
      finishReason: { unified: "stop", raw: undefined },
      usage,
      warnings: [],
    };
  };
  const doStream: DoStream = async ({ prompt }) => {
    const r = reply(prompt);
    const parts: unknown[] = [{ type: "stream-start", warnings: [] }];
    if ("toolCalls" in r) parts.push(...r.toolCalls);
    else {
      parts.push(
        { type: "text-start", id: "t1" },
        { type: "text-delta", id: "t1", delta: r.text },
        { type: "text-end", id: "t1" },
      );
    }
    parts.push({
      type: "finish",
      usage,
      finishReason: { unified: "toolCalls" in r ? "tool-calls" : "stop", raw: undefined },
    });
    const stream = new ReadableStream({
      start(controller) {
        for (const p of parts) controller.enqueue(p);
        controller.close();
      },
    });
    return { stream } as Awaited<ReturnType<DoStream>>;
  };
  return new MockLanguageModelV4({ doGenerate, doStream });
}

/** What the model "says" about the tool results at the end of the prompt. */
function describeResults(prompt: Prompt): string {
  const last = prompt.at(-1);
  if (last?.role !== "tool") return "";
  const lines: string[] = [];
  for (const part of last.content) {
    if (part.type !== "tool-result") continue;
    const out = part.output;
    if (out.type === "execution-denied") {
      lines.push(`${part.toolName} was not run: ${out.reason ?? "denied"}`);
    } else if (out.type === "error-text" || out.type === "error-json") {
      lines.push(`${part.toolName} failed: ${JSON.stringify(out.value)}`);
    } else if (out.type === "json" || out.type === "text") {
      lines.push(`${part.toolName} returned ${JSON.stringify(out.value)}`);
    } else {
      lines.push(`${part.toolName} returned something`);
    }
  }
  return lines.join("\n");
}
