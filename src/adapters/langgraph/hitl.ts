// The bridge to `humanInTheLoopMiddleware` from `langchain` v1, both ways. Its interrupt value is a
// HITLRequest ({ actionRequests, reviewConfigs }, matched by index); `hitlToAirlock` opens one Airlock
// request per action request (keyed by thread, interrupt id and index, so calling it again opens
// nothing new), with the tool's args, its description and the decisions its review config allows.
// `airlockToHitlResponse` turns the Airlock decisions into the middleware's resume payload
// ({ decisions }: approve / edit with the edited args / reject with the reviewer's words).
//
// The middleware trusts its resume payload: whoever can send `Command({ resume })` to the thread
// decides. For a gate that re-reads the decision from Airlock, use `airlockGate` in the tool's node.

import type { OnTimeout } from "../../core/schemas.js";
import {
  type AirlockApi,
  type ApprovalRequest,
  ConflictError,
  hashArgs,
  isAirlockError,
  type RequestInput,
  verifyApproval,
} from "../../index.js";
import { argsSchemaFor } from "../../tools/args-schema.js";
import { notApprovedReason, responseText } from "./gate.js";

/** The shapes of `langchain`'s HITL middleware (1.x), restated so this module needs no import of it. */
export type HitlDecisionType = "approve" | "edit" | "reject";
export interface HitlActionRequest {
  name: string;
  args: Record<string, unknown>;
  description?: string;
}
export interface HitlReviewConfig {
  actionName: string;
  allowedDecisions: HitlDecisionType[];
  argsSchema?: Record<string, unknown>;
}
export interface HitlRequest {
  actionRequests: HitlActionRequest[];
  reviewConfigs: HitlReviewConfig[];
}
export type HitlDecision =
  | { type: "approve" }
  | { type: "edit"; editedAction: { name: string; args: Record<string, unknown> } }
  | { type: "reject"; message?: string };
export interface HitlResponse {
  decisions: HitlDecision[];
}

/** Where a HITL action request sits, stored on its Airlock request as `metadata.langgraph`. */
export interface HitlLocation {
  kind: "hitl";
  threadId: string;
  interruptId: string;
  index: number;
  count: number;
  tool: string;
}

export function isHitlRequest(value: unknown): value is HitlRequest {
  if (value === null || typeof value !== "object") return false;
  const v = value as { actionRequests?: unknown; reviewConfigs?: unknown };
  return Array.isArray(v.actionRequests) && Array.isArray(v.reviewConfigs);
}

/** The idempotency key of the index-th action request of a HITL interrupt. */
export function hitlKey(threadId: string, interruptId: string, index: number): string {
  return `langgraph-hitl:${hashArgs({ threadId, interruptId, index })}`;
}

/** How a thread's HITL action requests are put to people: the same for every interrupt of it, so
 * `resumeOnDecision` can open the requests of an interrupt a resumed run parks at (`hitl`). */
export interface HitlBridgeOptions {
  /** @default "anonymous" in process; the token's name over HTTP */
  requester?: string;
  approvers?: string[];
  timeoutMs?: number;
  onTimeout?: OnTimeout;
  /** The Airlock action per tool. @default `tool.<name>` */
  action?: (tool: string) => string;
  /** The agent's tools (as given to `createAgent`): each request carries its tool's JSON Schema
   * (from the tool's zod 4 or JSON Schema `schema`) as `argsSchema`, so an edit that does not fit
   * is refused (422) wherever it is made. A review config's own `argsSchema` comes first. */
  tools?: ReadonlyArray<{ name: string; schema?: unknown }>;
  /** Lets a reviewer answer a call instead of approving it (`respond`): the middleware has no such
   * decision, so the answer goes back as a reject whose message is the response, which becomes
   * the call's ToolMessage (the tool does not run). @default false */
  respond?: boolean;
  /** The JSON Schema a response must fit (with `respond`). */
  responseSchema?: Record<string, unknown>;
}

export interface HitlToAirlockOptions extends HitlBridgeOptions {
  threadId: string;
  /** The interrupt's id (`state.tasks[].interrupts[].id`, or `result.__interrupt__[].id`). */
  interruptId: string;
  request: HitlRequest;
}

/** Opens (or finds, on a second call) one Airlock request per action request of a HITL interrupt. */
export async function hitlToAirlock(
  airlock: Pick<AirlockApi, "request">,
  options: HitlToAirlockOptions,
): Promise<ApprovalRequest[]> {
  const { request: hitl, threadId, interruptId } = options;
  const out: ApprovalRequest[] = [];
  const count = hitl.actionRequests.length;
  for (const [index, action] of hitl.actionRequests.entries()) {
    const review = hitl.reviewConfigs.find((c) => c.actionName === action.name);
    const allowed = (review?.allowedDecisions ?? ["approve", "edit", "reject"]).map((d) =>
      d === "approve"
        ? ("approve" as const)
        : d === "edit"
          ? ("edit" as const)
          : ("reject" as const),
    );
    // Airlock always lets a reviewer reject; approve is what the middleware must allow too.
    if (!allowed.includes("reject")) allowed.push("reject");
    const answerable: RequestInput["allowed"] = options.respond ? ["respond"] : [];
    const location: HitlLocation = {
      kind: "hitl",
      threadId,
      interruptId,
      index,
      count,
      tool: action.name,
    };
    const argsSchema =
      review?.argsSchema ??
      argsSchemaFor(options.tools?.find((t) => t.name === action.name)?.schema, action.name);
    const input: RequestInput = {
      key: hitlKey(threadId, interruptId, index),
      action: options.action ? options.action(action.name) : `tool.${action.name}`,
      title: `Run ${action.name}`,
      args: action.args,
      preview: `\`\`\`json\n${JSON.stringify(action.args, null, 2)}\n\`\`\``,
      allowed: [...new Set([...allowed, ...(answerable ?? [])])],
      metadata: { langgraph: { ...location } },
      ...(argsSchema === undefined ? {} : { argsSchema }),
    };
    if (action.description !== undefined) input.summary = action.description;
    if (options.requester !== undefined) input.requester = options.requester;
    if (options.approvers !== undefined) input.approvers = options.approvers;
    if (options.timeoutMs !== undefined) input.timeoutMs = options.timeoutMs;
    if (options.onTimeout !== undefined) input.onTimeout = options.onTimeout;
    if (options.respond && options.responseSchema !== undefined) {
      input.responseSchema = options.responseSchema;
    }
    out.push(await openOnce(airlock, input));
  }
  return out;
}

/** Opens the request, or returns the one already at its key when it was opened with other content
 * (bridged before with other options, e.g. without `tools`): that one is what the reviewer sees. */
async function openOnce(
  airlock: Pick<AirlockApi, "request">,
  input: RequestInput,
): Promise<ApprovalRequest> {
  try {
    return await airlock.request(input);
  } catch (err) {
    if (isAirlockError(err, "conflict") && err instanceof ConflictError && err.request) {
      return err.request;
    }
    throw err;
  }
}

/** The middleware's resume payload from the terminal Airlock requests, in the interrupt's order.
 * Approved → approve (edit, with the edited args, when the reviewer edited); anything else → reject,
 * with the reviewer's words, so the model reads why. An approval is checked with `verifyApproval`
 * first: one that has expired (`validUntil` passed), or whose args are not the interrupt's action
 * (when `hitl` is given), becomes a reject with the reason. Throws while any of them is pending.
 * `now`: the time to check expiry against (ms since epoch). */
export function airlockToHitlResponse(
  requests: ApprovalRequest[],
  hitl?: HitlRequest,
  now: number = Date.now(),
): HitlResponse {
  const decisions = requests.map((r, i): HitlDecision => {
    if (r.status === "pending") {
      throw new Error(`request ${r.id} is still pending: no HITL response can be built yet`);
    }
    const d = r.decision;
    if (r.status === "approved" && d?.outcome === "approved") {
      // The middleware runs the interrupt's args unless edited: those must be what was approved.
      const proposed = d.editedArgs === undefined ? hitl?.actionRequests[i]?.args : undefined;
      const check = verifyApproval(r, proposed, now);
      if (!check.ok) return { type: "reject", message: `${r.title}: not run, ${check.detail}` };
      if (d.editedArgs !== undefined) {
        const name = hitl?.actionRequests[i]?.name ?? toolOf(r);
        return { type: "edit", editedAction: { name, args: d.editedArgs } };
      }
      return { type: "approve" };
    }
    if (r.status === "responded") {
      // The person acts as the tool: their answer is the call's ToolMessage; nothing ran.
      return { type: "reject", message: responseText(d?.response) };
    }
    return { type: "reject", message: notApprovedReason(r) };
  });
  return { decisions };
}

function toolOf(r: ApprovalRequest): string {
  const lg = r.metadata.langgraph as { tool?: unknown } | undefined;
  if (typeof lg?.tool === "string") return lg.tool;
  return r.action.startsWith("tool.") ? r.action.slice(5) : r.action;
}
