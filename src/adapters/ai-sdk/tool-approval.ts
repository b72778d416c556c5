// `airlockToolApproval`: Airlock as the approval layer of an AI SDK (`ai` 7) conversation. It gives
// `generateText` / `streamText` / `ToolLoopAgent`
//   - `toolApproval`: the call-level approval function. Each gated tool call opens (idempotently, keyed
//     by conversation id + tool call id) an Airlock request; Airlock's policy may approve it at once
//     (recorded), a terminal request answers at once (approved, or denied with the reason), and
//     otherwise a person is asked: mode `defer` returns `user-approval` at once (the SDK emits a
//     `tool-approval-request`, the turn ends, and the conversation continues when Airlock has decided),
//     mode `block` waits for the decision inside the call. When the SDK re-validates an approval the
//     client sent back, Airlock's decision is what counts: a client cannot approve what Airlock did not.
//   - `tools`: the same tools, whose gated `execute` runs through `runApproved`, once per approval,
//     with the reviewer's edited args when they edited (so an approved edit is an approval: the SDK
//     runs the call and the tool's output with the edited args is its result).
//   - `responses(messages)` / `applyDecisions(uiMessages)`: the server-side bridge that turns each
//     `tool-approval-request` into an Airlock request and each Airlock decision into the matching
//     `tool-approval-response` (see messages.ts and ui-messages.ts).
import {
  asSchema,
  type InferToolInput,
  type ModelMessage,
  type ToolApprovalStatus,
  type ToolSet,
  type TypedToolCall,
} from "ai";
import { isAirlockClient } from "../../client/index.js";
import { compileArgsSchema } from "../../core/args-schema.js";
import { type AirlockApi, AirlockError, isAirlockError } from "../../index.js";
import { ARGS_SCHEMA_WARNING, argsSchemaFor, type JsonSchema } from "../../tools/args-schema.js";
import { answerFor } from "./answer.js";
import { createRunner, type Runner } from "./execute.js";
import { approvalResponses, type ResponsesOptions, type ResponsesResult } from "./messages.js";
import {
  findGate,
  type GateContext,
  inputMismatch,
  isJsonObject,
  openGate,
  type ToolGate,
} from "./request.js";
import {
  type ApplyDecisionsOptions,
  type ApplyDecisionsResult,
  applyDecisions,
  type ChatMessage,
} from "./ui-messages.js";

export type ApprovalMode = "defer" | "block";

export interface AirlockToolApprovalOptions<TOOLS extends ToolSet> {
  /** The engine (`createAirlock`) or a client of a server (`createClient`). */
  airlock: AirlockApi;
  /** The chat's id: with the tool call id, it keys each gate, so every process finds the same one. */
  conversationId: string;
  /** The tools the model may call, as given to `generateText` / `streamText`. */
  tools: TOOLS;
  /** `defer` (default): ask and end the turn at once; `block`: wait for the decision in the call. */
  mode?: ApprovalMode;
  /** How each tool's calls are put to a person; `false` leaves a tool ungated. @default every tool
   * gated with the defaults of `ToolGate` */
  gates?: { [K in keyof TOOLS]?: ToolGate<InferToolInput<TOOLS[K]>> | false };
  /** Who asks (the app or agent), recorded on each request and as who executed each call; keys are
   * per requester. Required with an in-process engine (`createAirlock`). Leave it unset with a
   * client of a server (`createClient`): the server records the token's name, and lookups use it
   * too. */
  requester?: string;
  /** In mode `block`, the longest one call waits (not the gate's deadline); past it the call falls
   * back to `defer`. @default no limit */
  waitTimeoutMs?: number;
}

/** The approval function: assignable to `toolApproval` of `generateText`, `streamText` and
 * `ToolLoopAgent` for the same tools. */
export type AirlockApprovalFunction<TOOLS extends ToolSet> = (options: {
  toolCall: TypedToolCall<TOOLS>;
  messages: ModelMessage[];
  /** The tools the SDK will run the call with (the SDK passes them). */
  tools?: ToolSet | undefined;
  toolsContext?: unknown;
}) => Promise<ToolApprovalStatus>;

export interface AirlockToolApproval<TOOLS extends ToolSet> {
  toolApproval: AirlockApprovalFunction<TOOLS>;
  /** The tools to pass to the SDK: gated tools execute through `runApproved`, once per approval. */
  tools: TOOLS;
  /** For a conversation kept as model messages: opens a gate for each unanswered
   * `tool-approval-request` and answers those Airlock has decided (see `ResponsesResult`). */
  responses(messages: ModelMessage[], options?: ResponsesOptions): Promise<ResponsesResult>;
  /** For a `useChat` conversation (UI messages): Airlock's decisions become `approval-responded`
   * parts, and answers the client sent are checked against Airlock (see `ApplyDecisionsOptions`). */
  applyDecisions<M extends ChatMessage>(
    messages: M[],
    options?: ApplyDecisionsOptions,
  ): Promise<ApplyDecisionsResult<M>>;
}

export function airlockToolApproval<TOOLS extends ToolSet>(
  options: AirlockToolApprovalOptions<TOOLS>,
): AirlockToolApproval<TOOLS> {
  const { airlock, conversationId, tools } = options;
  const mode = options.mode ?? "defer";
  if (mode !== "defer" && mode !== "block") {
    throw new AirlockError(
      "invalid_input",
      `Expected \`mode\` to be "defer" or "block", got \`${String(mode)}\``,
    );
  }
  if (typeof conversationId !== "string" || conversationId.trim() === "") {
    throw new AirlockError(
      "invalid_input",
      `Expected \`conversationId\` to be a non-empty string, got \`${String(conversationId)}\``,
    );
  }
  const requester = options.requester;
  if (requester === undefined ? !isAirlockClient(airlock) : requester.trim() === "") {
    // In process nothing names the caller: its requests and executions would read `anonymous`.
    throw new AirlockError(
      "invalid_input",
      `Expected \`requester\` to name who asks (e.g. "support-bot"), got \`${String(requester)}\`: with an in-process engine it is required (it is recorded on each request and as who executed the tool); leave it unset only with createClient(), where the server names the token`,
    );
  }
  const gates = (options.gates ?? {}) as Record<string, ToolGate | false | undefined>;
  const ctx: GateContext = {
    airlock,
    conversationId,
    requester,
    gateFor(toolName) {
      const gate = Object.hasOwn(gates, toolName) ? gates[toolName] : undefined;
      if (gate === false || !Object.hasOwn(tools, toolName)) return undefined;
      return gate ?? {};
    },
    argsSchemaFor: (toolName, input) => carriedSchema(tools, toolName, input),
  };
  const runner = createRunner(airlock, tools, requester);

  const toolApproval: AirlockApprovalFunction<TOOLS> = async ({
    toolCall,
    messages,
    tools: running,
  }) => {
    const { toolName, toolCallId, input } = toolCall;
    const gate = ctx.gateFor(toolName);
    if (!gate) return "not-applicable";
    if (!isJsonObject(input)) {
      return denied(
        `Airlock gates tools whose input is a JSON object; \`${toolName}\` got ${typeof input}`,
      );
    }
    // The SDK calls this again when a conversation continues with an approval the client sent back.
    const revalidating = callAppearsIn(messages, toolCallId);
    let request = await findGate(ctx, toolCallId);
    if (!request) {
      if (revalidating) {
        return denied(`No Airlock request was opened for this call, so nobody approved it`);
      }
      try {
        request = await openGate(ctx, { toolName, toolCallId, input }, gate);
      } catch (err) {
        // Fail closed: args the engine refuses (its schema for the action, limits) never run.
        if (isAirlockError(err, "invalid_input"))
          return denied(`Airlock refused the call: ${err.message}`);
        throw err;
      }
    }
    // Found by key alone: the same tool call id resent with other input is not what was approved.
    const mismatch = inputMismatch(request, input);
    if (mismatch !== undefined) return denied(mismatch);
    if (request.status === "pending") {
      if (mode === "block") {
        try {
          request = await airlock.waitFor(
            request.id,
            options.waitTimeoutMs === undefined ? {} : { timeoutMs: options.waitTimeoutMs },
          );
        } catch (err) {
          if (!isAirlockError(err, "timeout")) throw err;
          return waiting(request.id);
        }
      } else if (revalidating) {
        // The client answered a gate Airlock has not decided: the conversation has moved on without
        // a decision, so the gate is withdrawn rather than left for a reviewer to decide in vain.
        await airlock
          .cancel(request.id, {
            reason: "the conversation went on with an answer that was not Airlock's decision",
          })
          .catch((err: unknown) => {
            if (!isAirlockError(err, "conflict")) throw err;
          });
        return denied(
          `Airlock request ${request.id} was not decided; an answer sent by the client does not count`,
        );
      } else {
        return waiting(request.id);
      }
    }
    const answer = await answerFor(runner, toolName, request);
    // Only a gated tool's `execute` runs the reviewer's edited args, or returns their response
    // without running; the SDK's own would run the model's args. Fail closed when the SDK was
    // given other tools.
    const edited = request.decision?.editedArgs !== undefined;
    const answered = request.status === "responded";
    if (answer.approved && (edited || answered) && running && !isGated(running[toolName])) {
      const what = answered
        ? "The reviewer answered in place of the tool"
        : "The reviewer edited the arguments";
      return denied(
        `${what}, and the tool \`${toolName}\` given to the SDK is not the one from airlockToolApproval, so it would run the model's arguments: pass \`tools\` from the same airlockToolApproval() to the SDK (Airlock request ${request.id})`,
      );
    }
    return { type: answer.approved ? "approved" : "denied", reason: answer.reason };
  };

  return {
    toolApproval,
    tools: wrapTools(tools, ctx, runner),
    responses: (messages, opts) => approvalResponses(ctx, runner, messages, opts),
    applyDecisions: (messages, opts) => applyDecisions(ctx, runner, messages, opts),
  };
}

const schemaCache = new WeakMap<object, Promise<JsonSchema | undefined>>();

/** The JSON Schema of a tool's `inputSchema` (zod, a Standard Schema, or `jsonSchema()`), as the AI
 * SDK gives it to the model, when a request can carry it and the call's input fits it (the input
 * is the schema's parsed output: a schema that transforms its input may not take it back). */
async function carriedSchema(
  tools: ToolSet,
  toolName: string,
  input: Record<string, unknown>,
): Promise<JsonSchema | undefined> {
  const t = Object.hasOwn(tools, toolName) ? tools[toolName] : undefined;
  const source = t?.inputSchema as object | undefined;
  if (source == null) return undefined;
  let pending = schemaCache.get(source);
  if (!pending) {
    pending = (async () => {
      try {
        const json = await asSchema(source as Parameters<typeof asSchema>[0]).jsonSchema;
        return argsSchemaFor(json, toolName);
      } catch (err) {
        process.emitWarning(
          `Airlock: the requests of tool ${toolName} carry no argsSchema: its input schema has no JSON Schema (${err instanceof Error ? err.message : String(err)}).`,
          { code: ARGS_SCHEMA_WARNING },
        );
        return undefined;
      }
    })();
    schemaCache.set(source, pending);
  }
  const schema = await pending;
  if (schema === undefined) return undefined;
  if (compileArgsSchema(schema).safeParse(input).success) return schema;
  process.emitWarning(
    `Airlock: a call of tool ${toolName} carries no argsSchema: its parsed input does not fit the tool's JSON Schema (a schema that transforms its input). Edits are checked where the tool runs.`,
    { code: ARGS_SCHEMA_WARNING },
  );
  return undefined;
}

function denied(reason: string): ToolApprovalStatus {
  return { type: "denied", reason };
}

function waiting(id: string): ToolApprovalStatus {
  return { type: "user-approval", reason: `Waiting for a decision in Airlock (request ${id})` };
}

/** True when an assistant message already holds this tool call: the SDK is re-validating an answer. */
function callAppearsIn(messages: ModelMessage[], toolCallId: string): boolean {
  return messages.some(
    (m) =>
      m.role === "assistant" &&
      typeof m.content !== "string" &&
      m.content.some((p) => p.type === "tool-call" && p.toolCallId === toolCallId),
  );
}

/** Tools whose `execute` runs through `runApproved` (made by `wrapTools`). */
const gatedTools = new WeakSet<object>();

function isGated(t: unknown): boolean {
  return typeof t === "object" && t !== null && gatedTools.has(t);
}

/** The tools with each gated `execute` running through `runApproved`: it looks the gate up by the
 * call's key and runs the approved (possibly edited) args once; anything else becomes a tool error
 * the model reads, and the tool does not run. */
function wrapTools<TOOLS extends ToolSet>(tools: TOOLS, ctx: GateContext, runner: Runner): TOOLS {
  const out: Record<string, unknown> = {};
  for (const [name, t] of Object.entries(tools)) {
    if (typeof t.execute !== "function" || !ctx.gateFor(name)) {
      out[name] = t;
      continue;
    }
    type Options = Parameters<NonNullable<typeof t.execute>>[1];
    const gated = async (options: Options): Promise<{ answered: unknown } | { value: unknown }> => {
      const request = await findGate(ctx, options.toolCallId);
      if (!request) {
        throw new AirlockError(
          "not_found",
          `no Airlock request exists for tool call ${options.toolCallId} of conversation ${ctx.conversationId}: pass \`toolApproval\` from the same airlockToolApproval() to the SDK`,
        );
      }
      const result = await runner.run(name, request, options);
      // A reviewer answered in place of the tool: their response is the call's result.
      if (!result.ok && result.reason === "responded") return { answered: result.response };
      if (!result.ok) throw new AirlockError("conflict", `${name} did not run: ${result.detail}`);
      return { value: result.value };
    };
    // A tool that streams its outputs (an async generator) stays one, so the SDK still sees them.
    const wrapped = {
      ...t,
      execute: runner.streams(name)
        ? async function* (_input: unknown, options: Options) {
            const out = await gated(options);
            if ("answered" in out) yield out.answered;
            else yield* out.value as AsyncIterable<unknown>;
          }
        : async (_input: unknown, options: Options) => {
            const out = await gated(options);
            return "answered" in out ? out.answered : out.value;
          },
    };
    gatedTools.add(wrapped);
    out[name] = wrapped;
  }
  return out as TOOLS;
}
