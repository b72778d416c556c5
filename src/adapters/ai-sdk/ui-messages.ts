// The server-side bridge for a chat built on `useChat` (UI messages). The client sends the whole
// conversation each turn, so the approval state in it is client-controlled: here Airlock's decisions
// become the answers (`approval-responded` parts with `approved` and `reason`), and an answer the
// client sent itself (`addToolApprovalResponse`) counts only as a decision by a named chat reviewer,
// recorded in Airlock like any other channel's, or not at all.
import { actorOf } from "../../core/authority.js";
import type { Airlock } from "../../engine/engine.js";
import type { ApprovalRequest } from "../../index.js";
import { isAirlockError } from "../../index.js";
import { type Answer, answerFor } from "./answer.js";
import type { Runner } from "./execute.js";
import { waitUntil } from "./messages.js";
import {
  type GateContext,
  inputMismatch,
  isJsonObject,
  openGate,
  unguardedReason,
} from "./request.js";

/** A UI message as `useChat` sends it (any `UIMessage`). */
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  parts: unknown[];
}

export interface ApplyDecisionsOptions {
  /** The signed-in chat user. When set, an answer they gave in the chat (`addToolApprovalResponse`)
   * is recorded as their decision in Airlock (channel `chat`), subject to the request's approvers and
   * quorum; when not set, such answers are ignored and only decisions taken in Airlock count. */
  reviewer?: string;
  /** The reviewer's groups, matched against the request's approvers. */
  groups?: string[];
  /** Wait until every open gate is decided (or times out). @default false */
  wait?: boolean;
  /** With `wait`, the longest to wait. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface ApplyDecisionsResult<M extends ChatMessage> {
  /** The conversation with Airlock's answers in place: give it to `convertToModelMessages`. */
  messages: M[];
  /** Gates still waiting for a person: while any is, do not call the model (answer the client that
   * the conversation waits, or use `wait`). */
  pending: ApprovalRequest[];
  /** Answers from the chat that Airlock refused (e.g. the user may not decide that request). */
  refused: { request: ApprovalRequest; reason: string }[];
}

interface ToolPart {
  type: string;
  toolName?: string;
  toolCallId: string;
  state: string;
  input?: unknown;
  approval?: {
    id: string;
    approved?: boolean;
    reason?: string;
    isAutomatic?: boolean;
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

function asToolPart(part: unknown): ToolPart | undefined {
  if (typeof part !== "object" || part === null) return undefined;
  const p = part as Partial<ToolPart>;
  if (typeof p.type !== "string" || typeof p.toolCallId !== "string") return undefined;
  if (!p.type.startsWith("tool-") && p.type !== "dynamic-tool") return undefined;
  return p as ToolPart;
}

function toolNameOf(part: ToolPart): string {
  return part.type === "dynamic-tool" ? String(part.toolName) : part.type.slice("tool-".length);
}

/** Only the last message can hold open approvals: a later user message supersedes earlier ones. */
export async function applyDecisions<M extends ChatMessage>(
  ctx: GateContext,
  runner: Runner,
  messages: M[],
  options: ApplyDecisionsOptions = {},
): Promise<ApplyDecisionsResult<M>> {
  const pending: ApprovalRequest[] = [];
  const refused: { request: ApprovalRequest; reason: string }[] = [];
  const last = messages.at(-1);
  if (last?.role !== "assistant") return { messages, pending, refused };
  const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;

  const parts: unknown[] = [];
  for (const raw of last.parts) {
    const part = asToolPart(raw);
    const open =
      part?.approval &&
      part.approval.isAutomatic !== true &&
      (part.state === "approval-requested" || part.state === "approval-responded");
    if (!part || !open || !part.approval) {
      parts.push(raw);
      continue;
    }
    const toolName = toolNameOf(part);
    const gate = ctx.gateFor(toolName);
    if (!gate) {
      // A tool whose run does not go through Airlock: an approval here would bind nothing.
      parts.push(responded(part, { approved: false, reason: unguardedReason(toolName) }));
      continue;
    }
    if (!isJsonObject(part.input)) {
      parts.push(
        responded(part, {
          approved: false,
          reason: `Airlock gates tools whose input is a JSON object; \`${toolName}\` got ${typeof part.input}`,
        }),
      );
      continue;
    }
    const call = { toolName, toolCallId: part.toolCallId, input: part.input };
    // A call asked about by the SDK's own approval rules gets its gate here: from now on Airlock
    // holds the question, whatever the client answered.
    let request = await openGate(ctx, call, gate);
    // The client sends the parts: the same tool call id with other input gets no approval.
    const mismatch = inputMismatch(request, part.input);
    if (mismatch !== undefined) {
      parts.push(responded(part, { approved: false, reason: mismatch }));
      continue;
    }
    if (request.status === "pending" && part.state === "approval-responded" && options.reviewer) {
      const decided = await decideFromChat(ctx, request, part, options);
      if ("refused" in decided) refused.push({ request, reason: decided.refused });
      else request = decided.request;
    }
    if (request.status === "pending" && options.wait) {
      request = await waitUntil(ctx, request, deadline, options.signal);
    }
    if (request.status === "pending") {
      pending.push(request);
      parts.push(requested(part));
      continue;
    }
    const answer = await answerFor(runner, toolName, request);
    parts.push(responded(part, answer));
  }
  const out = [...messages];
  out[out.length - 1] = { ...last, parts };
  return { messages: out, pending, refused };
}

/** Records the chat user's answer as their decision (the approval id keys it, so a resent message
 * is not a second vote). */
async function decideFromChat(
  ctx: GateContext,
  request: ApprovalRequest,
  part: ToolPart,
  options: ApplyDecisionsOptions,
): Promise<{ request: ApprovalRequest } | { refused: string }> {
  const approval = part.approval;
  if (!approval || typeof approval.approved !== "boolean" || !options.reviewer) {
    return { refused: "the answer carries no approved flag" };
  }
  try {
    const fields = {
      outcome: approval.approved ? ("approved" as const) : ("rejected" as const),
      key: `chat:${approval.id}`.slice(0, 200),
      ...(approval.reason ? { comment: approval.reason } : {}),
    };
    const who = { reviewer: options.reviewer, groups: options.groups ?? [] };
    // In process, the app vouches for its signed-in user: the engine asks core/authority.ts like at
    // every door. Over HTTP the server does, for the client's token.
    const decided =
      "decideAs" in ctx.airlock && typeof ctx.airlock.decideAs === "function"
        ? await (ctx.airlock as Pick<Airlock, "decideAs">).decideAs(
            actorOf({
              name: who.reviewer,
              groups: who.groups,
              proof: "in_process",
              channel: "chat",
            }),
            request.id,
            fields,
          )
        : await ctx.airlock.decide(request.id, { ...fields, ...who, channel: "chat" });
    return { request: decided };
  } catch (err) {
    // Decided elsewhere first: the winning decision is the answer.
    if (isAirlockError(err, "conflict")) {
      const current = await ctx.airlock.get(request.id);
      return { request: current };
    }
    if (isAirlockError(err, "forbidden") || isAirlockError(err, "invalid_input")) {
      return { refused: err.message };
    }
    throw err;
  }
}

function responded(part: ToolPart, answer: Answer): ToolPart {
  return {
    ...part,
    state: "approval-responded",
    approval: {
      ...part.approval,
      id: part.approval?.id ?? "",
      approved: answer.approved,
      reason: answer.reason,
    },
  };
}

/** Back to waiting: an answer the client gave that Airlock does not (yet) hold is withdrawn. */
function requested(part: ToolPart): ToolPart {
  const { approved: _a, reason: _r, ...approval } = part.approval ?? { id: "" };
  return { ...part, state: "approval-requested", approval: { ...approval, id: approval.id } };
}
