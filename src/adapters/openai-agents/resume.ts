// Resuming a parked run, in this process or any other: read the turn's gates from Airlock, rebuild the
// RunState stored with the first one, turn each decision into the SDK's own `approve` / `reject`, and
// run on. Exactly once: every approved call is claimed (`runApproved`: verify → claim → run) before
// the run goes on, in the order of the turn, so of two resumers only the one that claims the turn's
// first approved call continues; the other gets `already_resumed` and runs nothing.
//
// Edited args, which the SDK refuses (an approval applies to the call as the model made it): the
// adapter runs the tool itself with the reviewer's args (bound by their hash and claimed, like any
// approval), then rejects the original call in the SDK with a message that carries the tool's result
// and says the arguments were edited, so the model sees what ran and what came back.
import {
  type Agent,
  type FunctionTool,
  invokeFunctionTool,
  type NonStreamRunOptions,
  type Runner,
  type RunResult,
  RunState,
  type RunToolApprovalItem,
} from "@openai/agents";
import {
  type AirlockApi,
  type ApprovalRequest,
  ConflictError,
  canonicalJson,
  hashArgs,
  InvalidInputError,
  runApproved,
} from "../../index.js";
import { callOf, type GateMetadata, gateMetadata } from "./gate.js";
import { openGates, type ParkOptions, parkInterruptions } from "./park.js";

// biome-ignore lint/suspicious/noExplicitAny: the SDK's own bound for agents of any context and output
type AnyAgent = Agent<any, any>;

export interface ResumeOptions<TContext, TAgent extends AnyAgent> extends ParkOptions {
  /** Wait while a gate of the turn is pending instead of returning `pending`. @default false */
  wait?: boolean;
  signal?: AbortSignal;
  /** Passed to `runner.run` when the run goes on (context, maxTurns, signal, ...). */
  runOptions?: NonStreamRunOptions<TContext, TAgent>;
  /** Who executes, recorded with each claim. @default each request's requester */
  by?: string;
}

export type ResumeOutcome<TContext, TAgent extends AnyAgent> =
  /** Every gate was decided; the run went on and `result` is where it stopped next (finished, or
   * interrupted again: park it with `parkInterruptions`). */
  | { status: "resumed"; result: RunResult<TContext, TAgent>; requests: ApprovalRequest[] }
  /** A gate is still pending (only without `wait`); nothing ran. */
  | { status: "pending"; requests: ApprovalRequest[] }
  /** Another resumer claimed this turn first; nothing ran here. */
  | { status: "already_resumed"; requests: ApprovalRequest[]; detail: string };

/** Resumes the parked turn that `requestIds` belong to (any one of its gates suffices); see the
 * file's header. Pass the same gate options as to `parkInterruptions`: a gate missing because the
 * parking process died half-way is opened here with them. */
export async function resumeRun<TContext, TAgent extends AnyAgent>(
  airlock: AirlockApi,
  runner: Runner,
  agent: TAgent,
  requestIds: string | string[],
  options: ResumeOptions<TContext, TAgent> = {},
): Promise<ResumeOutcome<TContext, TAgent>> {
  const ids = typeof requestIds === "string" ? [requestIds] : requestIds;
  const firstId = ids[0];
  if (firstId === undefined) {
    throw new InvalidInputError("Expected at least one request id, got none", "requestIds");
  }
  const known = await airlock.get(firstId);
  const meta = adapterMetadata(known);
  const prefix = keyPrefixOf(known, meta);
  const found: Array<ApprovalRequest | undefined> = [];
  for (const callId of meta.turn) {
    found.push(
      callId === meta.callId
        ? known
        : await airlock.getByKey(`${prefix}${callId}`, { requester: known.requester }),
    );
  }
  const holder = found[0];
  const serialized = holder && adapterMetadata(holder).state;
  if (serialized === undefined) {
    throw new InvalidInputError(
      `the first gate of the turn of request ${known.id} holds no RunState; it was not opened by parkInterruptions`,
      "requestIds",
    );
  }
  const state = await RunState.fromString<TContext, TAgent>(agent, serialized);
  const items = new Map<string, RunToolApprovalItem>();
  for (const item of state.getInterruptions()) items.set(callOf(item).callId, item);

  let requests = await completeTurn(airlock, found, meta.turn, items, serialized, {
    ...options,
    requester: known.requester,
    keyPrefix: prefix,
  });
  for (const id of ids) {
    if (!requests.some((r) => r.id === id)) {
      throw new InvalidInputError(
        `request ${id} is not a gate of the same turn as ${firstId}`,
        "requestIds",
      );
    }
  }
  if (requests.some((r) => r.status === "pending")) {
    if (!options.wait) return { status: "pending", requests };
    const wait = options.signal ? { signal: options.signal } : {};
    requests = await Promise.all(
      requests.map((r) => (r.status === "pending" ? airlock.waitFor(r.id, wait) : r)),
    );
  }

  let claimed = false;
  for (const [i, request] of requests.entries()) {
    const callId = meta.turn[i] as string;
    const item = items.get(callId);
    if (!item) {
      throw new InvalidInputError(
        `the stored RunState has no interruption for call ${callId} (request ${request.id})`,
        "requestIds",
      );
    }
    const call = callOf(item);
    if (hashArgs(call.args) !== request.argsHash) {
      state.reject(item, {
        message: `The ${call.tool} call was not executed: the stored run no longer matches the arguments the reviewer saw (request ${request.id}).`,
      });
      continue;
    }
    if (request.status !== "approved") {
      state.reject(item, { message: rejectionMessage(request, call.tool) });
      continue;
    }
    const editedArgs = request.decision?.editedArgs;
    const edited = editedArgs !== undefined && hashArgs(editedArgs) !== request.argsHash;
    const tool = edited ? await functionTool(agent, state, call.tool) : undefined;
    if (edited && (!tool || !call.editable)) {
      state.reject(item, {
        message: `The reviewer edited the arguments of this ${call.tool} call, and edited calls can only run for function tools of this agent; it was not executed.`,
      });
      continue;
    }
    const outcome = await runApproved(
      airlock,
      request,
      async (args) => (tool ? runEdited(tool, state, item, args) : undefined),
      options.by === undefined ? {} : { by: options.by },
    );
    if (!outcome.ok) {
      if (outcome.reason === "already_executed" && !claimed) {
        return { status: "already_resumed", requests, detail: outcome.detail };
      }
      state.reject(item, {
        message:
          outcome.reason === "already_executed"
            ? `This ${call.tool} call was already executed elsewhere; it was not run again.`
            : `The approval cannot be used (${outcome.detail}); the ${call.tool} call was not executed. Do not retry the same call.`,
      });
      continue;
    }
    claimed = true;
    if (tool && editedArgs) {
      const reviewer = request.decision?.reviewer ?? "the reviewer";
      state.reject(item, {
        message: `${reviewer} edited the arguments of this ${call.tool} call before approving it, so it ran once with ${canonicalJson(editedArgs)} instead. Its result: ${outcome.value ?? ""}`,
      });
    } else {
      state.approve(item);
    }
  }
  const result = await runner.run(agent, state, options.runOptions);
  return { status: "resumed", result, requests };
}

export type ApproveOptions<TContext, TAgent extends AnyAgent> = Omit<
  ResumeOptions<TContext, TAgent>,
  "wait"
>;

/** Opens one Airlock gate per interruption of `result`, waits until every gate of the turn is
 * decided (in any channel, any process, or by its deadline), resumes the run, and does the same for
 * each later turn that interrupts again. Returns the run's final result. Throws a `conflict` error
 * when another resumer took over a turn. */
export async function approveInterruptions<TContext, TAgent extends AnyAgent>(
  airlock: AirlockApi,
  runner: Runner,
  agent: TAgent,
  result: RunResult<TContext, TAgent>,
  options: ApproveOptions<TContext, TAgent> = {},
): Promise<RunResult<TContext, TAgent>> {
  let current = result;
  while (current.interruptions.length > 0) {
    const { requests } = await parkInterruptions(airlock, current, options);
    const out = await resumeRun(
      airlock,
      runner,
      agent,
      requests.map((r) => r.id),
      { ...options, wait: true },
    );
    if (out.status !== "resumed") {
      const detail = out.status === "already_resumed" ? `: ${out.detail}` : "";
      throw new ConflictError(
        `the turn gated by ${requests.map((r) => r.id).join(", ")} was resumed by another resumer${detail}`,
        requests[0],
      );
    }
    current = out.result;
  }
  return current;
}

/** The requests of the turn, in its order, opening the gates a parking process did not get to. */
async function completeTurn(
  airlock: AirlockApi,
  found: Array<ApprovalRequest | undefined>,
  turn: string[],
  items: Map<string, RunToolApprovalItem>,
  serialized: string,
  options: ParkOptions,
): Promise<ApprovalRequest[]> {
  if (found.every((r) => r !== undefined)) return found as ApprovalRequest[];
  const calls = turn.map((callId) => {
    const item = items.get(callId);
    if (!item) {
      throw new InvalidInputError(
        `the stored RunState has no interruption for call ${callId}`,
        "requestIds",
      );
    }
    return callOf(item);
  });
  return (await openGates(airlock, calls, serialized, options)).requests;
}

function adapterMetadata(request: ApprovalRequest): GateMetadata {
  const meta = gateMetadata(request.metadata);
  if (!meta) {
    throw new InvalidInputError(
      `request ${request.id} was not opened by airlock/openai-agents (no \`metadata.openaiAgents\`)`,
      "requestIds",
    );
  }
  return meta;
}

function keyPrefixOf(request: ApprovalRequest, meta: GateMetadata): string {
  const key = request.key;
  if (key === undefined || !key.endsWith(meta.callId)) {
    throw new InvalidInputError(
      `request ${request.id} has no idempotency key ending in its call id ${meta.callId}`,
      "requestIds",
    );
  }
  return key.slice(0, key.length - meta.callId.length);
}

// biome-ignore lint/suspicious/noExplicitAny: a function tool of any context, parameters and result
type AnyFunctionTool = FunctionTool<any, any, any>;

async function functionTool<TContext, TAgent extends AnyAgent>(
  agent: TAgent,
  state: RunState<TContext, TAgent>,
  name: string,
): Promise<AnyFunctionTool | undefined> {
  const owner = (state._currentAgent as AnyAgent | undefined) ?? agent;
  const tools = await owner.getAllTools(state._context);
  return tools.find((t): t is AnyFunctionTool => t.type === "function" && t.name === name);
}

async function runEdited<TContext, TAgent extends AnyAgent>(
  tool: AnyFunctionTool,
  state: RunState<TContext, TAgent>,
  item: RunToolApprovalItem,
  args: Record<string, unknown>,
): Promise<string> {
  const input = JSON.stringify(args);
  const toolCall = { ...(item.rawItem as object), arguments: input } as never;
  const out = await invokeFunctionTool({
    tool,
    runContext: state._context,
    input,
    details: { toolCall },
  });
  return typeof out === "string" ? out : JSON.stringify(out);
}

function rejectionMessage(request: ApprovalRequest, tool: string): string {
  const d = request.decision;
  const by = d?.reviewer && d.reviewer !== "system" ? ` by ${d.reviewer}` : "";
  const said = d?.comment ? `: "${d.comment}"` : "";
  switch (request.status) {
    case "revise":
      return `A human asked for changes to this ${tool} call${by}${said}. It was not executed; change the call as asked instead of repeating it.`;
    case "timed_out":
      return `Nobody approved this ${tool} call before the deadline, so it was not executed. Do not retry the same call.`;
    case "cancelled":
      return `The approval of this ${tool} call was cancelled${by}${said}. It was not executed. Do not retry the same call.`;
    default:
      return `A human rejected this ${tool} call${by}${said}. It was not executed. Do not retry the same call.`;
  }
}
