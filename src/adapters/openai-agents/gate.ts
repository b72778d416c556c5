// How one tool call of an OpenAI Agents run becomes an Airlock request: its idempotency key (from the
// call id, so a replay never opens a second gate), what the reviewer sees (tool name, args, a
// preview), and what the adapter keeps in the request's metadata to resume the run from any process
// (the turn's call ids and, on the turn's first gate, the serialized RunState).
import type { RunToolApprovalItem } from "@openai/agents";
import type { Redactor } from "../../audit/redact.js";
import type { OnTimeout, Risk } from "../../core/schemas.js";
import { InvalidInputError, type RequestInput } from "../../index.js";
import { argsSchemaFor, type JsonSchema } from "../../tools/args-schema.js";

/** One tool call waiting for approval, as the adapter shows it. */
export interface ToolCall {
  tool: string;
  callId: string;
  /** The call's arguments, parsed; `{ input: <raw> }` when the model sent something that is not a
   * JSON object. */
  args: Record<string, unknown>;
  agent: string;
}

/** How gates are opened; shared by `airlockNeedsApproval` and `approveInterruptions`, which must agree
 * so that both describe a call the same way. */
export interface GateOptions {
  /** Who asks, recorded on every request; idempotency keys are scoped per requester. Over HTTP it
   * must be the token's own name. @default the engine's default requester, or the token's name */
  requester?: string;
  /** Groups or users allowed to decide. @default [] (anyone) */
  approvers?: string[];
  /** The gate's deadline, from when it opens. @default none */
  timeoutMs?: number;
  /** What a deadline decides. @default "reject" */
  onTimeout?: OnTimeout;
  risk?: Risk;
  /** Prefix of the idempotency key; the call id follows. @default "openai-agents:" */
  keyPrefix?: string;
  /** The Airlock action of a call (what schemas and policies match). @default the tool's name */
  action?: (tool: string) => string;
  /** The title reviewers see. @default "Approve <tool>" */
  title?: (call: ToolCall) => string;
  /** What reviewers see as the preview (markdown). @default the args as a JSON block */
  preview?: (call: ToolCall) => string;
  /** Groups the gates of a run in Airlock. @default the key of the turn's first gate */
  correlationId?: string;
  /** Lets a reviewer answer a call instead of approving it (`respond`): the SDK has no such
   * decision, so the resume rejects the call with the response as its message, which is the tool
   * output the model reads (the tool does not run). @default false */
  respond?: boolean;
  /** The JSON Schema a response must fit (with `respond`). */
  responseSchema?: Record<string, unknown>;
}

/** What the adapter stores in `metadata.openaiAgents` of each request it opens. */
export interface GateMetadata {
  v: 1;
  tool: string;
  callId: string;
  agent: string;
  /** Every call id of the turn, in the order of the run's interruptions. */
  turn: string[];
  /** The serialized RunState (`state.toString()`): on the turn's first gate only. */
  state?: string;
  /** Whether the call is a function tool the adapter can run with edited args. */
  editable: boolean;
}

export const DEFAULT_REQUESTER = "openai-agents";
export const DEFAULT_KEY_PREFIX = "openai-agents:";

export function keyFor(options: GateOptions, callId: string): string {
  return `${options.keyPrefix ?? DEFAULT_KEY_PREFIX}${callId}`;
}

export function parseArgs(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined || raw.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(raw);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
    return { input: value };
  } catch {
    return { input: raw };
  }
}

/** The call behind an interruption, with the JSON Schema of its function tool's `parameters` (what
 * its gate carries as `argsSchema`, so an edit that does not fit is refused wherever it is made). */
export function callOf(
  item: RunToolApprovalItem,
): ToolCall & { editable: boolean; argsSchema?: JsonSchema } {
  const raw = item.rawItem as { type: string; callId?: string; id?: string };
  const callId = raw.callId ?? raw.id;
  if (callId === undefined) {
    throw new InvalidInputError(
      `the interruption of \`${item.name ?? item.toolName ?? "a tool"}\` carries no call id, so no Airlock gate can be keyed to it`,
      "interruptions",
    );
  }
  const editable = raw.type === "function_call";
  const args = editable ? parseArgs(item.arguments) : rawArgs(item.rawItem);
  const tool = item.name ?? item.toolName ?? raw.type;
  const argsSchema = editable ? argsSchemaFor(parametersOf(item, tool), tool) : undefined;
  return {
    tool,
    callId,
    args,
    agent: item.agent.name,
    editable,
    ...(argsSchema === undefined ? {} : { argsSchema }),
  };
}

/** The `parameters` (JSON Schema) of the agent's function tool `name`, if it has one. */
function parametersOf(item: RunToolApprovalItem, name: string): unknown {
  const tools = (item.agent as { tools?: unknown }).tools;
  if (!Array.isArray(tools)) return undefined;
  const found = tools.find(
    (t: { type?: unknown; name?: unknown }) => t?.type === "function" && t.name === name,
  ) as { parameters?: unknown } | undefined;
  return found?.parameters;
}

function rawArgs(raw: object): Record<string, unknown> {
  const { type: _type, ...rest } = raw as Record<string, unknown>;
  return rest;
}

/** The request that gates `call`, its args shown through `redactor` (the engine's redaction).
 * `meta` is left out when only the policy looks at the input. */
export function gateInput(
  options: GateOptions,
  call: ToolCall & { argsSchema?: JsonSchema },
  redactor: Redactor,
  meta?: Omit<GateMetadata, "v" | "tool" | "callId" | "agent">,
  correlationId?: string,
): RequestInput {
  const shown = redactor.redact(call.args);
  const json = JSON.stringify(shown, null, 2);
  const input: RequestInput = {
    key: keyFor(options, call.callId),
    action: options.action ? options.action(call.tool) : call.tool,
    title: clip(options.title ? options.title(call) : `Approve ${call.tool}`, 500),
    summary: [
      `**Agent:** ${call.agent}`,
      `**Tool:** \`${call.tool}\` (call \`${call.callId}\`)`,
      "",
      "```json",
      json,
      "```",
    ].join("\n"),
    args: call.args,
    preview: options.preview
      ? options.preview(call)
      : `\`${call.tool}\`\n\n\`\`\`json\n${json}\n\`\`\``,
    approvers: options.approvers ?? [],
    allowed: [
      "approve",
      "reject",
      "revise",
      ...(meta?.editable === false ? [] : (["edit"] as const)),
      ...(options.respond ? (["respond"] as const) : []),
    ],
  };
  if (options.respond && options.responseSchema !== undefined) {
    input.responseSchema = options.responseSchema;
  }
  // Unset, the engine's default requester or, over HTTP, the token's own name (the only one it may use).
  if (options.requester !== undefined) input.requester = options.requester;
  if (options.timeoutMs !== undefined) input.timeoutMs = options.timeoutMs;
  if (options.onTimeout !== undefined) input.onTimeout = options.onTimeout;
  if (options.risk !== undefined) input.risk = options.risk;
  // The tool's own parameters: an edit that does not fit is refused (422) wherever it is made.
  if (call.argsSchema !== undefined && meta?.editable !== false) input.argsSchema = call.argsSchema;
  const correlation = options.correlationId ?? correlationId;
  if (correlation !== undefined) input.correlationId = correlation;
  if (meta) {
    const metadata: GateMetadata = {
      v: 1,
      tool: call.tool,
      callId: call.callId,
      agent: call.agent,
      ...meta,
    };
    input.metadata = { openaiAgents: metadata };
  }
  return input;
}

/** The adapter's metadata of a request, or undefined when another caller opened it. */
export function gateMetadata(metadata: Record<string, unknown>): GateMetadata | undefined {
  const m = metadata.openaiAgents as Partial<GateMetadata> | undefined;
  if (
    m === null ||
    typeof m !== "object" ||
    m.v !== 1 ||
    typeof m.callId !== "string" ||
    typeof m.tool !== "string" ||
    !Array.isArray(m.turn)
  ) {
    return undefined;
  }
  return m as GateMetadata;
}

function clip(text: string, max: number): string {
  const t = text.trim() || "Approve a tool call";
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}
