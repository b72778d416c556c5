// Runs pattern 4 as a LangGraph graph, offline: `npx tsx examples/adapters/langgraph/index.ts`.
// The thread parks at each gate; a scripted reviewer decides in Airlock (as a person would in the
// inbox or the CLI), and `resumeOnDecision` resumes the thread with each decision.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resumeOnDecision } from "../../../src/adapters/langgraph.js";
import {
  type Airlock,
  type ApprovalRequest,
  createAirlock,
  type DecisionInput,
  memoryStore,
} from "../../../src/index.js";
import { fileApprovalPolicy } from "../../file-approval/approval-node.js";
import type { FileOperationCall } from "../../file-approval/file-tool.js";
import { defaultOperations, seedSandbox } from "../../file-approval/index.js";
import { buildFileApprovalGraph, type GraphStep } from "./file-approval-graph.js";

export { buildFileApprovalGraph, type GraphStep } from "./file-approval-graph.js";

export type Reviewer = (request: ApprovalRequest) => DecisionInput | undefined;

export interface RunOptions {
  airlock: Airlock;
  dir: string;
  operations?: FileOperationCall[];
  /** Decides each pending gate; return nothing to leave it to someone else. */
  reviewer?: Reviewer;
  threadId?: string;
  log?: (line: string) => void;
}

/** Approves writes, and rejects deletions with a reason. */
export const defaultReviewer: Reviewer = (r) =>
  r.action === "files.delete"
    ? {
        outcome: "rejected",
        reviewer: "maya",
        comment: "keep the old notes for now",
        channel: "web",
      }
    : { outcome: "approved", reviewer: "maya", channel: "web" };

export async function runLangGraphFileApproval(opts: RunOptions): Promise<GraphStep[]> {
  const log = opts.log ?? (() => {});
  const threadId = opts.threadId ?? "file-agent-1";
  const config = { configurable: { thread_id: threadId } };
  if (!opts.operations) await seedSandbox(opts.dir);
  const graph = buildFileApprovalGraph({
    airlock: opts.airlock,
    dir: opts.dir,
    operations: opts.operations ?? defaultOperations(),
  });
  const stop = new AbortController();
  let finished!: () => void;
  const done = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const checkDone = async () => {
    if ((await graph.getState(config)).next.length === 0) finished();
  };
  const resumer = resumeOnDecision({
    graph,
    airlock: opts.airlock,
    onResumed: () => void checkDone(),
    onError: (err) => log(`resume failed: ${err instanceof Error ? err.message : String(err)}`),
  });
  // The reviewer: every new gate, as the inbox would show it.
  const reviewing = (async () => {
    const reviewer = opts.reviewer ?? defaultReviewer;
    for await (const e of opts.airlock.events({ types: ["created"], signal: stop.signal })) {
      if (!e.requestId) continue;
      const r = await opts.airlock.get(e.requestId);
      if (r.status !== "pending" || !r.action.startsWith("files.")) continue;
      log(`gate: ${r.title} (${r.preview?.split("\n").length ?? 0} diff lines)`);
      const decision = reviewer(r);
      if (decision) await opts.airlock.decide(r.id, decision);
    }
  })();
  try {
    await resumer.ready;
    await graph.invoke({ messages: [{ role: "user", content: "tidy up the project" }] }, config);
    await checkDone();
    await done;
  } finally {
    stop.abort();
    await resumer.stop();
    await reviewing;
  }
  const steps = (await graph.getState(config)).values.steps as GraphStep[];
  for (const s of steps) log(`${s.operation} ${s.path}: ${s.status} ${s.detail}`);
  return steps;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = await mkdtemp(join(tmpdir(), "airlock-langgraph-files-"));
  const airlock = await createAirlock({ store: memoryStore(), policy: fileApprovalPolicy() });
  try {
    console.log(`sandbox: ${dir}`);
    await runLangGraphFileApproval({ airlock, dir, log: (l) => console.log(l) });
  } finally {
    await airlock.close();
    await rm(dir, { recursive: true, force: true });
  }
}
