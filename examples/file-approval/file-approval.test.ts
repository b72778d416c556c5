import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Airlock } from "../../src/engine/engine.js";
import { captureLog, nextPending, tempDir, testEngine } from "../shared/testing.js";
import {
  defaultOperations,
  FILE_DELETE_ACTION,
  FILE_WRITE_ACTION,
  fileApprovalPolicy,
  fileOperation,
  runFileApproval,
  STARTING_FILES,
} from "./index.js";

let engine: Airlock;
let tmp: { dir: string; cleanup: () => void };
let sandbox: string;
beforeEach(async () => {
  engine = await testEngine(fileApprovalPolicy());
  tmp = tempDir("airlock-files-");
  sandbox = join(tmp.dir, "sandbox");
  mkdirSync(sandbox);
});
afterEach(async () => {
  await engine.close();
  tmp.cleanup();
});

const read = (path: string) => readFileSync(join(sandbox, path), "utf8");

describe("file-approval (pattern 4)", () => {
  it("approves a write, rejects a modification, auto-approves a small write, refuses an escape", async () => {
    const ops = defaultOperations();
    const { log, lines } = captureLog();
    const run = runFileApproval({ airlock: engine, dir: sandbox, log });
    const seen = new Set<string>();

    const create = await nextPending(engine, { action: FILE_WRITE_ACTION, seen });
    expect(create.title).toBe("Create src/PlayerController.ts");
    expect(create.preview).toMatch(
      /^--- \/dev\/null\n\+\+\+ b\/src\/PlayerController\.ts\n@@ -0,0 \+1,17 @@/,
    );
    expect(create.metadata.approval_data).toMatchObject({ operation: "write", exists: false });
    // Nothing is written while the gate is pending.
    expect(existsSync(join(sandbox, "src/PlayerController.ts"))).toBe(false);
    await engine.decide(create.id, { outcome: "approved", reviewer: "alice" });

    const modify = await nextPending(engine, { action: FILE_WRITE_ACTION, seen });
    expect(modify.title).toBe("Modify config/settings.json");
    expect(modify.preview).toContain("--- a/config/settings.json\n+++ b/config/settings.json\n");
    expect(modify.preview).toContain('-    "maxSpeed": 5,\n');
    expect(modify.preview).toContain('+    "maxSpeed": 8,\n');
    await engine.decide(modify.id, { outcome: "rejected", reviewer: "alice", comment: "too fast" });

    const del = await nextPending(engine, { action: FILE_DELETE_ACTION, seen });
    expect(del.preview).toContain("+++ /dev/null");
    await engine.decide(del.id, { outcome: "approved", reviewer: "alice" });
    const result = await run;

    expect(result.steps.map((s) => [s.call.path, s.route, s.status])).toEqual([
      ["NOTES.md", "check_file_approval", "auto_executed"],
      ["src/PlayerController.ts", "check_file_approval", "executed"],
      ["config/settings.json", "check_file_approval", "cancelled"],
      ["docs/old-notes.md", "check_file_approval", "executed"],
      ["../outside.txt", "assess", "refused"],
    ]);
    // Approved: written exactly as proposed. Small: written by rule, and the gate says so.
    expect(read("src/PlayerController.ts")).toBe(ops[1]?.content);
    expect(read("NOTES.md")).toBe(ops[0]?.content);
    const notes = await engine.get(result.steps[0]?.requestId ?? "");
    expect(notes.decision?.method).toBe("auto");
    expect(notes.decision?.comment).toBe("file write of at most 100 bytes");
    expect(notes.metadata.bytes).toBe(Buffer.byteLength(ops[0]?.content ?? ""));
    // Each write used its approval once: claimed for execution, and a second claim is refused.
    const written = await engine.get(result.steps[1]?.requestId ?? "");
    expect(written.executedAt).toBeGreaterThan(0);
    await expect(engine.claimExecution(written.id)).rejects.toMatchObject({ code: "conflict" });
    // Rejected: untouched, and the agent says so.
    expect(read("config/settings.json")).toBe(STARTING_FILES["config/settings.json"]);
    expect(result.messages.map((m) => m.content)).toContain(
      "❌ File operation cancelled: Raise maxSpeed to 8, add jumpHeight, turn debug off in config/settings.json",
    );
    expect(result.steps[2]?.reason).toBe("rejected by alice: too fast");
    expect(existsSync(join(sandbox, "docs/old-notes.md"))).toBe(false);
    expect(existsSync(join(tmp.dir, "outside.txt"))).toBe(false);
    expect(result.steps[4]?.reason).toBe("refused: `../outside.txt` is outside the sandbox");
    // What follows sees the tool's real result, as if no approval had been in between.
    expect(result.messages).toContainEqual({
      role: "tool",
      name: "file_operation",
      content: JSON.stringify({
        operation: "write",
        file_path: "src/PlayerController.ts",
        success: true,
        bytes_written: Buffer.byteLength(ops[1]?.content ?? ""),
      }),
    });
    expect(lines).toContain(
      "write src/PlayerController.ts: ✅ File operation completed: wrote 505 bytes to src/PlayerController.ts",
    );
  });

  it("runs the reviewer's edit, not the original, and re-checks the sandbox on edited paths", async () => {
    const run = runFileApproval({
      airlock: engine,
      dir: sandbox,
      operations: [
        { operation: "write", path: "a.txt", content: "x".repeat(300), message: "Write a.txt" },
        { operation: "write", path: "b.txt", content: "y".repeat(300), message: "Write b.txt" },
      ],
    });
    const seen = new Set<string>();
    const a = await nextPending(engine, { seen });
    await engine.decide(a.id, {
      outcome: "approved",
      reviewer: "alice",
      editedArgs: { operation: "write", file_path: "a.txt", content: "shorter\n" },
    });
    const b = await nextPending(engine, { seen });
    await engine.decide(b.id, {
      outcome: "approved",
      reviewer: "alice",
      editedArgs: { operation: "write", file_path: "../escaped.txt", content: "nope\n" },
    });
    const result = await run;
    expect(read("a.txt")).toBe("shorter\n");
    expect(result.messages.map((m) => m.content)).toContain(
      "✅ File operation completed: wrote 8 bytes to a.txt (as edited by the reviewer)",
    );
    expect(result.steps[1]?.status).toBe("failed");
    expect(result.steps[1]?.reason).toMatch(/outside the sandbox/);
    expect(existsSync(join(tmp.dir, "escaped.txt"))).toBe(false);
    expect(existsSync(join(sandbox, "b.txt"))).toBe(false);
  });

  it("a write nobody approves in time is cancelled and leaves the file untouched", async () => {
    const result = await runFileApproval({
      airlock: engine,
      dir: sandbox,
      timeoutMs: 150,
      operations: [
        { operation: "write", path: "big.txt", content: "z".repeat(500), message: "Write big.txt" },
      ],
    });
    expect(result.steps[0]).toMatchObject({
      status: "cancelled",
      reason: "timed_out by system: no decision before the deadline",
    });
    expect(result.messages).toEqual([
      { role: "ai", content: "❌ File operation cancelled: Write big.txt" },
    ]);
    expect(existsSync(join(sandbox, "big.txt"))).toBe(false);
  });

  it("the small-writes rule lives in the engine's policy: without it a person decides", async () => {
    const bare = await testEngine();
    try {
      const run = runFileApproval({
        airlock: bare,
        dir: sandbox,
        operations: [
          { operation: "write", path: "tiny.txt", content: "hi\n", message: "Write tiny.txt" },
        ],
      });
      const pending = await nextPending(bare, { action: FILE_WRITE_ACTION });
      expect(existsSync(join(sandbox, "tiny.txt"))).toBe(false);
      await bare.decide(pending.id, { outcome: "approved", reviewer: "alice" });
      expect((await run).steps[0]?.status).toBe("executed");
      expect(read("tiny.txt")).toBe("hi\n");
    } finally {
      await bare.close();
    }
  });

  it("file_operation refuses absolute paths, climbing out, and links that lead outside", () => {
    const outside = join(tmp.dir, "elsewhere");
    mkdirSync(outside);
    symlinkSync(outside, join(sandbox, "link"));
    const call = (path: string) =>
      fileOperation(sandbox, { operation: "write", path, content: "x", message: "m" });
    expect(call(join(outside, "f.txt"))).toEqual({
      needs_approval: false,
      error: expect.stringMatching(/is absolute/),
    });
    expect(call("sub/../../f.txt")).toEqual({
      needs_approval: false,
      error: expect.stringMatching(/outside the sandbox/),
    });
    expect(call("link/f.txt")).toEqual({
      needs_approval: false,
      error: expect.stringMatching(/through a link/),
    });
    expect(call("ok/f.txt")).toMatchObject({
      needs_approval: true,
      pending_operation: { file_path: "ok/f.txt" },
    });
  });
});
