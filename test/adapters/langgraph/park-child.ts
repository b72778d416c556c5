// The process the restart test kills: it runs the fixture graph on a SQLite Airlock and a file
// checkpointer until the graph parks at the gate, prints the request id, and waits to be killed.
import { join } from "node:path";
import { createAirlock } from "../../../src/index.js";
import { sqliteStore } from "../../../src/store/sqlite-entry.js";
import { FileSaver } from "./file-saver.js";
import { buildGraph, threadConfig } from "./fixture.js";

const dir = process.argv[2];
if (!dir) throw new Error("usage: park-child.ts DIR");
const airlock = await createAirlock({
  store: sqliteStore(join(dir, "airlock.db")),
  sweeper: false,
});
const { graph } = buildGraph({
  airlock,
  checkpointer: new FileSaver(join(dir, "checkpoints.json")),
  log: join(dir, "effects.log"),
});
const out = (await graph.invoke(
  { messages: [{ role: "user", content: "write notes" }] },
  threadConfig("restart"),
)) as { __interrupt__?: Array<{ value: { airlock: { requestId: string } } }> };
const requestId = out.__interrupt__?.[0]?.value.airlock.requestId;
process.stdout.write(`${JSON.stringify({ parked: requestId })}\n`);
setInterval(() => {}, 60_000);
