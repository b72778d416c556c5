// Airlock's cost inside a LangGraph graph: one node gated by `airlockGate` (park → approve in process →
// `Command({ resume })` → the tool runs once through `gate.run`), next to the same graph with a bare
// `interrupt()` resumed the same way, on the same checkpointer (MemorySaver), measured in the same
// run, interleaved. `langgraph.resumer_roundtrips_per_s` resumes with `resumeThread` instead (it reads
// the thread's state to find the interrupt and claims a resume ticket: two more writes). Airlock here is the embedded SQLite store in a temp folder. Issue 14's target: the gated
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
import { type BenchOptions, bounded, type Figure } from "./figures.js";

/** Round trips of each kind at most, their bound in time, and the warm-up. */
const FULL = { rounds: 2_000, maxMs: 5_000, warmUp: 100 };
/** `--quick` (the guard's run): the same interleaved quarters, shorter. */
const QUICK = { rounds: 800, maxMs: 2_000, warmUp: 50 };

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

export async function benchLangGraph(options: BenchOptions = {}): Promise<Figure[]> {
  const s = options.quick ? QUICK : FULL;
  const t = tempDir("airlock-bench-langgraph-");
  const airlock = await createAirlock({
    store: sqliteStore(join(t.dir, "langgraph.db")),
    sweeper: false,
  });
  try {
    const gated = gatedGraph(airlock);
    const bare = bareGraph();
    let thread = 0;

    /** Park, approve in process, resume the way the bare graph is resumed (`Command`), run once. */
    const gateRound = async () => {
      const config = { configurable: { thread_id: `g${thread++}` } };
      const id = await parkGated(config);
      await airlock.decide(id, { outcome: "approved", reviewer: "alice" });
      const done = (await gated.invoke(
        new Command({ resume: { airlock: { requestId: id } } }),
        config,
      )) as {
        done?: number;
      };
      if (done.done !== 1) throw new Error("bench: the gated graph did not run the tool");
    };
    /** The same, resumed by `resumeThread`: finds the parked interrupt and claims a resume ticket. */
    const resumerRound = async () => {
      const config = { configurable: { thread_id: `r${thread++}` } };
      const id = await parkGated(config);
      await airlock.decide(id, { outcome: "approved", reviewer: "alice" });
      const resumed = await resumeThread({
        graph: gated,
        airlock,
        threadId: config.configurable.thread_id,
      });
      if (!resumed.resumed || (resumed.output as { done?: number }).done !== 1) {
        throw new Error("bench: resumeThread did not run the tool after the approval");
      }
    };
    const parkGated = async (config: { configurable: { thread_id: string } }) => {
      const out = (await gated.invoke({}, config)) as {
        __interrupt__?: Array<{ value: { airlock: { requestId: string } } }>;
      };
      const id = out.__interrupt__?.[0]?.value.airlock.requestId;
      if (!id) throw new Error("bench: the gated graph did not park");
      return id;
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

    await bounded(s.warmUp, 3_000, async () => {
      await bareRound();
      await gateRound();
      await resumerRound();
    });
    // Interleaved quarters, so drift of the machine weighs on each the same.
    const totals = { bare: { n: 0, ms: 0 }, gate: { n: 0, ms: 0 }, resumer: { n: 0, ms: 0 } };
    for (let quarter = 0; quarter < 4; quarter++) {
      for (const [name, round] of [
        ["bare", bareRound],
        ["gate", gateRound],
        ["resumer", resumerRound],
      ] as const) {
        const r = await bounded(s.rounds / 4, s.maxMs / 4, round);
        totals[name].n += r.n;
        totals[name].ms += r.ms;
      }
    }
    const perS = (t: { n: number; ms: number }) => (t.n / t.ms) * 1000;
    const barePerS = perS(totals.bare);
    const gatePerS = perS(totals.gate);
    return [
      { name: "langgraph.gate_roundtrips_per_s", value: gatePerS, unit: "1/s" },
      { name: "langgraph.interrupt_roundtrips_per_s", value: barePerS, unit: "1/s" },
      { name: "langgraph.gate_overhead_pct", value: (barePerS / gatePerS - 1) * 100, unit: "%" },
      // The same as a ratio of times: a gated round trip over a bare interrupt()'s (the guard's).
      { name: "langgraph.gate_to_interrupt_time_ratio", value: barePerS / gatePerS, unit: "ratio" },
      {
        name: "langgraph.resumer_roundtrips_per_s",
        value: perS(totals.resumer),
        unit: "1/s",
      },
    ];
  } finally {
    await airlock.close();
    t.cleanup();
  }
}
