// `check_file_approval`: the step the agent routes to when a tool answered `needs_approval`. It opens a
// gate with the diff, waits, and then either runs exactly the approved operation, once (`runApproved`:
// edited args are what run, anything else is refused) or records the cancellation.
// Small writes are approved by a rule, `fileApprovalPolicy`, installed as the engine's (or server's)
// policy: the agent never waves its own writes through (a server refuses that to agent tokens), and the
// gate records the rule's approval like any other.
import type { Policy } from "../../src/core/policy.js";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { runApproved } from "../../src/engine/run-approved.js";
import { fileWriteBytes, smallFileWrites } from "../../src/policy/rules.js";
import type { Gate } from "../shared/gate.js";
import {
  asPendingOperation,
  type ExecutionResult,
  executeFileOperation,
  type FileToolResult,
} from "./file-tool.js";

export const FILE_WRITE_ACTION = "files.write";
export const FILE_DELETE_ACTION = "files.delete";

export interface Message {
  role: "tool" | "ai";
  content: string;
  name?: string;
}

export interface ApprovalNodeOptions {
  gate: Gate;
  sandbox: string;
  requester: string;
  timeoutMs?: number;
  key?: string;
  signal?: AbortSignal;
}

export interface ApprovalOutcome {
  status: "executed" | "cancelled" | "failed";
  /** Approved by a policy (the small-writes rule), not by a person. */
  autoApproved: boolean;
  request: ApprovalRequest;
  execution?: ExecutionResult;
  /** Why nothing ran, when nothing ran. */
  reason?: string;
  messages: Message[];
}

type NeedsApproval = Extract<FileToolResult, { needs_approval: true }>;

/** Writes of at most this many bytes pass without a person, under `fileApprovalPolicy()`. */
export const SMALL_WRITE_BYTES = 100;

/** The small-writes rule as an engine policy: `createAirlock({ store, policy: fileApprovalPolicy() })`.
 * Deletions and larger writes get no opinion from it, so a person decides them. */
export function fileApprovalPolicy(maxBytes: number = SMALL_WRITE_BYTES): Policy {
  return smallFileWrites({ maxBytes, actions: [FILE_WRITE_ACTION] });
}

export async function checkFileApproval(
  result: NeedsApproval,
  opts: ApprovalNodeOptions,
): Promise<ApprovalOutcome> {
  const { approval_data: data, pending_operation: op } = result;
  const size = op.operation === "write" ? fileWriteBytes(op) : undefined;
  const verb = op.operation === "delete" ? "Delete" : data.exists ? "Modify" : "Create";
  const request = await opts.gate.request({
    ...(opts.key ? { key: opts.key } : {}),
    action: op.operation === "delete" ? FILE_DELETE_ACTION : FILE_WRITE_ACTION,
    title: `${verb} ${data.file_path}`,
    summary: data.message,
    preview: data.diff,
    args: op,
    allowed: ["approve", "reject", "edit"],
    requester: opts.requester,
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
    metadata: {
      approval_data: {
        operation: data.operation,
        file_path: data.file_path,
        message: data.message,
        exists: data.exists,
      },
      ...(size !== undefined ? { bytes: size } : {}),
    },
  });
  const settled =
    request.status === "pending"
      ? await opts.gate.waitFor(request.id, opts.signal ? { signal: opts.signal } : {})
      : request;
  const autoApproved = settled.decision?.method === "auto";

  const cancelled = (reason: string): ApprovalOutcome => ({
    status: "cancelled",
    autoApproved,
    request: settled,
    reason,
    messages: [{ role: "ai", content: `❌ File operation cancelled: ${data.message}` }],
  });
  if (settled.status !== "approved") {
    const d = settled.decision;
    return cancelled(
      `${settled.status}${d?.reviewer ? ` by ${d.reviewer}` : ""}${d?.comment ? `: ${d.comment}` : ""}`,
    );
  }
  // What the reviewer approved (or edited) must still be an operation of the same kind.
  const approved = asPendingOperation(settled.decision?.editedArgs ?? settled.args);
  if (!approved || approved.operation !== op.operation) {
    return cancelled("the approved arguments are not a file operation of the same kind");
  }
  // Bound to the approved args and claimed once: a replay of this step after a crash cannot write
  // the file twice.
  const run = await runApproved(opts.gate, settled, () =>
    executeFileOperation(opts.sandbox, approved),
  );
  if (!run.ok) {
    return cancelled(
      run.reason === "already_executed"
        ? `the approval was already used: ${run.detail}`
        : `the approval cannot be used: ${run.detail}`,
    );
  }
  const execution = run.value;
  const edited = settled.decision?.method === "edit" ? " (as edited by the reviewer)" : "";
  return {
    status: execution.success ? "executed" : "failed",
    autoApproved,
    request: settled,
    execution,
    ...(execution.error ? { reason: execution.error } : {}),
    messages: [
      { role: "tool", name: "file_operation", content: JSON.stringify(execution) },
      {
        role: "ai",
        content: execution.success
          ? `✅ File operation completed: ${describe(execution)}${edited}`
          : `⚠️ File operation failed: ${execution.error}`,
      },
    ],
  };
}

function describe(e: ExecutionResult): string {
  return e.operation === "delete"
    ? `deleted ${e.file_path}`
    : `wrote ${e.bytes_written ?? 0} bytes to ${e.file_path}`;
}
