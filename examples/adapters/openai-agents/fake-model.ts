// An offline stand-in for a language model, implementing the SDK's `Model` interface: no network, no
// API key. It is stateless, so a run parked in one process resumes in another: when the last input
// is a tool result of its last round it answers with a final message quoting every result of that
// turn; otherwise it calls the tool with the arguments it was given, under fresh call ids.
import { randomUUID } from "node:crypto";
import { type Model, type ModelRequest, type ModelResponse, Usage } from "@openai/agents";

export interface FakeModelOptions {
  tool: string;
  /** One entry per call the model makes in each turn that calls the tool. */
  calls: Array<Record<string, unknown>>;
  /** How many turns call the tool before the final message. @default 1 */
  rounds?: number;
}

export class FakeModel implements Model {
  readonly #options: FakeModelOptions;
  /** How often the model was asked, in this process. */
  requests = 0;

  constructor(options: FakeModelOptions) {
    this.#options = options;
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests++;
    const input = Array.isArray(request.input) ? request.input : [];
    const last = input[input.length - 1] as { type?: string } | undefined;
    const made = input.filter((i) => (i as { type?: string }).type === "function_call").length;
    const rounds = this.#options.rounds ?? 1;
    if (last?.type === "function_call_result" && made >= rounds * this.#options.calls.length) {
      const outputs: string[] = [];
      for (let i = input.length - 1; i >= 0; i--) {
        const item = input[i] as { type?: string; output?: unknown };
        if (item.type !== "function_call_result") break;
        outputs.unshift(outputText(item.output));
      }
      return {
        usage: new Usage(),
        output: [
          {
            type: "message",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: `Done. ${outputs.join(" | ")}` }],
          },
        ],
      };
    }
    const run = randomUUID().slice(0, 8);
    return {
      usage: new Usage(),
      output: this.#options.calls.map((args, i) => ({
        type: "function_call" as const,
        name: this.#options.tool,
        callId: `call_${run}_${i + 1}`,
        status: "completed" as const,
        arguments: JSON.stringify(args),
      })),
    };
  }

  // biome-ignore lint/correctness/useYield: this model answers only whole responses
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("FakeModel does not stream; call runner.run without { stream: true }");
  }
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (output !== null && typeof output === "object" && "text" in output) {
    return String((output as { text: unknown }).text);
  }
  return JSON.stringify(output);
}
