// `airlockGate(airlock, input)`: an Airlock gate inside a LangGraph node. The request is created
// idempotently with a key derived from the thread id, the task's checkpoint namespace and the call's
// position in the node, so the node's re-run on resume (LangGraph re-executes an interrupted node from
// its first line) finds the same request instead of opening a second gate or notifying twice. While
// the request is pending, the thread parks with LangGraph's own `interrupt()`, carrying the request id.
// After a resume, the decision is read again from Airlock and checked with `verifyApproval`: the
// resume payload is only a wake-up, so a forged or replayed `Command` can never approve anything.
import { getConfig, interrupt } from "@langchain/langgraph";
import type { RunApprovedOptions, RunApprovedResult } from "../../engine/run-approved.js";
import {
  type AirlockApi,
  type ApprovalRequest,
  ConflictError,
  type Decision,
  hashArgs,
  isAirlockError,
  type RequestInput,
  runApproved,
  type Status,
  verifyApproval,
} from "../../index.js";
import { argsSchemaFor, parseToolArgs, type ToolSchema } from "../../tools/args-schema.js";

/** What `airlockGate` needs of Airlock: the in-process engine or the HTTP client (`createClient`). */
export type GateApi = Pick<
  AirlockApi,
  | "request"
  | "get"
  | "getByKey"
  | "claimExecution"
  | "renewExecution"
  | "finishExecution"
  | "waitFor"
>;

/** A request as `airlock.request` takes it; `key` is derived from the graph unless given. With
 * `schema` (the tool's own: a zod schema, a LangChain tool's `.schema`, or a JSON Schema), the
 * request carries its JSON Schema as `argsSchema` (an edit that does not fit is refused, 422,
 * wherever it is made) and the approved args come back parsed by it, typed by it. */
export type GateInput<Args = Record<string, unknown>> = RequestInput & {
  schema?: ToolSchema<unknown, Args>;
};

/** Where a gate sits in a graph, stored on the request as `metadata.langgraph`. */
export interface GateLocation {
  threadId: string;
  /** The task's checkpoint namespace (`node:taskId`, nested for subgraphs). */
  checkpointNs: string;
  /** The n-th `airlockGate` call of this task, from 0. */
  position: number;
}

/** The value `interrupt()` parks the thread with; `task.interrupts[].value` shows it. */
export interface GateInterruptValue {
  airlock: {
    requestId: string;
    key: string;
    action: string;
    title: string;
    status: "pending";
    deadline?: number;
  };
}

/** The resume value `resumeOnDecision` sends. It only wakes the gate up: the gate reads the decision
 * from Airlock itself, so any value (or a forged one) is treated the same. */
export interface GateResumeValue {
  airlock: { requestId: string };
}

export interface GateResult<Args = Record<string, unknown>> {
  /** Approved and usable: `verifyApproval` passed (the hash binds `args`, the approval is not
   * expired) and, with a `schema`, the approved args fit it. */
  approved: boolean;
  /** The request's terminal status, as read from Airlock after the last wake-up. */
  status: Exclude<Status, "pending">;
  request: ApprovalRequest;
  decision?: Decision;
  /** When approved: the args to run with (the reviewer's edited args when they edited), parsed by
   * the gate's `schema` when it has one. */
  args?: Args;
  /** When not approved: why, in a sentence with the reviewer's comment (for the agent to read). */
  reason?: string;
  /** When a reviewer answered instead of approving (status `responded`, a request that allows
   * `respond`): their answer, for the node to use in place of the tool's result. Nothing ran. */
  response?: unknown;
  /** Runs `fn` once with the approved args (`runApproved`: verify, claim the execution, run), parsed
   * by the gate's `schema` when it has one. A second resume, a replay or another process gets
   * `{ ok: false, reason: "already_executed" }`; approved args that do not fit the schema get
   * `{ ok: false, reason: "not_approved" }` and nothing is claimed. */
  run<T>(
    fn: (args: Args, request: ApprovalRequest) => T | Promise<T>,
    options?: Pick<RunApprovedOptions, "by">,
  ): Promise<RunApprovedResult<Awaited<T>>>;
}

const SCRATCHPAD = "__pregel_scratchpad";
/** Set by LangGraph on a run that resumes a thread (a hint only: a miss costs one more request). */
const RESUMING = "__pregel_resuming";

/** Gate positions per task execution. Keyed by LangGraph's per-task scratchpad object (shared by every
 * runnable the task calls), reset when LangGraph retries the node (its `nodeAttempt` changes). */
const positions = new WeakMap<object, { attempt: number; next: number }>();

/** Where the current call sits: thread, task namespace and position. Throws outside a graph node. */
export function gateLocation(): GateLocation {
  let config: ReturnType<typeof getConfig>;
  try {
    config = getConfig();
  } catch (err) {
    throw new Error(
      "airlockGate must be called inside a LangGraph node (no graph config is active here)",
      { cause: err },
    );
  }
  const conf = (config?.configurable ?? {}) as Record<string, unknown>;
  const threadId = conf.thread_id;
  if (typeof threadId !== "string" || threadId === "") {
    throw new Error(
      "airlockGate needs a checkpointer and a thread id: compile the graph with a checkpointer and invoke it with { configurable: { thread_id } }",
    );
  }
  const checkpointNs = typeof conf.checkpoint_ns === "string" ? conf.checkpoint_ns : "";
  const scratchpad = conf[SCRATCHPAD];
  const attempt =
    (config as { executionInfo?: { nodeAttempt?: number } }).executionInfo?.nodeAttempt ?? 1;
  let position = 0;
  if (scratchpad !== null && typeof scratchpad === "object") {
    let seen = positions.get(scratchpad);
    if (!seen || seen.attempt !== attempt) {
      seen = { attempt, next: 0 };
      positions.set(scratchpad, seen);
    }
    position = seen.next++;
  }
  return { threadId, checkpointNs, position };
}

/** The idempotency key of a gate at `location`: short and stable (a hash), whatever the lengths. */
export function gateKey(location: GateLocation): string {
  return `langgraph:${hashArgs({ ...location })}`;
}

/** Opens (or finds) the request for this place in the graph and returns its decision; parks the thread
 * with `interrupt()` while it is pending. See the file's header. */
export async function airlockGate<Args = Record<string, unknown>>(
  airlock: GateApi,
  input: GateInput<Args>,
): Promise<GateResult<Args>> {
  // The position is taken before any await, so gates called in the same order get the same keys.
  const location = gateLocation();
  const { schema, ...rest } = input;
  const key = rest.key ?? gateKey(location);
  const argsSchema = rest.argsSchema ?? argsSchemaFor(schema, rest.action ?? "airlockGate");
  let request = await openOrFind(airlock, {
    ...rest,
    key,
    metadata: { ...(rest.metadata ?? {}), langgraph: { ...location } },
    ...(argsSchema === undefined ? {} : { argsSchema }),
  });
  while (request.status === "pending") {
    const value: GateInterruptValue = {
      airlock: {
        requestId: request.id,
        key,
        action: request.action,
        title: request.title,
        status: "pending",
        ...(request.deadline !== undefined ? { deadline: request.deadline } : {}),
      },
    };
    // Throws GraphInterrupt the first time; on resume returns the resume value, which is ignored:
    // the decision comes from Airlock only. Still pending (an early or forged resume)? Park again.
    interrupt(value);
    request = await airlock.get(request.id);
  }
  return gateResult(airlock, request, schema, argsSchema);
}

/** The request at this key: on a resume (LangGraph re-runs the node) it exists, so it is read; on a
 * first run it is created, idempotently. Either way a same-key request made with other content (code
 * before the gate that is not deterministic) is the one that counts: it is what the reviewer saw. */
async function openOrFind(
  airlock: GateApi,
  input: GateInput & { key: string },
): Promise<ApprovalRequest> {
  const requester = input.requester;
  if (isResuming()) {
    const found = await airlock.getByKey(input.key, requester === undefined ? {} : { requester });
    if (found) return found;
  }
  try {
    return await airlock.request(input);
  } catch (err) {
    if (isAirlockError(err, "conflict") && err instanceof ConflictError && err.request) {
      return err.request;
    }
    throw err;
  }
}

function isResuming(): boolean {
  try {
    return getConfig()?.configurable?.[RESUMING] === true;
  } catch {
    return false;
  }
}

async function gateResult<Args>(
  airlock: GateApi,
  request: ApprovalRequest,
  schema: ToolSchema<unknown, Args> | undefined,
  argsSchema: Record<string, unknown> | undefined,
): Promise<GateResult<Args>> {
  const status = request.status as Exclude<Status, "pending">;
  const check = verifyApproval(request);
  // Parsed before anything is claimed: approved args the tool's schema refuses (an edit made where
  // no argsSchema was checked, or a check JSON Schema cannot say) never run nor spend the approval.
  const typed =
    check.ok && schema ? await parseToolArgs(schema, check.args, argsSchema) : undefined;
  const misfit =
    typed && !typed.ok
      ? `the approved arguments do not fit the tool's schema: ${typed.detail}`
      : undefined;
  const run: GateResult<Args>["run"] = async (fn, options = {}) => {
    if (misfit !== undefined) return { ok: false, reason: "not_approved", detail: misfit, request };
    return runApproved(
      airlock,
      request,
      async (args, claimed) => {
        if (!schema) return fn(args as Args, claimed);
        const parsed = await parseToolArgs(schema, args, argsSchema);
        if (!parsed.ok)
          throw new Error(`the approved arguments do not fit the tool's schema: ${parsed.detail}`);
        return fn(parsed.value, claimed);
      },
      options,
    );
  };
  const base = {
    status,
    request,
    run,
    ...(request.decision ? { decision: request.decision } : {}),
  };
  if (!check.ok) {
    const answered =
      request.status === "responded" ? { response: request.decision?.response ?? null } : {};
    return {
      ...base,
      ...answered,
      approved: false,
      reason: notApprovedReason(request, check.detail),
    };
  }
  if (misfit !== undefined) {
    return { ...base, approved: false, reason: notApprovedReason(request, misfit) };
  }
  const args = typed?.ok ? typed.value : (check.args as Args);
  return { ...base, approved: true, args };
}

/** A sentence for the agent: what happened, who said so, and their words. */
export function notApprovedReason(request: ApprovalRequest, fallback?: string): string {
  const d = request.decision;
  if (request.status === "approved") return fallback ?? `request ${request.id} cannot be used`;
  const who = d?.reviewer && d.reviewer !== "system" ? ` by ${d.reviewer}` : "";
  const words = d?.comment ? `: ${d.comment}` : "";
  const what =
    request.status === "timed_out"
      ? "timed out"
      : request.status === "revise"
        ? "sent back for revision"
        : request.status === "responded"
          ? "answered instead of approved"
          : request.status;
  const answer = request.status === "responded" ? `; the answer: ${responseText(d?.response)}` : "";
  return `${request.title}: ${what}${who}${words}${answer}`;
}

/** A reviewer's response as text: a string as it is, anything else as JSON. */
export function responseText(response: unknown): string {
  return typeof response === "string" ? response : (JSON.stringify(response ?? null) ?? "null");
}

/** Whether an interrupt's value is an Airlock gate's. */
export function isGateInterrupt(value: unknown): value is GateInterruptValue {
  if (value === null || typeof value !== "object") return false;
  const a = (value as { airlock?: unknown }).airlock;
  return (
    a !== null &&
    typeof a === "object" &&
    typeof (a as { requestId?: unknown }).requestId === "string"
  );
}
