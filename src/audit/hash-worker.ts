// A worker thread of verification (hash-pool.ts): checks the hashes of batches of events with the
// same rule as the chain check (createHashMatch), and answers with the first event that fails.
import { parentPort, workerData } from "node:worker_threads";
import type { AuditPageEvent } from "../core/store.js";
import { createHashMatch } from "./chain-check.js";
import type { EventBatch, HashPoolSetup, WorkerAnswer } from "./hash-pool.js";

const setup = workerData as HashPoolSetup;
const match = createHashMatch(
  setup.key ? Buffer.from(setup.key) : undefined,
  setup.keyedFrom ?? undefined,
);

parentPort?.on("message", (b: EventBatch) => {
  // One event object, refilled for each row: the batch comes as columns (cheaper to send).
  const e: Extract<AuditPageEvent, { dataJson: string }> = {
    seq: 0,
    type: "created",
    actor: "",
    at: 0,
    dataJson: "",
    prevHash: "",
    hash: "",
  };
  let answer: WorkerAnswer = { id: b.id };
  for (let i = 0; i < b.seq.length; i++) {
    e.seq = b.seq[i] as number;
    e.type = b.type[i] as typeof e.type;
    e.actor = b.actor[i] as string;
    e.at = b.at[i] as number;
    e.dataJson = b.dataJson[i] as string;
    e.prevHash = b.prevHash[i] as string;
    e.hash = b.hash[i] as string;
    const rid = b.requestId[i];
    if (rid === null || rid === undefined) delete e.requestId;
    else e.requestId = rid;
    const verdict = match(e);
    if (verdict !== "ok") {
      answer = { id: b.id, bad: { seq: e.seq, verdict } };
      break;
    }
  }
  parentPort?.postMessage(answer);
});
