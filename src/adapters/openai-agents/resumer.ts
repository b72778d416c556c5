// `resumeOnDecision`: a long-running resumer for runs parked with `parkInterruptions`. When a gate
// settles (decided in the inbox, the CLI, the API or Slack, timed out, cancelled), in any process, it
// calls `resumeRun` for that gate's turn; a run that interrupts again is parked again, and one that
// finishes is handed to `onResult`. On start it catches up with the gates settled while no resumer
// ran. Two resumers (or a resumer and a `resumeRun` by hand) are safe: each turn goes on once (its
// ticket), and the loser's attempt ends as `already_resumed`.
import { randomUUID } from "node:crypto";
import type { Agent, NonStreamRunOptions, Runner, RunResult } from "@openai/agents";
import type { Airlock, AirlockApi, ApprovalRequest, Status } from "../../index.js";
import { DEFAULT_REQUESTER, gateMetadata } from "./gate.js";
import { type ParkOptions, parkInterruptions } from "./park.js";
import { resumeRun } from "./resume.js";

// biome-ignore lint/suspicious/noExplicitAny: the SDK's own bound for agents of any context and output
type AnyAgent = Agent<any, any>;

/** What the resumer needs of Airlock. `events` (the engine has it) wakes it at once; without it (the
 * HTTP client) it polls. */
export type ResumerApi = AirlockApi & { events?: Airlock["events"] };

export interface ResumeOnDecisionOptions<TContext, TAgent extends AnyAgent> extends ParkOptions {
  airlock: ResumerApi;
  runner: Runner;
  agent: TAgent;
  /** Recorded as who resumed. @default a random resumer name */
  by?: string;
  signal?: AbortSignal;
  runOptions?: NonStreamRunOptions<TContext, TAgent>;
  /** How many settled requests the start-up catch-up reads (newest first). @default 1000 */
  catchUpLimit?: number;
  /** Poll interval when `airlock` has no `events`. @default 1000 */
  pollMs?: number;
  /** A run that finished after a resume by this resumer. */
  onResult?: (
    result: RunResult<TContext, TAgent>,
    requests: ApprovalRequest[],
  ) => void | Promise<void>;
  /** A resumed run that interrupted again, parked by this resumer. */
  onParked?: (requests: ApprovalRequest[]) => void | Promise<void>;
  /** A resume that failed (the resumer goes on). @default ignore */
  onError?: (err: unknown, requestId: string) => void;
}

export interface Resumer {
  /** Resolves when the catch-up of gates settled before the start is done. */
  readonly ready: Promise<void>;
  /** Stops listening and waits for resumes in flight. Safe to call twice. */
  stop(): Promise<void>;
}

const SETTLED: Status[] = ["approved", "rejected", "revise", "timed_out", "cancelled"];

export function resumeOnDecision<TContext, TAgent extends AnyAgent>(
  options: ResumeOnDecisionOptions<TContext, TAgent>,
): Resumer {
  const { airlock } = options;
  const by = options.by ?? `openai-agents-resumer-${process.pid}-${randomUUID().slice(0, 8)}`;
  const requester = options.requester ?? DEFAULT_REQUESTER;
  const stopper = new AbortController();
  const onAbort = () => stopper.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const chains = new Map<string, Promise<void>>();
  const inFlight = new Set<Promise<void>>();
  /** Turns this resumer saw go on (or lost to another resumer): not looked at again. */
  const done = new Set<string>();

  async function resume(turn: string, id: string): Promise<void> {
    const {
      airlock: _a,
      runner,
      agent,
      signal: _s,
      onResult,
      onParked,
      onError,
      ...park
    } = options;
    const out = await resumeRun<TContext, TAgent>(airlock, runner, agent, id, {
      ...park,
      by,
      ...(options.runOptions ? { runOptions: options.runOptions } : {}),
    });
    if (out.status === "pending") return;
    done.add(turn);
    if (out.status !== "resumed") return;
    if (out.result.interruptions.length > 0) {
      const parked = await parkInterruptions(airlock, out.result, park);
      await onParked?.(parked.requests);
    } else {
      await onResult?.(out.result, out.requests);
    }
  }

  /** One resume at a time per turn in this process; others wait behind it. */
  function consider(r: ApprovalRequest): void {
    if (r.status === "pending") return;
    const meta = gateMetadata(r.metadata);
    const turn = meta?.turn[0];
    if (!meta || turn === undefined || done.has(turn)) return;
    const next = (chains.get(turn) ?? Promise.resolve()).then(async () => {
      if (stopper.signal.aborted || done.has(turn)) return;
      try {
        await resume(turn, r.id);
      } catch (err) {
        options.onError?.(err, r.id);
      }
    });
    chains.set(turn, next);
    inFlight.add(next);
    void next.finally(() => {
      inFlight.delete(next);
      if (chains.get(turn) === next) chains.delete(turn);
    });
  }

  async function catchUp(limit: number): Promise<void> {
    let cursor: string | undefined;
    let read = 0;
    while (read < limit && !stopper.signal.aborted) {
      const page = await airlock.list({
        status: SETTLED,
        requester,
        order: "newest",
        limit: Math.min(100, limit - read),
        ...(cursor ? { cursor } : {}),
      });
      for (const r of page.items) consider(r);
      read += page.items.length;
      if (!page.nextCursor || page.items.length === 0) break;
      cursor = page.nextCursor;
    }
  }
  const reportError = (err: unknown) => {
    if (!stopper.signal.aborted) options.onError?.(err, "");
  };

  let tail: Promise<void>;
  let ready: Promise<void>;
  const events = airlock.events;
  if (typeof events === "function") {
    const stream = events
      .call(airlock, { types: ["decided", "timed_out", "cancelled"], signal: stopper.signal })
      [Symbol.asyncIterator]();
    // The first read fixes where the stream starts; the catch-up covers everything before it.
    const first = stream.next();
    tail = (async () => {
      let step = await first;
      while (!step.done) {
        const id = step.value.requestId;
        if (id) await airlock.get(id).then(consider, (err: unknown) => options.onError?.(err, id));
        step = await stream.next();
      }
    })().catch(reportError);
    ready = catchUp(options.catchUpLimit ?? 1000).catch(reportError);
  } else {
    ready = catchUp(options.catchUpLimit ?? 1000).catch(reportError);
    const pollMs = options.pollMs ?? 1000;
    tail = (async () => {
      await ready;
      while (!stopper.signal.aborted) {
        await sleep(pollMs, stopper.signal);
        if (!stopper.signal.aborted) await catchUp(100).catch(reportError);
      }
    })();
  }

  let stopping: Promise<void> | undefined;
  return {
    ready,
    stop() {
      stopping ??= (async () => {
        stopper.abort();
        options.signal?.removeEventListener("abort", onAbort);
        await tail;
        await ready;
        await Promise.allSettled([...inFlight]);
      })();
      return stopping;
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(finish, ms);
    function finish() {
      clearTimeout(timer);
      signal.removeEventListener("abort", finish);
      resolve();
    }
    signal.addEventListener("abort", finish, { once: true });
  });
}
