import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createAirlock } from "../../../src/index.js";
import { sqliteStore } from "../../../src/store/sqlite-entry.js";
import { scriptArgs, tempDir } from "../../helpers.js";

const CHILD = fileURLToPath(new URL("./fixtures/child.ts", import.meta.url));
const children: ChildProcess[] = [];
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const c of cleanups.splice(0)) c();
});

/** Starts the child and resolves with its first stdout line that parses as JSON. */
function start(args: string[]): { child: ChildProcess; line: Promise<Record<string, unknown>> } {
  const child = spawn(process.execPath, [...scriptArgs(CHILD), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  let err = "";
  const line = new Promise<Record<string, unknown>>((resolve, reject) => {
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const first = out.split("\n").find((l) => l.startsWith("{"));
      if (first && out.includes("\n")) resolve(JSON.parse(first));
    });
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.on("exit", (code) =>
      reject(new Error(`child exited (${code}) before answering:\n${err}`)),
    );
  });
  return { child, line };
}

function executions(log: string): string[] {
  return existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
}

describe("airlock/openai-agents across processes", () => {
  it("a run parked by a process killed with SIGKILL resumes in a new process after the decision, once", async () => {
    const { dir, cleanup } = tempDir("airlock-oa-");
    cleanups.push(cleanup);
    const db = join(dir, "airlock.db");
    const log = join(dir, "sent.log");

    const parker = start(["park", db, log]);
    const { parked } = (await parker.line) as { parked: string[] };
    expect(parked).toHaveLength(1);
    const id = parked[0] as string;
    parker.child.kill("SIGKILL");
    await new Promise((r) => parker.child.once("exit", r));
    expect(executions(log)).toEqual([]);

    // The decision, taken by another process (here: the test) while nobody runs the agent.
    const airlock = await createAirlock({ store: sqliteStore(db), sweeper: false });
    try {
      expect((await airlock.get(id)).status).toBe("pending");
      await airlock.decide(id, { outcome: "approved", reviewer: "alice", channel: "cli" });
    } finally {
      await airlock.close();
    }

    const resumer = start(["resume", db, log, id]);
    expect(await resumer.line).toEqual({
      status: "resumed",
      finalOutput: "Done. sent to partner@elsewhere.org",
    });
    expect(executions(log)).toEqual(["partner@elsewhere.org"]);

    // A second resume, in yet another process, runs nothing.
    const again = start(["resume", db, log, id]);
    expect((await again.line).status).toBe("already_resumed");
    expect(executions(log)).toEqual(["partner@elsewhere.org"]);
  });
});
