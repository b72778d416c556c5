// Parking a run: one Airlock request per interruption of the turn, keyed by the call id (opening the
// same turn twice returns the same requests), with the serialized RunState kept in the metadata of the
// turn's first request, so any process can rebuild the run once the gates are decided.
import type { Agent, RunResult, RunState } from "@openai/agents";
import { redactorOf } from "../../audit/redact.js";
import { type AirlockApi, type ApprovalRequest, InvalidInputError } from "../../index.js";
import { callOf, type GateOptions, gateInput, keyFor } from "./gate.js";

export interface ParkOptions extends GateOptions {
  /** The largest serialized RunState stored with a request, in UTF-8 bytes. A server refuses bodies
   * over its `bodyLimitBytes` (1 MiB by default) anyway; this names the problem before that.
   * @default 786432 (768 KiB) */
  maxStateBytes?: number;
}

export const DEFAULT_MAX_STATE_BYTES = 768 * 1024;

export interface ParkedTurn {
  /** One request per interruption, in the order of `result.interruptions`. */
  requests: ApprovalRequest[];
}

// biome-ignore lint/suspicious/noExplicitAny: the SDK's own bound for agents of any context and output
type AnyAgent = Agent<any, any>;

/** Opens (or finds again) the gates of a run's interrupted turn; see the file's header. */
export async function parkInterruptions<TContext, TAgent extends AnyAgent>(
  airlock: Pick<AirlockApi, "request">,
  run: RunResult<TContext, TAgent> | RunState<TContext, TAgent>,
  options: ParkOptions = {},
): Promise<ParkedTurn> {
  const state = "state" in run ? run.state : run;
  const items = state.getInterruptions();
  if (items.length === 0) return { requests: [] };
  const calls = items.map(callOf);
  const serialized = state.toString();
  const bytes = Buffer.byteLength(serialized, "utf8");
  const max = options.maxStateBytes ?? DEFAULT_MAX_STATE_BYTES;
  if (bytes > max) {
    throw new InvalidInputError(
      `Expected the serialized RunState to be at most \`maxStateBytes\` (${max}) bytes, got ${bytes}: shorten the conversation (e.g. a session with compaction) or raise \`maxStateBytes\` and the server's body limit`,
      "maxStateBytes",
    );
  }
  return openGates(airlock, calls, serialized, options);
}

/** Opens the gates for `calls` (one turn), the first one holding `serialized`. */
export async function openGates(
  airlock: Pick<AirlockApi, "request">,
  calls: Array<ReturnType<typeof callOf>>,
  serialized: string,
  options: GateOptions,
): Promise<ParkedTurn> {
  const turn = calls.map((c) => c.callId);
  const first = turn[0];
  const correlationId = first === undefined ? undefined : keyFor(options, first);
  const requests: ApprovalRequest[] = [];
  for (const [i, call] of calls.entries()) {
    const meta = { turn, editable: call.editable, ...(i === 0 ? { state: serialized } : {}) };
    requests.push(
      await airlock.request(gateInput(options, call, redactorOf(airlock), meta, correlationId)),
    );
  }
  return { requests };
}
