// The agent's `file_operation` tool. It never writes by itself: it answers `needs_approval` with what a
// human needs to see (operation, path, message, a preview and a unified diff) and the complete pending
// operation, which runs only after approval (see approval-node.ts).
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { createTwoFilesPatch } from "diff";
import { resolveInSandbox, SandboxError } from "./sandbox.js";

export type FileOperationKind = "write" | "delete";

export interface FileOperationCall {
  operation: FileOperationKind;
  /** Relative to the sandbox. */
  path: string;
  /** The whole new content, for writes. */
  content?: string;
  /** What the change is for, in the agent's words. */
  message: string;
}

/** Everything needed to run the operation later: this is what gets approved (and hashed). */
export interface PendingOperation {
  [key: string]: unknown;
  operation: FileOperationKind;
  file_path: string;
  content?: string;
}

export interface ApprovalData {
  operation: FileOperationKind;
  file_path: string;
  message: string;
  /** The first lines of the new content (or of the file being deleted). */
  preview: string;
  /** Unified diff from the file as it is now to what the operation leaves. */
  diff: string;
  /** Whether the file exists now (a write then modifies it). */
  exists: boolean;
}

export type FileToolResult =
  | { needs_approval: true; approval_data: ApprovalData; pending_operation: PendingOperation }
  | { needs_approval: false; error: string };

export interface ExecutionResult {
  success: boolean;
  operation: FileOperationKind;
  file_path: string;
  bytes_written?: number;
  error?: string;
}

const PREVIEW_LINES = 20;

export function fileOperation(sandbox: string, call: FileOperationCall): FileToolResult {
  try {
    const absolute = resolveInSandbox(sandbox, call.path);
    const exists = existsSync(absolute);
    const before = exists ? readFileSync(absolute, "utf8") : "";
    if (call.operation === "delete" && !exists) {
      return { needs_approval: false, error: `\`${call.path}\` does not exist; nothing to delete` };
    }
    if (call.operation === "write" && typeof call.content !== "string") {
      return { needs_approval: false, error: "a write needs `content`" };
    }
    const after = call.operation === "write" ? (call.content ?? "") : "";
    const patch = createTwoFilesPatch(
      exists ? `a/${call.path}` : "/dev/null",
      call.operation === "delete" ? "/dev/null" : `b/${call.path}`,
      before,
      after,
      undefined,
      undefined,
      { context: 3 },
    );
    // jsdiff starts with a row of "=" that is no part of the unified format.
    const diff = patch.replace(/^=+\n/, "");
    const shown = call.operation === "write" ? after : before;
    const pending: PendingOperation = { operation: call.operation, file_path: call.path };
    if (call.operation === "write") pending.content = after;
    return {
      needs_approval: true,
      approval_data: {
        operation: call.operation,
        file_path: call.path,
        message: call.message,
        preview: shown.split("\n").slice(0, PREVIEW_LINES).join("\n"),
        diff,
        exists,
      },
      pending_operation: pending,
    };
  } catch (err) {
    if (err instanceof SandboxError) {
      return { needs_approval: false, error: `refused: ${err.message}` };
    }
    throw err;
  }
}

/** Runs an approved operation. The path is checked against the sandbox again: what was approved may
 * have been edited by the reviewer. */
export async function executeFileOperation(
  sandbox: string,
  op: PendingOperation,
): Promise<ExecutionResult> {
  const base = { operation: op.operation, file_path: op.file_path };
  try {
    const absolute = resolveInSandbox(sandbox, op.file_path);
    if (op.operation === "delete") {
      await rm(absolute);
      return { ...base, success: true };
    }
    if (typeof op.content !== "string") {
      return { ...base, success: false, error: "a write needs `content`" };
    }
    await mkdir(dirname(absolute), { recursive: true });
    await writeFile(absolute, op.content, "utf8");
    return { ...base, success: true, bytes_written: Buffer.byteLength(op.content, "utf8") };
  } catch (err) {
    return { ...base, success: false, error: err instanceof Error ? err.message : String(err) };
  }
}

/** Reads approved args back as an operation, refusing anything of the wrong shape. */
export function asPendingOperation(args: Record<string, unknown>): PendingOperation | undefined {
  const { operation, file_path, content } = args;
  if (operation !== "write" && operation !== "delete") return undefined;
  if (typeof file_path !== "string") return undefined;
  if (content !== undefined && typeof content !== "string") return undefined;
  const op: PendingOperation = { operation, file_path };
  if (typeof content === "string") op.content = content;
  return op;
}
