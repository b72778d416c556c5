// Overhead of an auto-approved `hitlTool` call over the bare function: scoring, redaction, args hash
// and the audit record written to the embedded SQLite store (a file in a temp folder).
// Target (issue 3): under 50 µs per call.
import { join } from "node:path";
import { createAirlock } from "../src/engine/engine.js";
import { sqliteStore } from "../src/store/sqlite.js";
import { hitlTool } from "../src/tools/hitl-tool.js";
import { tempDir } from "../test/helpers.js";
import { bounded, type Figure } from "./figures.js";

const CALLS = 20_000;
const MAX_MS = 5_000;
const WARM_UP = 1_000;

interface TaskUpdate {
  taskId: number;
  status: string;
  apiToken: string;
}

export async function benchHitlTool(): Promise<Figure[]> {
  const t = tempDir("airlock-bench-hitl-");
  const engine = await createAirlock({
    store: sqliteStore(join(t.dir, "hitl.db")),
    sweeper: false,
  });
  try {
    const bare = async (args: TaskUpdate) => ({ updated: args.taskId, status: args.status });
    // update_task_status scores 85: auto with the default thresholds, as in pattern 3.
    const wrapped = hitlTool(bare, { name: "update_task_status", airlock: engine });
    const args = (i: number): TaskUpdate => ({ taskId: i, status: "done", apiToken: "secret" });

    await bounded(WARM_UP, 2_000, async (i) => {
      await wrapped(args(i));
      await bare(args(i));
    });
    const before = (await engine.auditHead())?.seq ?? 0;
    const bareRun = await bounded(CALLS, MAX_MS, async (i) => {
      await bare(args(i));
    });
    const wrappedRun = await bounded(CALLS, MAX_MS, async (i) => {
      await wrapped(args(i));
    });
    const written = ((await engine.auditHead())?.seq ?? 0) - before;
    if (written !== wrappedRun.n) {
      throw new Error(`expected ${wrappedRun.n} audit records, found ${written}`);
    }

    const bareUs = (bareRun.ms / bareRun.n) * 1000;
    const wrappedUs = (wrappedRun.ms / wrappedRun.n) * 1000;
    return [
      { name: "hitltool.auto_overhead_us", value: wrappedUs - bareUs, unit: "us" },
      { name: "hitltool.auto_call_us", value: wrappedUs, unit: "us" },
    ];
  } finally {
    await engine.close();
    t.cleanup();
  }
}
