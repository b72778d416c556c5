// `airlockNeedsApproval(airlock, options)`: a `needsApproval` function for `tool({ ... })` that asks an
// Airlock policy first. A call the policy approves (`level: "auto"`) runs at once and is recorded in
// the audit log (`auto_executed`, args redacted, with the policy's reason); every other call
// interrupts the run, and `approveInterruptions` opens its gate.
import type { RunContext } from "@openai/agents";
import { redactorOf } from "../../audit/redact.js";
import { requestInputSchema } from "../../core/schemas.js";
import { type AirlockApi, hashArgs, type Policy, type PolicyVerdict } from "../../index.js";
import { DEFAULT_REQUESTER, type GateOptions, gateInput, parseArgs } from "./gate.js";

export interface NeedsApprovalOptions extends GateOptions {
  /** The tool's name (the SDK does not pass it to `needsApproval`): what the policy sees as the
   * action (through `action`) and what the audit names. @default "tool" */
  tool?: string;
  /** Decides before a human is asked, like the engine's own `policy` (`when`, `forActions`,
   * `smallFileWrites`, `confidencePolicy`, composed with `firstVerdict` / `strictestVerdict`). Without
   * one every call asks; the engine's own policy still applies when the gate opens, and a gate it
   * approves resumes the run at once. */
  policy?: Policy;
}

/** The function the SDK calls for each call of the tool: `true` interrupts the run for a human. */
export type AirlockApprovalFunction = (
  runContext: RunContext<unknown>,
  input: unknown,
  callId?: string,
) => Promise<boolean>;

export function airlockNeedsApproval(
  airlock: Pick<AirlockApi, "record">,
  options: NeedsApprovalOptions = {},
): AirlockApprovalFunction {
  const toolName = options.tool ?? "tool";
  return async (runContext, input, callId) => {
    // A call a human already decided (the SDK asks again after a RunState is restored): its decision
    // stands, and nothing is recorded twice.
    if (callId !== undefined && options.tool !== undefined) {
      if (runContext.isToolApproved({ toolName, callId }) !== undefined) return true;
    }
    if (!options.policy) return true;
    const args =
      input !== null && typeof input === "object" && !Array.isArray(input)
        ? (input as Record<string, unknown>)
        : typeof input === "string"
          ? parseArgs(input)
          : { input };
    const call = { tool: toolName, callId: callId ?? "", args, agent: "" };
    const parsed = requestInputSchema.safeParse(gateInput(options, call, redactorOf(airlock)));
    // What Airlock could not store as a request is no candidate for automatic approval: ask.
    if (!parsed.success) return true;
    const verdict: PolicyVerdict | undefined = await options.policy({ input: parsed.data });
    if (verdict?.level !== "auto") return true;
    // Audited before it runs: a record that cannot be written stops the call.
    const data: Record<string, unknown> = {
      adapter: "openai-agents",
      tool: toolName,
      action: parsed.data.action,
      args: redactorOf(airlock).redact(args),
      argsHash: hashArgs(args),
      policy: verdict.reason ?? "approved automatically by policy",
    };
    if (callId !== undefined) data.callId = callId;
    if (verdict.confidence !== undefined) data.confidence = verdict.confidence;
    await airlock.record({
      type: "auto_executed",
      actor: options.requester ?? DEFAULT_REQUESTER,
      data,
    });
    return false;
  };
}
