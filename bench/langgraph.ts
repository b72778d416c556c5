// Airlock's cost inside a LangGraph graph: one node gated by `airlockGate` (park → approve in process →
// `resumeThread` → the tool runs once through `gate.run`), next to the same graph with a bare
// `interrupt()` resumed by `Command({ resume })`, on the same checkpointer (MemorySaver), measured in
// the same run. Airlock here is the embedded SQLite store in a temp folder. Issue 14's target: the gated
// round trip costs at most 25 % more than the framework's own.
import { join } from "node:path";
import {
  Annotation,
  Command,
  END,
  interrupt,
  MemorySaver,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { airlockGate, resumeThread } from "../src/adapters/langgraph.js";
import { type Airlock, createAirlock } from "../src/index.js";
import { sqliteStore } from "../src/store/sqlite-entry.js";
import { tempDir } from "../test/helpers.js";
import { bounded, type Figure } from "./figures.js";

const ROUNDS = 2_000;
const MAX_MS = 5_000;
const WARM_UP = 100;

const State = Annotation.Root({ done: Annotation<number>() });

function gatedGraph(airlock: Airlock) {
  return new StateGraph(State)
    .addNode("work", async () => {
      const gate = await airlockGate(airlock, {
        action: "bench.write",
        title: "bench",
        args: { path: "a.txt" },
        requester: "agent",
      });
      const ran = await gate.run(() => 1);
      return { done: ran.ok ? ran.value : 0 };
    })
    .addEdge(START, "work")
    .addEdge("work", END)
    .compile({ checkpointer: new MemorySaver() });
}

function bareGraph() {
  return new StateGraph(State)
    .addNode("work", () => {
      const answer = interrupt({ title: "bench", args: { path: "a.txt" } }) as string;
      return { done: answer === "approve" ? 1 : 0 };
    })
    .addEdge(START, "work")
    .addEdge("work", END)
    .compile({ checkpointer: new MemorySaver() });
}

export async function benchLangGraph(): Promise<Figure[]> {
  const t = tempDir("airlock-bench-langgraph-");
  const airlock = await createAirlock({
    store: sqliteStore(join(t.dir, "langgraph.db")),
    sweeper: false,
  });
  try {
    const gated = gatedGraph(airlock);
    const bare = bareGraph();
    let thread = 0;

    const gateRound = async () => {
      const config = { configurable: { thread_id: `g${thread++}` } };
      const out = (await gated.invoke({}, config)) as {
        __interrupt__?: Array<{ value: { airlock: { requestId: string } } }>;
      };
      const id = out.__interrupt__?.[0]?.value.airlock.requestId;
      if (!id) throw new Error("bench: the gated graph did not park");
      await airlock.decide(id, { outcome: "approved", reviewer: "alice" });
      const resumed = await resumeThread({
        graph: gated,
        airlock,
        threadId: config.configurable.thread_id,
      });
      if (!resumed.resumed || (resumed.output as { done?: number }).done !== 1) {
        throw new Error("bench: the gated graph did not run the tool after the approval");
      }
    };
    const bareRound = async () => {
      const config = { configurable: { thread_id: `b${thread++}` } };
      const out = (await bare.invoke({}, config)) as { __interrupt__?: unknown[] };
      if (!out.__interrupt__?.length) throw new Error("bench: the bare graph did not park");
      const done = (await bare.invoke(new Command({ resume: "approve" }), config)) as {
        done?: number;
      };
      if (done.done !== 1) throw new Error("bench: the bare graph did not finish");
    };

    await bounded(WARM_UP, 2_000, async () => {
      await bareRound();
      await gateRound();
    });
    // Interleaved halves, so drift of the machine weighs on both the same.
    let gateN = 0;
    let gateMs = 0;
    let bareN = 0;
    let bareMs = 0;
    for (let half = 0; half < 2; half++) {
      const b = await bounded(ROUNDS / 2, MAX_MS / 2, bareRound);
      bareN += b.n;
      bareMs += b.ms;
      const g = await bounded(ROUNDS / 2, MAX_MS / 2, gateRound);
      gateN += g.n;
      gateMs += g.ms;
    }
    const gatePerS = (gateN / gateMs) * 1000;
    const barePerS = (bareN / bareMs) * 1000;
    return [
      { name: "langgraph.gate_roundtrips_per_s", value: gatePerS, unit: "1/s" },
      { name: "langgraph.interrupt_roundtrips_per_s", value: barePerS, unit: "1/s" },
      {
        name: "langgraph.gate_overhead_pct",
        value: (barePerS / gatePerS - 1) * 100,
        unit: "%",
      },
    ];
  } finally {
    await airlock.close();
    t.cleanup();
  }
}
