// An Airlock decision as the AI SDK's answer to a tool approval: `approved` and a `reason` the model
// (for a denial) or the chat UI (for an approval) reads.
//
// Edits: an approved edit is an approval. The SDK then runs the call through the gated tool's
// `execute` (see tool-approval.ts), which runs the edited args under `runApproved`, so the tool's
// output with the reviewer's args is the call's result, for the model and the UI alike. Edited args
// that do not fit the tool's input schema are denied here, before anything is claimed.
//
// Responses (a request whose gate allows `respond`): the SDK has no "answered" approval, so a
// response is answered as approved, and the gated tool's `execute` returns the reviewer's response
// instead of running the tool (execute.ts): the person's answer is the call's result.
import { type ApprovalRequest, hashArgs } from "../../index.js";
import type { Runner } from "./execute.js";

export interface Answer {
  approved: boolean;
  reason: string;
}

/** The answer for a terminal request. An approved edit is approved when its args fit the tool. */
export async function answerFor(
  runner: Runner,
  toolName: string,
  request: ApprovalRequest,
): Promise<Answer> {
  const d = request.decision;
  const who = d?.reviewer ?? "a reviewer";
  const said = d?.comment ? `: ${d.comment}` : "";
  const ref = `(Airlock request ${request.id})`;
  switch (request.status) {
    case "approved": {
      if (d?.editedArgs !== undefined && hashArgs(d.editedArgs) !== request.argsHash) {
        const misfit = await runner.misfit(toolName, request);
        if (misfit !== undefined) return { approved: false, reason: `${misfit} ${ref}` };
        return {
          approved: true,
          reason: `Approved by ${who} with edited arguments ${JSON.stringify(d.editedArgs)}${said} ${ref}`,
        };
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
    case "responded":
      // Not an approval of the call: the gated `execute` returns the response and runs nothing.
      return {
        approved: true,
        reason: `${who} answered in place of the tool (it does not run)${said} ${ref}`,
      };
    case "pending":
      return { approved: false, reason: `Still waiting for a decision ${ref}` };
  }
}
