// Side by side with a peer: the same human-approval round trip in LangGraph.js persisted by its own
// SQLite checkpointer (`@langchain/langgraph-checkpoint-sqlite`: a graph whose node calls
// `interrupt()`, run on a new thread until it parks, then resumed with `Command({ resume })` to its
// end), against Airlock's round trip on its SQLite store (create → decide → waiter resumed →
// claimExecution, round-trip.ts), both on files in a temp folder, interleaved in the same run.
// `peer.langgraph_ratio` = Airlock's rate / LangGraph's. The checkpointer is an optional
// devDependency: without it this suite says so on stderr and reports nothing.
import { join } from "node:path";
import { Annotation, Command, END, interrupt, START, StateGraph } from "@langchain/langgraph";
import { createAirlock } from "../src/engine/engine.js";
import { sqliteStore } from "../src/store/sqlite.js";
import { tempDir } from "../test/helpers.js";
import { type BenchOptions, bounded, type Figure } from "./figures.js";
import { gateRoundTrip } from "./round-trip.js";

const BLOCKS = 4;
/** Round trips of each side at most, their bound in time, and each side's warm-up. */
const FULL = { rounds: 2_000, maxMs: 8_000, warmUp: 100 };
/** `--quick` (the guard's run): the same interleaved blocks, shorter. */
const QUICK = { rounds: 800, maxMs: 3_000, warmUp: 50 };

const State = Annotation.Root({ done: Annotation<number>() });

interface Saver {
  put: (...args: never[]) => Promise<unknown>;
  putWrites: (...args: never[]) => Promise<unknown>;
}

export async function benchPeer(options: BenchOptions = {}): Promise<Figure[]> {
  const s = options.quick ? QUICK : FULL;
  let SqliteSaver: { fromConnString(path: string): Saver };
  try {
    ({ SqliteSaver } = (await import("@langchain/langgraph-checkpoint-sqlite")) as unknown as {
      SqliteSaver: { fromConnString(path: string): Saver };
    });
  } catch {
    process.stderr.write(
      "peer: @langchain/langgraph-checkpoint-sqlite is not installed; skipping peer.langgraph_ratio\n",
    );
    return [];
  }
  const t = tempDir("airlock-bench-peer-");
  const airlock = await createAirlock({ store: sqliteStore(join(t.dir, "airlock.db")) });
  try {
    const saver = SqliteSaver.fromConnString(join(t.dir, "langgraph.db"));
    // Counted, to say what a LangGraph round trip writes.
    const writes = { put: 0, putWrites: 0 };
    for (const method of ["put", "putWrites"] as const) {
      const original = saver[method].bind(saver) as (...args: unknown[]) => Promise<unknown>;
      (saver as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        writes[method]++;
        return original(...args);
      };
    }
    const graph = new StateGraph(State)
      .addNode("work", () => {
        const answer = interrupt({ title: "bench", args: { path: "a.txt" } }) as string;
        return { done: answer === "approve" ? 1 : 0 };
      })
      .addEdge(START, "work")
      .addEdge("work", END)
      // The saver is the package's own class; its type comes from its own copy of the checkpoint base.
      .compile({ checkpointer: saver as never });
    let thread = 0;
    const langgraphRound = async () => {
      const config = { configurable: { thread_id: `t${thread++}` } };
      const parked = (await graph.invoke({}, config)) as { __interrupt__?: unknown[] };
      if (!parked.__interrupt__?.length) throw new Error("peer: the graph did not park");
      const done = (await graph.invoke(new Command({ resume: "approve" }), config)) as {
        done?: number;
      };
      if (done.done !== 1) throw new Error("peer: the graph did not finish approved");
    };
    const airlockRound = async () => {
      await gateRoundTrip(airlock);
    };

    await bounded(s.warmUp, 3_000, langgraphRound);
    await bounded(s.warmUp, 3_000, airlockRound);
    writes.put = 0;
    writes.putWrites = 0;
    const totals = { langgraph: { n: 0, ms: 0 }, airlock: { n: 0, ms: 0 } };
    for (let block = 0; block < BLOCKS; block++) {
      for (const [name, round] of [
        ["langgraph", langgraphRound],
        ["airlock", airlockRound],
      ] as const) {
        const r = await bounded(s.rounds / BLOCKS, s.maxMs / BLOCKS, round);
        totals[name].n += r.n;
        totals[name].ms += r.ms;
      }
    }
    const perS = (x: { n: number; ms: number }) => (x.n / x.ms) * 1000;
    const lg = perS(totals.langgraph);
    const al = perS(totals.airlock);
    return [
      { name: "peer.langgraph_roundtrips_per_s", value: lg, unit: "1/s" },
      { name: "peer.airlock_roundtrips_per_s", value: al, unit: "1/s" },
      { name: "peer.langgraph_ratio", value: al / lg, unit: "ratio" },
      {
        name: "peer.langgraph_checkpoint_writes_per_roundtrip",
        value: (writes.put + writes.putWrites) / Math.max(1, totals.langgraph.n),
        unit: "writes",
      },
    ];
  } finally {
    await airlock.close();
    t.cleanup();
  }
}
