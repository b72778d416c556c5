// Resuming a parked run, in this process or any other: read the turn's gates from Airlock, rebuild the
// RunState stored with the first one, turn each decision into the SDK's own `approve` / `reject`, and
// run on. Exactly once, twice over: a resume first takes the turn's ticket (engine/tickets.ts; not a
// request: no listing, metric or quota sees it), keyed by the turn's first gate and scoped by its
// requester (over HTTP, the token's principal), so of two resumers only one goes on, even when nothing
// in the turn was approved; the winner renews the ticket while the run goes on and finishes it after,
// so the turn is never resumed again. And every approved call is claimed on its own (`runApproved`:
// verify → claim → run), so a resume that runs again never runs a call twice either. A resumer that
// dies mid-resume leaves the ticket unfinished: once its lease (`ticketLeaseMs`, 5 minutes by
// default) has run out, the next resume takes it over, and the calls the dead one had claimed are told
// to the model as not run again. `force: true` resumes without the ticket, at once.
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
import { canonicalJson } from "../../core/hash.js";
import { withTicket } from "../../engine/tickets.js";
import {
  type AirlockApi,
  type ApprovalRequest,
  ConflictError,
  hashArgs,
  InvalidInputError,
  runApproved,
} from "../../index.js";
import { type JsonSchema, parseToolArgs, toArgsSchema } from "../../tools/args-schema.js";
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
  /** Resume without taking the turn's ticket, e.g. at once for a turn whose resumer died instead of
   * after its ticket's lease. Each approved call is still claimed on its own, so nothing that ran
   * runs again. @default false */
  force?: boolean;
  /** How long the turn's ticket is held unless renewed: a resumer that died is taken over after it.
   * The winner renews it every third of it while the run goes on. @default 300000 (5 minutes) */
  ticketLeaseMs?: number;
}

export type ResumeOutcome<TContext, TAgent extends AnyAgent> =
  /** Every gate was decided; the run went on and `result` is where it stopped next (finished, or
   * interrupted again: park it with `parkInterruptions`). */
  | { status: "resumed"; result: RunResult<TContext, TAgent>; requests: ApprovalRequest[] }
  /** A gate is still pending (only without `wait`); nothing ran. */
  | { status: "pending"; requests: ApprovalRequest[] }
  /** Another resumer holds this turn's ticket, or finished it; nothing ran here. */
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
  const first = requests[0] as ApprovalRequest;
  const goOn = async (): Promise<ResumeOutcome<TContext, TAgent>> => {
    run ??= await restore();
    const result = await runTurn(airlock, runner, agent, meta.turn, requests, run, options);
    return { status: "resumed", result, requests };
  };
  if (options.force) return goOn();
  const held = await withTicket(
    airlock,
    `${RESUME_KEY_PREFIX}${first.id}`,
    {
      requester: first.requester,
      by: options.by ?? first.requester,
      ...(options.ticketLeaseMs === undefined ? {} : { leaseMs: options.ticketLeaseMs }),
    },
    goOn,
  );
  if (held.ran) return held.value;
  const { ticket } = held;
  const detail = ticket.finished
    ? `the turn's ticket was finished by ${ticket.holder}`
    : `the turn's ticket is held by ${ticket.holder} until ${new Date(ticket.expiresAt).toISOString()}`;
  return { status: "already_resumed", requests, detail };
}

/** Applies each gate's decision to the restored run and runs it on. */
async function runTurn<TContext, TAgent extends AnyAgent>(
  airlock: AirlockApi,
  runner: Runner,
  agent: TAgent,
  turn: string[],
  requests: ApprovalRequest[],
  run: { state: RunState<TContext, TAgent>; items: Map<string, RunToolApprovalItem> },
  options: Pick<ResumeOptions<TContext, TAgent>, "by" | "runOptions">,
): Promise<RunResult<TContext, TAgent>> {
  const { state, items } = run;
  const { by } = options;

  for (const [i, request] of requests.entries()) {
    const callId = turn[i] as string;
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
    if (request.status === "responded") {
      // The person acts as the tool: their answer is the call's output; nothing ran.
      state.reject(item, { message: responseMessage(request, call.tool) });
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
    const misfit = tool && editedArgs ? await editMisfit(tool, editedArgs) : undefined;
    if (misfit !== undefined) {
      // Refused before the execution is claimed: the tool never runs with args it cannot take.
      state.reject(item, {
        message: `The reviewer's edited arguments for this ${call.tool} call do not fit the tool's parameters (${misfit}); it was not executed.`,
      });
      continue;
    }
    const outcome = await runApproved(
      airlock,
      request,
      async (args) => (tool ? runEdited(tool, state, item, args) : undefined),
      by === undefined ? {} : { by },
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
  return runner.run(agent, state, options.runOptions);
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

/** Why edited args do not fit the function tool's `parameters` (a gate opened without its
 * `argsSchema`, e.g. by an older version, was decided unchecked), or undefined when they fit. */
async function editMisfit(
  tool: AnyFunctionTool,
  args: Record<string, unknown>,
): Promise<string | undefined> {
  const carried = toArgsSchema(tool.parameters);
  if (!("schema" in carried)) return undefined;
  const fits = await parseToolArgs<unknown>(carried.schema as JsonSchema, args);
  return fits.ok ? undefined : fits.detail;
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

/** What the model reads for a call a reviewer answered instead of approving. */
function responseMessage(request: ApprovalRequest, tool: string): string {
  const d = request.decision;
  const who = d?.reviewer && d.reviewer !== "system" ? d.reviewer : "A reviewer";
  const response = d?.response;
  const text =
    typeof response === "string" ? response : (JSON.stringify(response ?? null) ?? "null");
  return `${who} answered this ${tool} call instead of running it (it was not executed). Their answer: ${text}`;
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
