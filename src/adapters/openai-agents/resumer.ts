// `resumeOnDecision`: a long-running resumer for runs parked with `parkInterruptions`. When a gate
// settles (decided in the inbox, the CLI, the API or Slack, timed out, cancelled), in any process, it
// calls `resumeRun` for that gate's turn; a run that interrupts again is parked again, and one that
// finishes is handed to `onResult`. On start it catches up with the gates settled while no resumer
// ran. Two resumers (or a resumer and a `resumeRun` by hand) are safe: each turn goes on once (its
// ticket), and the loser's attempt ends as `already_resumed`.
import { randomUUID } from "node:crypto";
import type { Agent, NonStreamRunOptions, Runner, RunResult } from "@openai/agents";
import type { Airlock, AirlockApi, ApprovalRequest } from "../../index.js";
import { followSettled } from "../shared/follow-settled.js";
import { gateMetadata } from "./gate.js";
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

export function resumeOnDecision<TContext, TAgent extends AnyAgent>(
  options: ResumeOnDecisionOptions<TContext, TAgent>,
): Resumer {
  const { airlock } = options;
  const by = options.by ?? `openai-agents-resumer-${process.pid}-${randomUUID().slice(0, 8)}`;
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

  // One resume at a time per turn in this process; others wait behind it.
  return followSettled({
    airlock,
    // Only the configured requester's, when given; `consider` keeps the adapter's gates (metadata).
    requester: options.requester,
    signal: options.signal,
    catchUpLimit: options.catchUpLimit,
    pollMs: options.pollMs,
    onError: (err, id) => options.onError?.(err, id ?? ""),
    consider(r) {
      const turn = gateMetadata(r.metadata)?.turn[0];
      if (turn === undefined || done.has(turn)) return undefined;
      return {
        key: turn,
        run: async () => {
          if (done.has(turn)) return;
          try {
            await resume(turn, r.id);
          } catch (err) {
            options.onError?.(err, r.id);
          }
        },
      };
    },
  });
}
