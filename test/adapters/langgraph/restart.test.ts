// A restart: the process that parked the thread is killed with SIGKILL; after a decision taken
// elsewhere, a new process (this one) resumes the thread from the durable checkpoint and Airlock's
// SQLite file. The tool runs once, the model's first call is not repeated, and the code before the
// gate ran once in each process (LangGraph re-runs the gated node on resume; Airlock adds nothing).
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { resumeOnDecision } from "../../../src/adapters/langgraph.js";
import { createAirlock } from "../../../src/index.js";
import { sqliteStore } from "../../../src/store/sqlite-entry.js";
import { tempDir } from "../../helpers.js";
import { FileSaver } from "./file-saver.js";
import { buildGraph, count, threadConfig, toolArgs } from "./fixture.js";

const child = fileURLToPath(new URL("./park-child.ts", import.meta.url));
let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir("airlock-langgraph-restart-"));
});
afterEach(() => cleanup());

/** Starts the child, waits for the parked request id, then kills it with SIGKILL. */
async function parkInChildAndKill(): Promise<string> {
  const proc = spawn(process.execPath, ["--import", "tsx", child, dir], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  proc.stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    proc.on("exit", (_code, signal) => resolve(signal)),
  );
  const id = await new Promise<string>((resolve, reject) => {
    proc.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve((JSON.parse(line) as { parked: string }).parked);
    });
    proc.on("exit", () => reject(new Error(`the child exited before parking: ${err}`)));
  });
  proc.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");
  return id;
}

it("a thread parked by a process killed with SIGKILL is resumed by another after the decision", async () => {
  const id = await parkInChildAndKill();
  const log = join(dir, "effects.log");
  expect(count(log, "model")).toBe(1);
  expect(count(log, "before_gate")).toBe(1);

  const airlock = await createAirlock({ store: sqliteStore(join(dir, "airlock.db")) });
  try {
    expect((await airlock.get(id)).status).toBe("pending");
    await airlock.decide(id, { outcome: "approved", reviewer: "alice", channel: "cli" });
    const { graph } = buildGraph({
      airlock,
      checkpointer: new FileSaver(join(dir, "checkpoints.json")),
      log,
    });
    const done = new Promise<void>((resolve) => {
      const resumer = resumeOnDecision({
        graph,
        airlock,
        onResumed: () => void resumer.stop().then(resolve),
      });
    });
    await done;
    const state = await graph.getState(threadConfig("restart"));
    expect(state.next).toEqual([]);
    const messages = state.values.messages as Array<{ content: unknown }>;
    expect(messages[messages.length - 1]?.content).toBe("I read: wrote notes.md");
    expect(toolArgs(log)).toEqual([{ path: "notes.md", content: "# Notes\n" }]);
    expect(count(log, "model")).toBe(2);
    expect(count(log, "before_gate")).toBe(2);
    // One gate for the whole run: the new process found the request by its key.
    expect((await airlock.list({ action: "files.write" })).items).toHaveLength(1);
  } finally {
    await airlock.close();
  }
}, 60_000);
