// Resuming parked threads when their Airlock requests are decided or time out, in any channel and
// from any process. `resumeThread` resumes one thread once; `resumeOnDecision` runs until stopped,
// tails Airlock's events (or polls, over HTTP) and calls `resumeThread` for each thread whose gate
// settled, after catching up with the decisions taken while no resumer ran.
//
// Exactly once: before invoking the graph, a resume takes a ticket from Airlock (engine/tickets.ts;
// not a request: no listing, metric or quota sees it), keyed by the thread, the checkpoint it is
// parked at and the interrupts it answers, and scoped by the requester of the thread's requests (over
// HTTP, the token's principal). Of two resumers (or a resumer and `resumeThread` called by hand) only
// the one that gets the ticket runs the rest of the graph; the other answers `already_resumed`. The
// winner renews the ticket's lease while the graph runs and finishes it afterwards, so it is never
// taken again. A resumer that dies mid-resume leaves the ticket unfinished: once its lease
// (`ticketLeaseMs`, 5 minutes by default) has run out, the next `resumeThread` takes it and resumes
// the thread from its last checkpoint (an approved tool that already ran is not run again: `gate.run`
// claims each execution). A raw `graph.invoke(new Command({ resume }))` takes no ticket; it still
// cannot approve anything (the gate re-reads the decision) nor run an approved tool twice.
// `resumeThread(..., { force: true })` resumes without the ticket, at once.
//
// HITL middleware threads: the app bridges a thread's first interrupt (`hitlToAirlock`); a resumed
// run that calls a gated tool again parks at a new interrupt, which nobody would ever be asked
// about. Given the bridge's options (`hitl`), a resume opens the requests of the interrupts the
// thread is parked at afterwards (and of any it finds unbridged, e.g. after a resumer died between
// its run and the bridging), keyed like `hitlToAirlock`'s, so doing it twice opens nothing new.
import { randomUUID } from "node:crypto";
import { Command } from "@langchain/langgraph";
import { withTicket } from "../../engine/tickets.js";
import { type Airlock, type AirlockApi, type ApprovalRequest, hashArgs } from "../../index.js";
import { followSettled } from "../shared/follow-settled.js";
import { type GateResumeValue, isGateInterrupt } from "./gate.js";
import {
  airlockToHitlResponse,
  type HitlBridgeOptions,
  hitlKey,
  hitlToAirlock,
  isHitlRequest,
} from "./hitl.js";
import {
  claimApprovedHitl,
  pendingToolCalls,
  recordHitlOutcomes,
  toolResults,
} from "./hitl-execution.js";

/** What resuming needs of Airlock. `events` (the engine has it) wakes the resumer at once; without
 * it (the HTTP client) the resumer polls. */
export type ResumerApi = Pick<
  AirlockApi,
  | "request"
  | "get"
  | "getByKey"
  | "list"
  | "takeTicket"
  | "finishTicket"
  | "claimExecution"
  | "finishExecution"
> & {
  events?: Airlock["events"];
};

/** What resuming needs of a compiled graph (`StateGraph.compile({ checkpointer })`, `createAgent`). */
export interface ResumableGraph {
  getState(config: { configurable: { thread_id: string } }): Promise<{
    config: { configurable?: Record<string, unknown> };
    /** The thread's state; its `messages` tell which approved HITL calls ran (hitl-execution.ts). */
    values?: unknown;
    tasks: ReadonlyArray<{ interrupts: ReadonlyArray<{ id?: string; value?: unknown }> }>;
  }>;
  invoke(input: unknown, config?: Record<string, unknown>): Promise<unknown>;
}

export interface ResumeThreadOptions {
  graph: ResumableGraph;
  airlock: ResumerApi;
  threadId: string;
  /** Recorded as who claimed the resume. @default a random resumer name */
  by?: string;
  /** Resume without taking the ticket, e.g. at once after a resumer died mid-resume instead of
   * after its ticket's lease. */
  force?: boolean;
  /** How long the ticket is held unless renewed: a resumer that died is taken over after it. The
   * winner renews it every third of it while the graph runs. @default 300000 (5 minutes) */
  ticketLeaseMs?: number;
  /** Extra run config for the resumed run (e.g. `recursionLimit`, `callbacks`). */
  config?: Record<string, unknown>;
  /** The requester `hitlToAirlock` opened this thread's HITL requests with (their keys are per
   * requester). @default `hitl.requester`, else "anonymous" in process (the token's name over HTTP) */
  hitlRequester?: string;
  /** The options the thread's HITL interrupts are bridged with (`hitlToAirlock`'s, but for the
   * thread and interrupt): when given, HITL interrupts with no Airlock requests yet get them, both
   * those found before resuming and those the resumed run parks at. */
  hitl?: HitlBridgeOptions;
}

export type ResumeThreadResult =
  | {
      resumed: true;
      requestIds: string[];
      output: unknown;
      /** With `hitl`: the requests of the HITL interrupts the resumed run parked at. */
      opened: ApprovalRequest[];
    }
  | {
      resumed: false;
      /** `not_parked`: no Airlock interrupt pending; `pending`: none of its requests is decided;
       * `already_resumed`: another resumer holds the ticket (or finished it). */
      reason: "not_parked" | "pending" | "already_resumed";
      requestIds: string[];
    };

/** Prefix of the key of a resume's ticket; a hash of the thread, its checkpoint and the interrupts
 * the resume answers follows. */
export const RESUME_KEY_PREFIX = "langgraph-resume:";

interface Ready {
  interruptId: string;
  value: unknown;
  requests: ApprovalRequest[];
}

/** Resumes `threadId` once if one of its pending interrupts has a settled Airlock request. */
export async function resumeThread(options: ResumeThreadOptions): Promise<ResumeThreadResult> {
  const { graph, airlock, threadId } = options;
  const hitlRequester = options.hitlRequester ?? options.hitl?.requester;
  // Requests this resume opens are looked up under the same requester as the thread's others.
  const bridge: HitlBridgeOptions | undefined = options.hitl && {
    ...options.hitl,
    ...(hitlRequester === undefined ? {} : { requester: hitlRequester }),
  };
  const state = await graph.getState({ configurable: { thread_id: threadId } });
  const ready: Ready[] = [];
  const seen: string[] = [];
  for (const task of state.tasks) {
    for (const intr of task.interrupts) {
      if (intr.id === undefined) continue;
      const found = await readyInterrupt(
        airlock,
        { requester: hitlRequester, bridge },
        threadId,
        intr.id,
        intr.value,
      );
      if (!found) continue;
      seen.push(...found.requests.map((r) => r.id));
      if (found.requests.every((r) => r.status !== "pending")) ready.push(found);
    }
  }
  if (seen.length === 0) return { resumed: false, reason: "not_parked", requestIds: [] };
  if (ready.length === 0) return { resumed: false, reason: "pending", requestIds: seen };
  const requestIds = ready.flatMap((r) => r.requests.map((q) => q.id));
  const run = async (): Promise<ResumeThreadResult> => {
    const resume = Object.fromEntries(ready.map((r) => [r.interruptId, r.value]));
    // The framework runs the approved HITL calls itself: claimed now, their outcome read back from
    // the thread's tool results once the run returned (hitl-execution.ts).
    const claimed = await claimApprovedHitl(
      airlock,
      ready.flatMap((r) => r.requests),
      options.by ?? "langgraph-resumer",
    );
    const before = toolResults(state.values);
    const calls = pendingToolCalls(state.values);
    let output: unknown;
    try {
      output = await graph.invoke(new Command({ resume }), {
        ...options.config,
        configurable: {
          ...((options.config?.configurable as Record<string, unknown> | undefined) ?? {}),
          thread_id: threadId,
        },
      });
    } catch (err) {
      await recordHitlOutcomes(airlock, claimed, calls, before, new Map(), err);
      throw err;
    }
    if (claimed.length > 0) {
      const after = await graph.getState({ configurable: { thread_id: threadId } });
      await recordHitlOutcomes(airlock, claimed, calls, before, toolResults(after.values));
    }
    const opened = bridge ? await bridgeParked(graph, airlock, threadId, bridge) : [];
    return { resumed: true, requestIds, output, opened };
  };
  if (options.force) return run();
  const checkpointId = state.config.configurable?.checkpoint_id;
  const interrupts = ready.map((r) => r.interruptId).sort();
  const requester = ready[0]?.requests[0]?.requester ?? hitlRequester;
  const key = `${RESUME_KEY_PREFIX}${hashArgs({ threadId, checkpointId: String(checkpointId ?? ""), interrupts })}`;
  const held = await withTicket(
    airlock,
    key,
    {
      by: options.by ?? defaultName(),
      ...(requester === undefined ? {} : { requester }),
      ...(options.ticketLeaseMs === undefined ? {} : { leaseMs: options.ticketLeaseMs }),
    },
    run,
  );
  return held.ran ? held.value : { resumed: false, reason: "already_resumed", requestIds };
}

/** Opens (or finds) the requests of every HITL interrupt `threadId` is parked at. */
async function bridgeParked(
  graph: ResumableGraph,
  airlock: ResumerApi,
  threadId: string,
  hitl: HitlBridgeOptions,
): Promise<ApprovalRequest[]> {
  const state = await graph.getState({ configurable: { thread_id: threadId } });
  const opened: ApprovalRequest[] = [];
  for (const task of state.tasks) {
    for (const intr of task.interrupts) {
      if (intr.id === undefined || !isHitlRequest(intr.value)) continue;
      const request = intr.value;
      opened.push(
        ...(await hitlToAirlock(airlock, { ...hitl, threadId, interruptId: intr.id, request })),
      );
    }
  }
  return opened;
}

async function readyInterrupt(
  airlock: ResumerApi,
  hitl: { requester: string | undefined; bridge: HitlBridgeOptions | undefined },
  threadId: string,
  interruptId: string,
  value: unknown,
): Promise<Ready | undefined> {
  if (isGateInterrupt(value)) {
    const request = await airlock.get(value.airlock.requestId);
    const wake: GateResumeValue = { airlock: { requestId: request.id } };
    return { interruptId, value: wake, requests: [request] };
  }
  if (isHitlRequest(value)) {
    let requests: ApprovalRequest[] = [];
    for (let i = 0; i < value.actionRequests.length; i++) {
      const key = hitlKey(threadId, interruptId, i);
      const r = await airlock.getByKey(
        key,
        hitl.requester === undefined ? {} : { requester: hitl.requester },
      );
      if (!r) {
        // Not bridged to Airlock (yet): not ours to resume, unless we were given the bridge.
        if (!hitl.bridge) return undefined;
        requests = await hitlToAirlock(airlock, {
          ...hitl.bridge,
          threadId,
          interruptId,
          request: value,
        });
        break;
      }
      requests.push(r);
    }
    if (requests.some((r) => r.status === "pending")) {
      return { interruptId, value: undefined, requests };
    }
    return { interruptId, value: airlockToHitlResponse(requests, value), requests };
  }
  return undefined;
}

export interface ResumeOnDecisionOptions {
  graph: ResumableGraph;
  airlock: ResumerApi;
  /** Who claims the resumes. @default a random resumer name */
  by?: string;
  signal?: AbortSignal;
  /** Extra run config for every resumed run. */
  config?: Record<string, unknown>;
  /** How many settled requests the start-up catch-up reads (newest first). @default 1000 */
  catchUpLimit?: number;
  /** Poll interval when `airlock` has no `events` (the HTTP client). @default 1000 */
  pollMs?: number;
  /** The options the app bridges its threads' HITL interrupts with (`hitlToAirlock`'s, but for the
   * thread and interrupt). When given, an interrupt a resumed thread parks at gets its Airlock
   * requests here, and is resumed when they are decided; without it nobody is asked about it. */
  hitl?: HitlBridgeOptions;
  /** How long each resume's ticket is held unless renewed (`resumeThread`'s). @default 300000 */
  ticketLeaseMs?: number;
  /** Called after each resume this resumer ran. */
  onResumed?: (threadId: string, result: Extract<ResumeThreadResult, { resumed: true }>) => void;
  /** Called when a resume fails (the resumer goes on). @default ignore */
  onError?: (err: unknown, threadId: string) => void;
}

export interface Resumer {
  /** Stops listening and waits for resumes in flight. Safe to call twice. */
  stop(): Promise<void>;
  /** Resolves when the catch-up of decisions taken before the start is done. */
  readonly ready: Promise<void>;
}

/** Resumes every parked thread whose Airlock request settles, exactly once; see the file's header. */
export function resumeOnDecision(options: ResumeOnDecisionOptions): Resumer {
  const { airlock } = options;
  const by = options.by ?? defaultName();
  const threadOf = (r: ApprovalRequest) => {
    const lg = r.metadata.langgraph as { threadId?: unknown; kind?: unknown } | undefined;
    return typeof lg?.threadId === "string" ? { threadId: lg.threadId, kind: lg.kind } : undefined;
  };
  // One resume at a time per thread in this process; others are chained behind it.
  return followSettled({
    airlock,
    signal: options.signal,
    catchUpLimit: options.catchUpLimit,
    pollMs: options.pollMs,
    // Earlier versions took resume tickets as requests (metadata kind `resume`), newer than the
    // request each answered; with `hitl`, one must not hide that request from the catch-up: its
    // thread may be parked at an interrupt nobody bridged yet. Such tickets are never resumed.
    passKey: (r) => {
      const lg = threadOf(r);
      return options.hitl && lg?.kind === "resume" ? undefined : lg?.threadId;
    },
    onError: (err) => options.onError?.(err, ""),
    consider(r) {
      const lg = threadOf(r);
      if (!lg || lg.kind === "resume") return undefined;
      const { threadId } = lg;
      const hitlRequester = lg.kind === "hitl" ? r.requester : undefined;
      return {
        key: threadId,
        run: async () => {
          try {
            const result = await resumeThread({
              graph: options.graph,
              airlock,
              threadId,
              by,
              ...(options.config ? { config: options.config } : {}),
              ...(options.ticketLeaseMs === undefined
                ? {}
                : { ticketLeaseMs: options.ticketLeaseMs }),
              ...(hitlRequester !== undefined ? { hitlRequester } : {}),
              ...(options.hitl ? { hitl: options.hitl } : {}),
            });
            if (result.resumed) options.onResumed?.(threadId, result);
          } catch (err) {
            options.onError?.(err, threadId);
          }
        },
      };
    },
  });
}

function defaultName(): string {
  return `langgraph-resumer-${process.pid}-${randomUUID().slice(0, 8)}`;
}
