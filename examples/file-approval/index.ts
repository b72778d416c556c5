// Pattern 4: an agent that writes and modifies files in a sandbox folder.
//   act → tools → route_after_tools → [check_file_approval | assess] → assess
// `file_operation` answers `needs_approval` with a diff; the approval step runs the write only when
// approved, and what follows (assess) sees the same kind of result either way. Small writes pass by
// rule when the engine (or server) runs with `fileApprovalPolicy()`.
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { errorMessage, type Gate, type Log, newRunId, quiet } from "../shared/gate.js";
import { type ApprovalOutcome, checkFileApproval, type Message } from "./approval-node.js";
import {
  type ApprovalData,
  type ExecutionResult,
  type FileOperationCall,
  fileOperation,
} from "./file-tool.js";

export {
  checkFileApproval,
  FILE_DELETE_ACTION,
  FILE_WRITE_ACTION,
  fileApprovalPolicy,
  type Message,
  SMALL_WRITE_BYTES,
} from "./approval-node.js";
export {
  type ApprovalData,
  executeFileOperation,
  type FileOperationCall,
  type FileToolResult,
  fileOperation,
  type PendingOperation,
} from "./file-tool.js";
export { resolveInSandbox, SandboxError } from "./sandbox.js";

export interface FileApprovalOptions {
  airlock: Gate;
  /** The sandbox folder; the agent can touch nothing outside it. */
  dir: string;
  log?: Log;
  signal?: AbortSignal;
  /** What the agent does. @default defaultOperations() */
  operations?: FileOperationCall[];
  /** Each gate's deadline. @default one hour */
  timeoutMs?: number;
  /** Part of the gates' idempotency keys. @default random */
  runId?: string;
  /** Who the gates name as requester. Against a server it must be the agent token's name (the
   * server refuses any other). @default "file-agent" */
  requester?: string;
}

export type StepStatus = "executed" | "auto_executed" | "cancelled" | "refused" | "failed";

export interface StepReport {
  call: FileOperationCall;
  /** Where route_after_tools sent the tool's answer. */
  route: "check_file_approval" | "assess";
  status: StepStatus;
  requestId?: string;
  approvalData?: ApprovalData;
  execution?: ExecutionResult;
  reason?: string;
}

export interface FileApprovalResult {
  sandbox: string;
  steps: StepReport[];
  messages: Message[];
}

/** The project the agent starts from (written only when missing). */
export const STARTING_FILES: Readonly<Record<string, string>> = {
  "config/settings.json": `${JSON.stringify({ player: { maxSpeed: 5, lives: 3 }, audio: { volume: 0.8 }, debug: true }, null, 2)}\n`,
  "docs/old-notes.md": "# Old notes\n\nSuperseded by NOTES.md.\n",
};

export function defaultOperations(): FileOperationCall[] {
  return [
    {
      operation: "write",
      path: "NOTES.md",
      content: "# Notes\n\nAdded a player controller; raised the speed limit.\n",
      message: "Create NOTES.md with a short session log",
    },
    {
      operation: "write",
      path: "src/PlayerController.ts",
      content: [
        "// Moves the player from keyboard input, clamped to the configured speed.",
        'import settings from "../config/settings.json";',
        "",
        "export class PlayerController {",
        "  private x = 0;",
        "  private y = 0;",
        "",
        "  update(input: { dx: number; dy: number }, dt: number): void {",
        "    const max = settings.player.maxSpeed;",
        "    this.x += Math.max(-max, Math.min(max, input.dx)) * dt;",
        "    this.y += Math.max(-max, Math.min(max, input.dy)) * dt;",
        "  }",
        "",
        "  position(): { x: number; y: number } {",
        "    return { x: this.x, y: this.y };",
        "  }",
        "}",
        "",
      ].join("\n"),
      message: "Create src/PlayerController.ts",
    },
    {
      operation: "write",
      path: "config/settings.json",
      content: `${JSON.stringify({ player: { maxSpeed: 8, lives: 3, jumpHeight: 2.5 }, audio: { volume: 0.8 }, debug: false }, null, 2)}\n`,
      message: "Raise maxSpeed to 8, add jumpHeight, turn debug off in config/settings.json",
    },
    {
      operation: "delete",
      path: "docs/old-notes.md",
      message: "Delete the superseded docs/old-notes.md",
    },
    {
      operation: "write",
      path: "../outside.txt",
      content: "should never be written\n",
      message: "Write a file next to the sandbox",
    },
  ];
}

export async function seedSandbox(dir: string): Promise<void> {
  for (const [path, content] of Object.entries(STARTING_FILES)) {
    const absolute = join(dir, path);
    if (existsSync(absolute)) continue;
    await mkdir(dirname(absolute), { recursive: true });
    await writeFile(absolute, content, "utf8");
  }
}

export async function runFileApproval(opts: FileApprovalOptions): Promise<FileApprovalResult> {
  const log = opts.log ?? quiet;
  const runId = opts.runId ?? newRunId();
  const operations = opts.operations ?? defaultOperations();
  if (!opts.operations) await seedSandbox(opts.dir);
  const steps: StepReport[] = [];
  const messages: Message[] = [];

  for (const [i, call] of operations.entries()) {
    opts.signal?.throwIfAborted();
    // tools
    const answer = fileOperation(opts.dir, call);
    // route_after_tools
    if (!answer.needs_approval) {
      const status: StepStatus = answer.error.startsWith("refused") ? "refused" : "failed";
      steps.push({ call, route: "assess", status, reason: answer.error });
      messages.push({ role: "tool", name: "file_operation", content: JSON.stringify(answer) });
      log(`${call.operation} ${call.path}: ${answer.error}`);
      continue;
    }
    log(
      `${call.operation} ${call.path}: needs approval (${answer.approval_data.diff.split("\n").length} diff lines)`,
    );
    // check_file_approval
    let outcome: ApprovalOutcome;
    try {
      outcome = await checkFileApproval(answer, {
        gate: opts.airlock,
        sandbox: opts.dir,
        requester: opts.requester ?? "file-agent",
        key: `file-approval:${runId}:${i}`,
        timeoutMs: opts.timeoutMs ?? 3_600_000,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
    } catch (err) {
      const reason = errorMessage(err);
      steps.push({ call, route: "check_file_approval", status: "failed", reason });
      messages.push({ role: "ai", content: `⚠️ File operation failed: ${reason}` });
      log(`${call.operation} ${call.path}: approval failed: ${reason}`);
      continue;
    }
    messages.push(...outcome.messages);
    // assess: the same result shape whether a person, the rule, or nobody approved.
    const status: StepStatus =
      outcome.status === "executed" && outcome.autoApproved ? "auto_executed" : outcome.status;
    const step: StepReport = {
      call,
      route: "check_file_approval",
      status,
      requestId: outcome.request.id,
      approvalData: answer.approval_data,
    };
    if (outcome.execution) step.execution = outcome.execution;
    if (outcome.reason) step.reason = outcome.reason;
    steps.push(step);
    const said = outcome.messages[outcome.messages.length - 1]?.content ?? "";
    log(
      `${call.operation} ${call.path}: ${said}${outcome.autoApproved ? ` (approved by policy: ${outcome.request.decision?.comment})` : ""}${outcome.reason && status === "cancelled" ? ` [${outcome.reason}]` : ""}`,
    );
  }
  return { sandbox: opts.dir, steps, messages };
}
