// An Airlock decision as the AI SDK's answer to a tool approval: `approved` and a `reason` the model
// (for a denial) or the chat UI (for an approval) reads.
//
// Edits: the AI SDK runs an approved call only with the input the model proposed (it re-validates
// the approved input and refuses any change). When a reviewer edits the args, the original call is
// therefore answered with a denial whose reason tells the model what was changed and what the tool
// returned, after the tool ran once with the edited args under `runApproved` (claimed, so a second
// resume never runs it again).
import type { ToolExecutionOptions } from "ai";
import { type ApprovalRequest, hashArgs } from "../../index.js";
import type { Runner } from "./execute.js";

export interface Answer {
  approved: boolean;
  reason: string;
}

/** The answer for a terminal request. Runs the tool with the edited args when the reviewer edited. */
export async function answerFor(
  runner: Runner,
  toolName: string,
  request: ApprovalRequest,
  options: ToolExecutionOptions<unknown>,
): Promise<Answer> {
  const d = request.decision;
  const who = d?.reviewer ?? "a reviewer";
  const said = d?.comment ? `: ${d.comment}` : "";
  const ref = `(Airlock request ${request.id})`;
  switch (request.status) {
    case "approved": {
      if (d?.editedArgs !== undefined && hashArgs(d.editedArgs) !== request.argsHash) {
        return runEdited(runner, toolName, request, options);
      }
      if (d?.method === "auto") {
        return {
          approved: true,
          reason: `Approved automatically by Airlock's policy${said} ${ref}`,
        };
      }
      if (d?.method === "timeout") {
        return {
          approved: true,
          reason: `No decision before the deadline; the declared default approved it ${ref}`,
        };
      }
      return { approved: true, reason: `Approved by ${who}${said} ${ref}` };
    }
    case "rejected":
      return { approved: false, reason: `Rejected by ${who}${said} ${ref}` };
    case "revise":
      return { approved: false, reason: `${who} asked for a revision${said} ${ref}` };
    case "timed_out":
      return {
        approved: false,
        reason: `No decision before the deadline; the declared default rejected it ${ref}`,
      };
    case "cancelled":
      return { approved: false, reason: `Cancelled by ${who}${said} ${ref}` };
    case "pending":
      return { approved: false, reason: `Still waiting for a decision ${ref}` };
  }
}

async function runEdited(
  runner: Runner,
  toolName: string,
  request: ApprovalRequest,
  options: ToolExecutionOptions<unknown>,
): Promise<Answer> {
  const d = request.decision;
  const edited = JSON.stringify(d?.editedArgs);
  const head = `${d?.reviewer ?? "A reviewer"} edited the arguments before approving${d?.comment ? ` (${d.comment})` : ""}, so the call as you proposed it did not run; the tool ran once with ${edited} instead`;
  try {
    const result = await runner.run(toolName, request, options, true);
    if (result.ok) {
      return {
        approved: false,
        reason: `${head} and returned: ${JSON.stringify(result.value) ?? "nothing"}. Do not call it again for this. (Airlock request ${request.id})`,
      };
    }
    if (result.reason === "already_executed") {
      return {
        approved: false,
        reason: `${head}; it has already run and will not run again. (Airlock request ${request.id})`,
      };
    }
    return { approved: false, reason: `${head}, but it could not run: ${result.detail}` };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return {
      approved: false,
      reason: `${d?.reviewer ?? "A reviewer"} edited the arguments to ${edited}, but running the tool with them failed: ${message} (Airlock request ${request.id})`,
    };
  }
}
