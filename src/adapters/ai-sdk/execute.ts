// Running a gated tool: always through `runApproved` (verify the approval binds the args, claim the
// execution once, then run with the approved args), so a double resume, a second server instance or a
// replayed request never runs a tool twice, and a reviewer's edited args are what runs.
import { asSchema, type ToolExecutionOptions, type ToolSet } from "ai";
import type { RunApprovedResult } from "../../engine/run-approved.js";
import { type AirlockApi, AirlockError, type ApprovalRequest, runApproved } from "../../index.js";

type Execute = (input: unknown, options: ToolExecutionOptions<unknown>) => unknown;

export interface Runner {
  /** Runs the tool of `request` once with the approved args (a streaming tool's stream is returned
   * as it is, for the SDK to read). */
  run(
    toolName: string,
    request: ApprovalRequest,
    options: ToolExecutionOptions<unknown>,
  ): Promise<RunApprovedResult<unknown>>;
  /** Why the reviewer's edited args cannot run (they do not fit the tool's input schema), or
   * undefined when they can, or nothing was edited. */
  misfit(toolName: string, request: ApprovalRequest): Promise<string | undefined>;
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
    async misfit(toolName, request) {
      const checked = await approvedInput(request, originals.get(toolName)?.schema);
      return checked.ok ? undefined : checked.detail;
    },
    async run(toolName, request, options) {
      const original = originals.get(toolName);
      if (!original) {
        throw new AirlockError(
          "invalid_input",
          `the tool \`${toolName}\` has no execute function in the tools given to airlockToolApproval`,
        );
      }
      const checked = await approvedInput(request, original.schema);
      if (!checked.ok) throw new AirlockError("invalid_input", checked.detail);
      return runApproved(
        airlock,
        request,
        async () => original.execute(checked.input, options),
        by === undefined ? { wait: false } : { wait: false, by },
      );
    },
  };
}

/** The args to run with, parsed by the tool's input schema: a reviewer's edit could be anything, and
 * is refused here, before the execution is claimed, when it does not fit. */
async function approvedInput(
  request: ApprovalRequest,
  schema: unknown,
): Promise<{ ok: true; input: unknown } | { ok: false; detail: string }> {
  const edited = request.decision?.editedArgs;
  const args = edited ?? request.args;
  if (edited === undefined || schema == null) return { ok: true, input: args };
  const validate = asSchema(schema as Parameters<typeof asSchema>[0]).validate;
  if (!validate) return { ok: true, input: args };
  const result = await validate(args);
  if (result.success) return { ok: true, input: result.value };
  return {
    ok: false,
    detail: `the arguments ${request.decision?.reviewer ?? "the reviewer"} edited do not fit the tool's input schema: ${result.error.message}`,
  };
}
