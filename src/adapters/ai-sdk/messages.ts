// The server-side bridge for a conversation kept as model messages (`generateText`, `streamText`,
// `ToolLoopAgent` with `messages`): each unanswered `tool-approval-request` part becomes an Airlock
// request (opened if nothing opened it yet, e.g. a tool gated by the SDK's own `toolApproval` map),
// and each Airlock decision becomes the matching `tool-approval-response` (approved + reason).
// A call whose input is not what its gate's request holds (the same tool call id resent with other
// input) is denied, and so is a call of a tool Airlock does not guard (ungated with `false`, or not
// given to airlockToolApproval): its run would not go through `runApproved`.
import type {
  ModelMessage,
  ToolApprovalRequest,
  ToolApprovalResponse,
  ToolCallPart,
  ToolModelMessage,
} from "ai";
import { type ApprovalRequest, isAirlockError } from "../../index.js";
import { answerFor } from "./answer.js";
import type { Runner } from "./execute.js";
import {
  type GateContext,
  inputMismatch,
  isJsonObject,
  openGate,
  unguardedReason,
} from "./request.js";

export interface ResponsesOptions {
  /** Wait until every open gate is decided (or times out). @default false */
  wait?: boolean;
  /** With `wait`, the longest to wait; past it the result lists what is still pending. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface ResponsesResult {
  /** One `tool-approval-response` per decided gate, in the order of the requests. */
  responses: ToolApprovalResponse[];
  /** Gates still waiting for a person. */
  pending: ApprovalRequest[];
  /** `{ role: "tool", content: responses }` when every request is answered: append it to the
   * messages and call the model again. Undefined while something is pending or nothing was asked. */
  message?: ToolModelMessage;
}

interface OpenApproval {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/** Approval requests (not automatic) in assistant messages that no tool message answers yet. */
export function unansweredApprovals(messages: ModelMessage[]): OpenApproval[] {
  const answered = new Set<string>();
  const calls = new Map<string, ToolCallPart>();
  const asked: ToolApprovalRequest[] = [];
  for (const m of messages) {
    if (typeof m.content === "string") continue;
    for (const part of m.content) {
      if (m.role === "tool" && part.type === "tool-approval-response")
        answered.add(part.approvalId);
      if (m.role !== "assistant") continue;
      if (part.type === "tool-call") calls.set(part.toolCallId, part);
      if (part.type === "tool-approval-request" && part.isAutomatic !== true) asked.push(part);
    }
  }
  const out: OpenApproval[] = [];
  for (const a of asked) {
    if (answered.has(a.approvalId)) continue;
    const call = calls.get(a.toolCallId);
    if (!call) continue; // the SDK refuses such a history itself (ToolCallNotFoundForApprovalError)
    out.push({
      approvalId: a.approvalId,
      toolCallId: a.toolCallId,
      toolName: call.toolName,
      input: call.input,
    });
  }
  return out;
}

export async function approvalResponses(
  ctx: GateContext,
  runner: Runner,
  messages: ModelMessage[],
  options: ResponsesOptions = {},
): Promise<ResponsesResult> {
  const responses: ToolApprovalResponse[] = [];
  const pending: ApprovalRequest[] = [];
  const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
  for (const open of unansweredApprovals(messages)) {
    const gate = ctx.gateFor(open.toolName);
    let answer: { approved: boolean; reason: string } | undefined;
    if (!gate) {
      // A tool whose run does not go through Airlock: an approval here would bind nothing.
      answer = { approved: false, reason: unguardedReason(open.toolName) };
    } else if (!isJsonObject(open.input)) {
      answer = {
        approved: false,
        reason: `Airlock gates tools whose input is a JSON object; \`${open.toolName}\` got ${typeof open.input}`,
      };
    } else {
      let request = await openGate(
        ctx,
        { toolName: open.toolName, toolCallId: open.toolCallId, input: open.input },
        gate,
      );
      const mismatch = inputMismatch(request, open.input);
      if (mismatch === undefined && request.status === "pending" && options.wait) {
        request = await waitUntil(ctx, request, deadline, options.signal);
      }
      if (mismatch !== undefined) {
        answer = { approved: false, reason: mismatch };
      } else if (request.status === "pending") {
        pending.push(request);
        continue;
      } else {
        answer = await answerFor(runner, open.toolName, request);
      }
    }
    responses.push({ type: "tool-approval-response", approvalId: open.approvalId, ...answer });
  }
  const result: ResponsesResult = { responses, pending };
  if (pending.length === 0 && responses.length > 0) {
    result.message = { role: "tool", content: responses };
  }
  return result;
}

/** Waits for a decision until `deadline`; a request still pending then is returned as it is. */
export async function waitUntil(
  ctx: GateContext,
  request: ApprovalRequest,
  deadline: number | undefined,
  signal: AbortSignal | undefined,
): Promise<ApprovalRequest> {
  const opts: { timeoutMs?: number; signal?: AbortSignal } = {};
  if (signal) opts.signal = signal;
  if (deadline !== undefined) opts.timeoutMs = Math.max(1, deadline - Date.now());
  try {
    return await ctx.airlock.waitFor(request.id, opts);
  } catch (err) {
    if (isAirlockError(err, "timeout")) return request;
    throw err;
  }
}
