// Resuming a parked run, in this process or any other: read the turn's gates from Airlock, rebuild the
// RunState stored with the first one, turn each decision into the SDK's own `approve` / `reject`, and
// run on. Exactly once, twice over: a resume first takes the turn's ticket (a pending request that only
// a cancel can settle, taken by cancelling it: `pending → cancelled` is Airlock's compare-and-set, one
// an agent token may perform), so of two resumers only one
// goes on, even when nothing in the turn was approved; and every approved call is claimed on its own
// (`runApproved`: verify → claim → run), so a forced resume never runs a call twice either. The price
// of at-most-once: a resumer that dies after its claims and before the SDK ran the tools leaves the
// turn claimed; `force: true` resumes it, and the calls it had claimed are told to the model as not run.
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
  isAirlockError,
  runApproved,
} from "../../index.js";
import { callOf, type GateMetadata, gateMetadata } from "./gate.js";
import { openGates, type ParkOptions, parkInterruptions } from "./park.js";

// biome-ignore lint/suspicious/noExplicitAny: the SDK's own bound for agents of any context and output
type AnyAgent = Agent<any, any>;

/** Prefix of the idempotency key of a turn's resume ticket; the id of the turn's first gate follows. */
export const RESUME_KEY_PREFIX = "openai-agents-resume:";

export interface ResumeOptions<TContext, TAgent extends AnyAgent> extends ParkOptions {
  /** Wait while a gate of the turn is pending instead of returning `pending`. @default false */
  wait?: boolean;
  signal?: AbortSignal;
  /** Passed to `runner.run` when the run goes on (context, maxTurns, signal, ...). */
  runOptions?: NonStreamRunOptions<TContext, TAgent>;
  /** Who resumes, recorded with each claim. @default each request's requester */
  by?: string;
  /** Resume without taking the turn's ticket, for a turn whose resumer died after taking it. Each
   * approved call is still claimed on its own, so nothing that ran runs again. @default false */
  force?: boolean;
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
  const restore = async () => {
    const restored = await RunState.fromString<TContext, TAgent>(agent, serialized);
    const byCall = new Map<string, RunToolApprovalItem>();
    for (const item of restored.getInterruptions()) byCall.set(callOf(item).callId, item);
    return { state: restored, items: byCall };
  };
  let run: Awaited<ReturnType<typeof restore>> | undefined;
  let requests: ApprovalRequest[];
  if (found.every((r) => r !== undefined)) {
    requests = found as ApprovalRequest[];
  } else {
    // The parking process died half-way: open the gates it did not get to.
    run = await restore();
    requests = await completeTurn(airlock, meta.turn, run.items, serialized, {
      ...options,
      requester: known.requester,
      keyPrefix: prefix,
    });
  }
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
  const holderRequest = requests[0] as ApprovalRequest;
  if (!options.force) {
    const taken = await takeTicket(airlock, holderRequest, requests, options.by);
    if (!taken.ok) return { status: "already_resumed", requests, detail: taken.detail };
  }
  run ??= await restore();
  const { state, items } = run;

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
      state.reject(item, {
        message:
          outcome.reason === "already_executed"
            ? `This ${call.tool} call was already claimed for execution by an earlier resume, so it was not run again; it may or may not have completed.`
            : `The approval cannot be used (${outcome.detail}); the ${call.tool} call was not executed. Do not retry the same call.`,
      });
      continue;
    }
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
/** The turn's resume ticket: a request keyed by the turn's first gate (action `openai-agents.resume`),
 * created pending with its requester as its only approver (self-approval is refused, so no one can
 * approve it) and no deadline, and taken by cancelling it: `pending → cancelled` is the
 * compare-and-set that lets exactly one resumer go on, even for a turn in which nothing was approved.
 * An agent token may do both (it may not create a request that skips approval). */
async function takeTicket(
  airlock: AirlockApi,
  holder: ApprovalRequest,
  requests: ApprovalRequest[],
  by: string | undefined,
): Promise<{ ok: true } | { ok: false; detail: string }> {
  const ticket = await airlock.request({
    key: `${RESUME_KEY_PREFIX}${holder.id}`,
    action: "openai-agents.resume",
    title: `Resume the OpenAI Agents run gated by ${holder.id}`,
    args: { requestIds: requests.map((r) => r.id) },
    requester: holder.requester,
    approvers: [holder.requester],
    correlationId: holder.correlationId,
    metadata: { openaiAgentsResume: { gate: holder.id } },
  });
  try {
    await airlock.cancel(ticket.id, { reason: `resumed by ${by ?? holder.requester}` });
    return { ok: true };
  } catch (err) {
    if (!isAirlockError(err, "conflict")) throw err;
    return { ok: false, detail: err.message };
  }
}

async function completeTurn(
  airlock: AirlockApi,
  turn: string[],
  items: Map<string, RunToolApprovalItem>,
  serialized: string,
  options: ParkOptions,
): Promise<ApprovalRequest[]> {
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
