// Running a gated tool: always through `runApproved` (verify the approval binds the args, claim the
// execution once, then run with the approved args), so a double resume, a second server instance or a
// replayed request never runs a tool twice, and a reviewer's edited args are what runs.
import { asSchema, type ToolExecutionOptions, type ToolSet } from "ai";
import {
  type AirlockApi,
  AirlockError,
  type ApprovalRequest,
  type RunApprovedResult,
  runApproved,
} from "../../index.js";

type Execute = (input: unknown, options: ToolExecutionOptions<unknown>) => unknown;

export interface Runner {
  /** Runs the tool of `request` once with the approved args; a result that is a stream of outputs
   * is read to its last value when `collect` is set. */
  run(
    toolName: string,
    request: ApprovalRequest,
    options: ToolExecutionOptions<unknown>,
    collect: boolean,
  ): Promise<RunApprovedResult<unknown>>;
  /** True when the tool streams its outputs (an async generator). */
  streams(toolName: string): boolean;
}

/** `by`: who executes, recorded with the `executed` event (undefined: the request's requester). */
export function createRunner(airlock: AirlockApi, tools: ToolSet, by: string | undefined): Runner {
  const originals = new Map<string, { execute: Execute; schema: unknown }>();
  for (const [name, t] of Object.entries(tools)) {
    if (typeof t.execute === "function") {
      originals.set(name, { execute: t.execute as Execute, schema: t.inputSchema });
    }
  }
  return {
    streams(toolName) {
      return originals.get(toolName)?.execute.constructor.name === "AsyncGeneratorFunction";
    },
    async run(toolName, request, options, collect) {
      const original = originals.get(toolName);
      if (!original) {
        throw new AirlockError(
          "invalid_input",
          `the tool \`${toolName}\` has no execute function in the tools given to airlockToolApproval`,
        );
      }
      const input = await approvedInput(request, original.schema);
      return runApproved(
        airlock,
        request,
        async () => {
          const out = original.execute(input, options);
          return collect && isAsyncIterable(out) ? lastOf(out) : out;
        },
        by === undefined ? { wait: false } : { wait: false, by },
      );
    },
  };
}

/** The args to run with, parsed by the tool's input schema: a reviewer's edit could be anything, and
 * is refused here, before the execution is claimed, when it does not fit. */
async function approvedInput(request: ApprovalRequest, schema: unknown): Promise<unknown> {
  const edited = request.decision?.editedArgs;
  const args = edited ?? request.args;
  if (edited === undefined || schema == null) return args;
  const validate = asSchema(schema as Parameters<typeof asSchema>[0]).validate;
  if (!validate) return args;
  const result = await validate(args);
  if (result.success) return result.value;
  throw new AirlockError(
    "invalid_input",
    `the arguments ${request.decision?.reviewer ?? "the reviewer"} edited do not fit the tool's input schema: ${result.error.message}`,
  );
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function"
  );
}

async function lastOf(stream: AsyncIterable<unknown>): Promise<unknown> {
  let last: unknown;
  for await (const value of stream) last = value;
  return last;
}
