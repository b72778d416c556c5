// The terminal runner, as a user runs it: a child process with the answers piped into stdin.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { scriptArgs } from "../test/helpers.js";

const RUNNER = fileURLToPath(new URL("./run.ts", import.meta.url));

function runner(
  args: string[],
  stdin: string,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...scriptArgs(RUNNER), ...args], {
      env: { ...process.env, AIRLOCK_LLM_URL: "" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out, err }));
    child.stdin.end(stdin);
  });
}

describe("examples/run.ts", () => {
  it("shows the gate in the text format and records the typed reply", async () => {
    const { code, out } = await runner(["research-reflection"], "SELECT 2\n");
    expect(code).toBe(0);
    expect(out).toContain("Proposed Additional Research (3 queries):");
    expect(out).toContain("Decision recorded: approved (select)");
    expect(out).toMatch(
      /"searches_performed": \[\n\s+"seasonal performance homes cold regions achieve measured data"\n\s+\]/,
    );
  });

  it("drives robot-plan through the operator console", async () => {
    const { code, out } = await runner(["robot-plan"], "r\nskip position 2\na\n");
    expect(code).toBe(0);
    expect(out).toContain("PLAN REVIEW REQUIRED");
    expect(out).toContain("[robot-plan] plan (revision 1): tack_weld at Pos_1, 9 steps");
    expect(out).toContain('"route": "verify"');
  });

  it("answers research-two-phase's clarifying questions, then approves the plan made for them", async () => {
    const { code, out } = await runner(
      ["research-two-phase"],
      'ANSWER {"answer_1": 7}\nANSWER {"answer_1": "reliability and backups"}\nAPPROVE ALL\n',
    );
    expect(code).toBe(0);
    expect(out).toContain('Or answer instead of deciding: ANSWER {"answer_1": "..."}');
    // A response that does not fit the schema is refused with the reason, and asked again.
    expect(out).toContain("answer_1: expected a string, got number 7");
    expect(out).toContain("Decision recorded: responded (respond)");
    expect(out).toContain("planning again with the answers");
    expect(out).toContain("Decision recorded: approved (approve_all)");
    expect(out).toContain("status: completed");
    expect(out).toContain("> **Scope, from the reviewer's answers:**");
    expect(out).toContain("**reliability and backups**");
  });

  it("names the examples when the name is unknown", async () => {
    const { code, err } = await runner(["nope"], "");
    expect(code).toBe(2);
    expect(err).toContain(
      "research-reflection, robot-plan, hitl-tools, file-approval, research-two-phase",
    );
  });
});
