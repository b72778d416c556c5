// airlock/langgraph against the real @langchain/langgraph with a fake model: approve, reject (the
// model reads the reviewer's words), edit, timeout (the declared default), a forged resume, double
// resumes (the tool runs once, the rest of the graph once), and how often the code before the gate
// ran (LangGraph re-runs the gated node once per resume; Airlock adds no run of its own).
import { join } from "node:path";
import {
  Command,
  END,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  airlockGate,
  isGateInterrupt,
  resumeOnDecision,
  resumeThread,
} from "../../../src/adapters/langgraph.js";
import { type Airlock, createAirlock, memoryStore } from "../../../src/index.js";
import { tempDir } from "../../helpers.js";
import { buildGraph, count, type FixtureOptions, threadConfig, toolArgs } from "./fixture.js";

let airlock: Airlock;
let dir: string;
let cleanup: () => void;
let log: string;

beforeEach(async () => {
  airlock = await createAirlock({ store: memoryStore() });
  ({ dir, cleanup } = tempDir("airlock-langgraph-"));
  log = join(dir, "effects.log");
});
afterEach(async () => {
  await airlock.close();
  cleanup();
});

function setup(extra: Partial<FixtureOptions> = {}) {
  return buildGraph({ airlock, checkpointer: new MemorySaver(), log, ...extra });
}

/** Runs the graph until it parks at the gate; returns the pending request's id. */
async function park(graph: ReturnType<typeof setup>["graph"], thread: string): Promise<string> {
  const out = (await graph.invoke(
    { messages: [{ role: "user", content: "write notes" }] },
    threadConfig(thread),
  )) as {
    __interrupt__?: Array<{ value: unknown }>;
  };
  const value = out.__interrupt__?.[0]?.value;
  if (!isGateInterrupt(value))
    throw new Error(`the graph did not park at the gate: ${JSON.stringify(out)}`);
  return value.airlock.requestId;
}

function lastMessage(state: { values: { messages: Array<{ content: unknown }> } }): string {
  const m = state.values.messages;
  return String(m[m.length - 1]?.content);
}

describe("airlockGate", () => {
  it("parks the thread with the request id, and an approval runs the tool once", async () => {
    const { graph } = setup();
    const id = await park(graph, "t1");
    const pending = await airlock.get(id);
    expect(pending.status).toBe("pending");
    expect(pending.metadata.langgraph).toMatchObject({ threadId: "t1", position: 0 });
    expect(count(log, "tool")).toBe(0);

    await airlock.decide(id, { outcome: "approved", reviewer: "alice", channel: "web" });
    const result = await resumeThread({ graph, airlock, threadId: "t1" });
    expect(result.resumed).toBe(true);

    const state = await graph.getState(threadConfig("t1"));
    expect(state.next).toEqual([]);
    expect(lastMessage(state)).toBe("I read: wrote notes.md");
    expect(toolArgs(log)).toEqual([{ path: "notes.md", content: "# Notes\n" }]);
    expect((await airlock.get(id)).executedAt).toBeDefined();
    // One gate: the re-run found the request by its key instead of opening a second one.
    expect((await airlock.list({ action: "files.write" })).items).toHaveLength(1);
  });

  it("a rejection reaches the model with the reviewer's reason, and nothing runs", async () => {
    const { graph } = setup();
    const id = await park(graph, "t2");
    await airlock.decide(id, {
      outcome: "rejected",
      reviewer: "bob",
      comment: "not in the docs folder",
    });
    await resumeThread({ graph, airlock, threadId: "t2" });
    const state = await graph.getState(threadConfig("t2"));
    expect(lastMessage(state)).toBe(
      "I read: not approved: Write notes.md: rejected by bob: not in the docs folder",
    );
    expect(count(log, "tool")).toBe(0);
  });

  it("an edit runs the tool with the edited args", async () => {
    const { graph } = setup();
    const id = await park(graph, "t3");
    const edited = { path: "docs/notes.md", content: "# Notes (edited)\n" };
    await airlock.decide(id, {
      outcome: "approved",
      method: "edit",
      editedArgs: edited,
      reviewer: "carol",
    });
    await resumeThread({ graph, airlock, threadId: "t3" });
    expect(toolArgs(log)).toEqual([edited]);
    expect(lastMessage(await graph.getState(threadConfig("t3")))).toBe(
      "I read: wrote docs/notes.md",
    );
  });

  it("a timeout resumes the thread with the declared default (reject, or approve)", async () => {
    const rejecting = setup({ timeoutMs: 30 });
    const resumer = resumeOnDecision({ graph: rejecting.graph, airlock });
    const resumed = new Promise<void>((resolve) => {
      const check = setInterval(async () => {
        const s = await rejecting.graph.getState(threadConfig("t4"));
        if (s.next.length === 0 && s.values.messages?.length) {
          clearInterval(check);
          resolve();
        }
      }, 10);
    });
    const id = await park(rejecting.graph, "t4");
    await resumed;
    await resumer.stop();
    expect((await airlock.get(id)).status).toBe("timed_out");
    expect(lastMessage(await rejecting.graph.getState(threadConfig("t4")))).toBe(
      "I read: not approved: Write notes.md: timed out: no decision before the deadline",
    );
    expect(count(log, "tool")).toBe(0);

    const approving = setup({ timeoutMs: 30, onTimeout: "approve" });
    const id2 = await park(approving.graph, "t5");
    await airlock.waitFor(id2);
    await resumeThread({ graph: approving.graph, airlock, threadId: "t5" });
    expect((await airlock.get(id2)).decision?.method).toBe("timeout");
    expect(toolArgs(log)).toEqual([{ path: "notes.md", content: "# Notes\n" }]);
  });

  it("a forged resume approves nothing: the gate re-reads Airlock and parks again", async () => {
    const { graph } = setup();
    const id = await park(graph, "t6");
    const out = (await graph.invoke(
      new Command({ resume: { airlock: { requestId: id }, approved: true } }),
      threadConfig("t6"),
    )) as { __interrupt__?: unknown[] };
    expect(out.__interrupt__).toHaveLength(1);
    expect(count(log, "tool")).toBe(0);
    expect((await airlock.get(id)).status).toBe("pending");
    // Still parked on the same request: the real decision resumes it.
    await airlock.decide(id, { outcome: "approved", reviewer: "alice" });
    expect((await resumeThread({ graph, airlock, threadId: "t6" })).resumed).toBe(true);
    expect(count(log, "tool")).toBe(1);
  });

  it("two resumers and a manual resume: the tool and the rest of the graph run once", async () => {
    const { graph } = setup();
    const id = await park(graph, "t7");
    const resumed: string[] = [];
    const takes = vi.spyOn(airlock, "takeTicket");
    const finishes = vi.spyOn(airlock, "finishTicket");
    const a = resumeOnDecision({ graph, airlock, by: "a", onResumed: () => resumed.push("a") });
    const b = resumeOnDecision({ graph, airlock, by: "b", onResumed: () => resumed.push("b") });
    await Promise.all([a.ready, b.ready]);
    await airlock.decide(id, { outcome: "approved", reviewer: "alice" });
    const manual = await resumeThread({ graph, airlock, threadId: "t7", by: "manual" });
    await Promise.all([a, b].map((r) => r.stop()));
    const state = await graph.getState(threadConfig("t7"));
    expect(state.next).toEqual([]);
    expect(count(log, "tool")).toBe(1);
    expect(count(log, "model")).toBe(2); // the proposal and one answer after the tool, not two
    expect(resumed.length + (manual.resumed ? 1 : 0)).toBe(1);
    // One take got the resume's ticket (each resume that found the thread parked took it), and its
    // winner finished it. A ticket is not a request: the gate is the only one.
    const tickets = await Promise.all(takes.mock.results.map((r) => r.value));
    expect(tickets.length).toBeGreaterThanOrEqual(1);
    expect(tickets.filter((t) => t.taken)).toEqual([
      expect.objectContaining({ holder: expect.stringMatching(/^(a|b|manual)#/) }),
    ]);
    expect(await Promise.all(finishes.mock.results.map((r) => r.value))).toEqual([true]);
    expect((await airlock.list()).items.map((r) => r.id)).toEqual([id]);
  });

  it("a raw Command sent twice at once still runs the approved tool once", async () => {
    const { graph } = setup();
    const id = await park(graph, "t8");
    await airlock.decide(id, { outcome: "approved", reviewer: "alice" });
    await Promise.allSettled([
      graph.invoke(new Command({ resume: { airlock: { requestId: id } } }), threadConfig("t8")),
      graph.invoke(new Command({ resume: { airlock: { requestId: id } } }), threadConfig("t8")),
    ]);
    expect(count(log, "tool")).toBe(1);
    // And once the thread has moved on, another resume finds nothing to do.
    expect((await resumeThread({ graph, airlock, threadId: "t8" })).resumed).toBe(false);
    expect(count(log, "tool")).toBe(1);
  });

  it("the code before the gate runs once per LangGraph run, never more because of Airlock", async () => {
    const { graph } = setup();
    const id = await park(graph, "t9");
    expect(count(log, "before_gate")).toBe(1);
    expect(count(log, "after_gate")).toBe(0);
    // A forged resume is one more LangGraph run of the node, no more.
    await graph.invoke(new Command({ resume: "wake up" }), threadConfig("t9"));
    expect(count(log, "before_gate")).toBe(2);
    await airlock.decide(id, { outcome: "approved", reviewer: "alice" });
    const a = resumeOnDecision({ graph, airlock, by: "a" });
    const b = resumeOnDecision({ graph, airlock, by: "b" });
    await Promise.all([a.ready, b.ready]);
    await Promise.all([a.stop(), b.stop()]);
    await resumeThread({ graph, airlock, threadId: "t9" });
    // park + forged resume + the one real resume; the node before (`agent`) ran once for the proposal.
    expect(count(log, "before_gate")).toBe(3);
    expect(count(log, "after_gate")).toBe(1);
    expect(count(log, "model")).toBe(2);
    expect(count(log, "tool")).toBe(1);
  });

  it("a gate whose args change between runs of the node keeps its first request", async () => {
    let run = 0;
    const requests = vi.spyOn(airlock, "request");
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("work", async () => {
        run++;
        const gate = await airlockGate(airlock, {
          title: "Send the report",
          args: { run }, // differs on the re-run: the reviewer decided the first
          requester: "agent",
        });
        const ran = await gate.run((args) => JSON.stringify(args));
        return { messages: [{ role: "ai", content: ran.ok ? ran.value : ran.reason }] };
      })
      .addEdge(START, "work")
      .addEdge("work", END)
      .compile({ checkpointer: new MemorySaver() });
    const out = (await graph.invoke({ messages: [] }, threadConfig("t10"))) as {
      __interrupt__?: Array<{ value: unknown }>;
    };
    const value = out.__interrupt__?.[0]?.value;
    if (!isGateInterrupt(value)) throw new Error("not parked");
    await airlock.decide(value.airlock.requestId, { outcome: "approved", reviewer: "alice" });
    await resumeThread({ graph, airlock, threadId: "t10" });
    expect(run).toBe(2);
    expect(lastMessage(await graph.getState(threadConfig("t10")))).toBe('{"run":1}');
    expect((await airlock.list({ action: "generic" })).items).toHaveLength(1);
    // On the resume the gate reads its request by key; it does not try to create it again.
    expect(requests.mock.calls.filter(([r]) => r.action === undefined)).toHaveLength(1);
  });
});
