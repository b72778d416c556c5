// What became of the calls a HITL resume approved. With langchain's humanInTheLoopMiddleware the
// framework runs an approved call itself, after the resume; Airlock never holds the tool. So the
// resumer claims each approved call's execution before it resumes the thread, and afterwards looks
// at the thread's messages: a new tool result for that very tool call (found by its id, from the
// model's message that asked for it, by tool name and the args the reviewer saw) means it ran
// (`executed`, with a digest of the result); none means the framework dropped it
// (`execution_failed`, saying so). A rejected call gets a tool result too (the rejection), under its
// own id, so it is never taken for the approved one.
// langchain 1.5 drops the approved call when one interrupt mixes approve and reject: Airlock cannot
// fix that, but its log must not say that call ran.

import { isAirlockError } from "../../core/errors.js";
import { hashArgs } from "../../core/hash.js";
import type { ApprovalRequest } from "../../core/schemas.js";
import { isApproved } from "../../core/state.js";
import type { AirlockApi } from "../../engine/api.js";

type ExecutionApi = Pick<AirlockApi, "claimExecution" | "finishExecution">;

/** A message as the thread's state holds it, as far as this module reads it. */
interface MessageLike {
  tool_call_id?: unknown;
  tool_calls?: unknown;
  name?: unknown;
  content?: unknown;
  _getType?: () => string;
  getType?: () => string;
  type?: unknown;
}

/** The tool results (ToolMessages) of a thread's state values, as `[tool_call_id, message]`. */
export function toolResults(values: unknown): Map<string, MessageLike> {
  const out = new Map<string, MessageLike>();
  const messages = (values as { messages?: unknown } | undefined)?.messages;
  if (!Array.isArray(messages)) return out;
  for (const m of messages as MessageLike[]) {
    const type = m?._getType?.() ?? m?.getType?.() ?? m?.type;
    if (type === "tool" && typeof m.tool_call_id === "string") out.set(m.tool_call_id, m);
  }
  return out;
}

/** The tool calls the thread's last model message asked for, in order. */
export function pendingToolCalls(
  values: unknown,
): { id: string; name: string; argsHash: string }[] {
  const messages = (values as { messages?: unknown } | undefined)?.messages;
  if (!Array.isArray(messages)) return [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const calls = (messages[i] as MessageLike | undefined)?.tool_calls;
    if (!Array.isArray(calls) || calls.length === 0) continue;
    return (calls as { id?: unknown; name?: unknown; args?: unknown }[])
      .filter((c) => typeof c.id === "string" && typeof c.name === "string")
      .map((c) => ({ id: c.id as string, name: c.name as string, argsHash: hashArgs(c.args) }));
  }
  return [];
}

interface Claimed {
  request: ApprovalRequest;
  tool: string;
  attempt: number;
}

/** Claims the execution of every approved HITL request among `requests`; an approval claimed before
 * (an earlier resume ran it) is left out. */
export async function claimApprovedHitl(
  airlock: ExecutionApi,
  requests: readonly ApprovalRequest[],
  by: string,
): Promise<Claimed[]> {
  const claimed: Claimed[] = [];
  for (const r of requests) {
    const where = (r.metadata as { langgraph?: { kind?: string; tool?: string } }).langgraph;
    if (where?.kind !== "hitl" || !isApproved(r) || typeof where.tool !== "string") continue;
    try {
      const c = await airlock.claimExecution(r.id, { by });
      claimed.push({ request: c, tool: where.tool, attempt: c.execution?.attempt ?? 1 });
    } catch (err) {
      if (!isAirlockError(err, "conflict")) throw err;
    }
  }
  return claimed;
}

/** Records each claimed call's outcome: `executed` when the resume added a tool result for its tool
 * call (`calls`: the model's calls before the resume; `before`/`after`: the tool results), else
 * `execution_failed`; `failure` when the resume itself threw. */
export async function recordHitlOutcomes(
  airlock: ExecutionApi,
  claimed: readonly Claimed[],
  calls: readonly { id: string; name: string; argsHash: string }[],
  before: ReadonlyMap<string, MessageLike>,
  after: ReadonlyMap<string, MessageLike>,
  failure?: unknown,
): Promise<void> {
  const unused = [...calls];
  for (const c of claimed) {
    if (failure !== undefined) {
      const error =
        failure instanceof Error ? `${failure.name}: ${failure.message}` : String(failure);
      await airlock.finishExecution(c.request.id, { attempt: c.attempt, ok: false, error });
      continue;
    }
    // The call the reviewer saw: its tool and its args as the agent proposed them.
    const i = unused.findIndex((k) => k.name === c.tool && k.argsHash === c.request.argsHash);
    const call = i < 0 ? undefined : unused.splice(i, 1)[0];
    const result = call && !before.has(call.id) ? after.get(call.id) : undefined;
    if (!result) {
      await airlock.finishExecution(c.request.id, {
        attempt: c.attempt,
        ok: false,
        error: `not run: the thread was resumed with this call approved, but no result of this ${c.tool} call appeared (langchain's HITL middleware dropped the approved call; it does so when one interrupt mixes approve and reject)`,
      });
      continue;
    }
    await airlock.finishExecution(c.request.id, {
      attempt: c.attempt,
      ok: true,
      resultDigest: hashArgs(result.content ?? null),
    });
  }
}
