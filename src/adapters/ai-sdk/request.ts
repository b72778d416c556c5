// The Airlock request for one AI SDK tool call: its idempotency key (from the conversation id and the
// tool call id, so a re-run of the same turn, a second server instance or a restarted process finds
// the same gate instead of opening another) and what a reviewer sees (tool name, args, preview).
import { createHash } from "node:crypto";
import {
  type AirlockApi,
  type ApprovalRequest,
  hashArgs,
  isAirlockError,
  type RequestInput,
} from "../../index.js";
import type { JsonSchema } from "../../tools/args-schema.js";

/** How one tool's calls are put to a person. Every field is optional. */
export interface ToolGate<INPUT = unknown> {
  /** The request's action, which policies and routes match on. @default the tool's name */
  action?: string;
  /** @default "Run tool `NAME`" */
  title?: string | ((input: INPUT) => string);
  /** What the reviewer sees (markdown). @default the args as a JSON block */
  preview?: (input: INPUT) => string;
  risk?: RequestInput["risk"];
  /** Groups or users allowed to decide. @default anyone with the reviewer role */
  approvers?: string[];
  quorum?: number;
  /** The gate's deadline. @default none */
  timeoutMs?: number;
  /** What the deadline decides: `reject` (default), `approve`, or an escalation. */
  onTimeout?: RequestInput["onTimeout"];
  /** Decisions a reviewer may take; add `respond` to let a reviewer answer in place of the tool
   * (their response is the call's result, and the tool does not run). @default approve, reject,
   * revise, edit */
  allowed?: RequestInput["allowed"];
  /** The JSON Schema a reviewer's response must fit (with `respond`; given alone, it allows
   * `respond` besides the defaults). */
  responseSchema?: Record<string, unknown>;
  /** A fixed level instead of the engine's policy (`auto` approves at once, recorded). */
  level?: RequestInput["level"];
  metadata?: Record<string, unknown>;
}

/** Keys are at most 200 characters; a longer conversation id is hashed into the key. */
const MAX_KEY = 200;

/** The idempotency key of the gate for one tool call of one conversation. */
export function approvalKey(conversationId: string, toolCallId: string): string {
  const key = `ai-sdk:${conversationId}:${toolCallId}`;
  if (key.length <= MAX_KEY) return key;
  const digest = createHash("sha256").update(`${conversationId}\u0000${toolCallId}`).digest("hex");
  return `ai-sdk:${digest}`;
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export interface GateContext {
  airlock: AirlockApi;
  conversationId: string;
  /** Undefined: the engine's default, or the caller's token name over HTTP. */
  requester: string | undefined;
  gateFor(toolName: string): ToolGate | undefined;
  /** The JSON Schema of the tool's `inputSchema`, carried as the request's `argsSchema` (undefined
   * when it cannot be carried, or the call's input does not fit it). */
  argsSchemaFor?(toolName: string, input: Record<string, unknown>): Promise<JsonSchema | undefined>;
}

/** The request input for a tool call. Deterministic, so two processes building it for the same call
 * send the same content (a replay by key, never a clash). */
export function requestInput(
  ctx: GateContext,
  call: { toolName: string; toolCallId: string; input: Record<string, unknown> },
  gate: ToolGate,
  argsSchema?: JsonSchema,
): RequestInput {
  const { toolName, toolCallId, input } = call;
  const title = typeof gate.title === "function" ? gate.title(input) : gate.title;
  const out: RequestInput = {
    key: approvalKey(ctx.conversationId, toolCallId),
    action: gate.action ?? toolName,
    title: title ?? `Run tool \`${toolName}\``,
    summary: `The assistant of conversation \`${ctx.conversationId}\` wants to call the tool \`${toolName}\` with these arguments.`,
    args: input,
    preview: gate.preview ? gate.preview(input) : jsonBlock(input),
    allowed: gate.allowed ?? ["approve", "reject", "revise", "edit"],
    metadata: {
      ...gate.metadata,
      source: "ai-sdk",
      conversationId: ctx.conversationId,
      toolCallId,
      toolName,
    },
  };
  if (ctx.requester !== undefined) out.requester = ctx.requester;
  if (ctx.conversationId.length <= MAX_KEY) out.correlationId = ctx.conversationId;
  if (gate.risk !== undefined) out.risk = gate.risk;
  if (gate.approvers !== undefined) out.approvers = gate.approvers;
  if (gate.quorum !== undefined) out.quorum = gate.quorum;
  if (gate.timeoutMs !== undefined) out.timeoutMs = gate.timeoutMs;
  if (gate.onTimeout !== undefined) out.onTimeout = gate.onTimeout;
  if (gate.level !== undefined) out.level = gate.level;
  if (gate.responseSchema !== undefined) {
    out.responseSchema = gate.responseSchema;
    if (gate.allowed === undefined)
      out.allowed = ["approve", "reject", "revise", "edit", "respond"];
  }
  // The tool's own input schema: an edit that does not fit is refused (422) wherever it is made.
  if (argsSchema !== undefined) out.argsSchema = argsSchema;
  return out;
}

/** The gate of a tool call, read by key; undefined when it was never opened. */
export function findGate(
  ctx: GateContext,
  toolCallId: string,
): Promise<ApprovalRequest | undefined> {
  const key = approvalKey(ctx.conversationId, toolCallId);
  return ctx.airlock.getByKey(key, ctx.requester === undefined ? {} : { requester: ctx.requester });
}

/** The gate of a tool call, opened now when it does not exist yet. Two processes racing to open it
 * get the same request: the key settles it. */
export async function openGate(
  ctx: GateContext,
  call: { toolName: string; toolCallId: string; input: Record<string, unknown> },
  gate: ToolGate,
): Promise<ApprovalRequest> {
  const existing = await findGate(ctx, call.toolCallId);
  if (existing) return existing;
  try {
    const argsSchema = await ctx.argsSchemaFor?.(call.toolName, call.input);
    return await ctx.airlock.request(requestInput(ctx, call, gate, argsSchema));
  } catch (err) {
    // Another process opened it with other content (another gate configuration) in between.
    if (isAirlockError(err, "conflict")) {
      const winner = await findGate(ctx, call.toolCallId);
      if (winner) return winner;
    }
    throw err;
  }
}

export function jsonBlock(value: unknown): string {
  return `\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\``;
}

/** Why a call may not use its gate's approval: its input is not what the request asked about (nor
 * what a reviewer edited it to), e.g. a client resent the same tool call id with other input.
 * Undefined when the input is bound to the request. */
export function inputMismatch(
  request: ApprovalRequest,
  input: Record<string, unknown>,
): string | undefined {
  const hash = hashArgs(input);
  if (hash === request.argsHash) return undefined;
  const edited = request.decision?.editedArgs;
  if (edited !== undefined && hash === hashArgs(edited)) return undefined;
  return `the call's arguments differ from what was approved: Airlock request ${request.id} was opened for other arguments, so this call does not run with its approval`;
}

/** Why the bridge refuses to gate a tool: only tools whose run goes through Airlock (gated tools given
 * to `airlockToolApproval`, wrapped to run through `runApproved`) may get an Airlock approval. */
export function unguardedReason(toolName: string): string {
  return `Airlock does not guard the tool \`${toolName}\` (it is not a gated tool given to airlockToolApproval), so it cannot approve a call of it`;
}
