// Resume tickets are not requests (issue 32, item 5): after LangGraph and OpenAI Agents resumes in
// process, Airlock's metrics, listings, counts and pending quotas see only the real gates (3
// approvals and 1 rejection are an approval rate of 0.75, not 0.375 as when each resume left a
// cancelled `*.resume` request); a ticket left by a resumer that died holds no quota and is taken
// over once its lease has run out; and the winner of a long resume renews its lease, so nobody takes
// the ticket over while it runs.
import { join } from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  isGateInterrupt,
  type ResumableGraph,
  resumeThread,
} from "../../src/adapters/langgraph.js";
import { parkInterruptions, resumeRun } from "../../src/adapters/openai-agents.js";
import type { Store } from "../../src/core/store.js";
import { type Airlock, createAirlock, memoryStore } from "../../src/index.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { eventually, tempDir } from "../helpers.js";
import { buildGraph, count, threadConfig } from "./langgraph/fixture.js";
import { type Mail, mailer } from "./openai-agents/fixtures/mailer.js";

let airlock: Airlock;
let log: string;
let cleanup: () => void;
/** The engine's clock: tickets' leases run on it. */
let now = Date.now();
const clock = { now: () => now };

async function engine(store: Store): Promise<Airlock> {
  airlock = await createAirlock({ store, clock, sweeper: false });
  return airlock;
}

beforeEach(() => {
  now = Date.now();
  const t = tempDir("airlock-resume-tickets-");
  cleanup = t.cleanup;
  log = join(t.dir, "effects.log");
});
afterEach(async () => {
  await airlock?.close();
  cleanup();
});

/** A LangGraph thread parked at its gate: the graph and the gate's request id. */
async function parkedThread(thread: string) {
  const { graph } = buildGraph({ airlock, checkpointer: new MemorySaver(), log });
  const out = (await graph.invoke(
    { messages: [{ role: "user", content: "write notes" }] },
    threadConfig(thread),
  )) as { __interrupt__?: Array<{ value: unknown }> };
  const value = out.__interrupt__?.[0]?.value;
  if (!isGateInterrupt(value)) throw new Error(`the graph did not park: ${JSON.stringify(out)}`);
  return { graph, id: value.airlock.requestId };
}

/** An OpenAI Agents run parked at its gate: what resuming it needs, and what the tool sent. */
async function parkedRun() {
  const sent: Mail[] = [];
  const { agent, runner } = mailer(airlock, { onSend: (m) => sent.push(m) });
  const first = await runner.run(agent, "Send the contract.");
  const id = (await parkInterruptions(airlock, first)).requests[0]?.id as string;
  return { agent, runner, sent, id };
}

describe.each([
  ["memory", () => memoryStore()],
  ["sqlite", () => sqliteStore(":memory:")],
])("resume tickets on the %s store", (_name, store) => {
  it("metrics, listings, counts and quotas see only the real gates after the adapters' resumes", async () => {
    await engine(store());
    const approved = await parkedThread("t-approved");
    const rejected = await parkedThread("t-rejected");
    const runA = await parkedRun();
    const runB = await parkedRun();
    await airlock.decide(approved.id, { outcome: "approved", reviewer: "alice" });
    await airlock.decide(rejected.id, { outcome: "rejected", reviewer: "bob", comment: "no" });
    await airlock.decide(runA.id, { outcome: "approved", reviewer: "alice" });
    await airlock.decide(runB.id, { outcome: "approved", reviewer: "carol" });

    // Each resumed twice at once (one goes on); each run once more later (its ticket is finished).
    for (const [t, thread] of [
      [approved, "t-approved"],
      [rejected, "t-rejected"],
    ] as const) {
      const outs = await Promise.all(
        ["a", "b"].map((by) => resumeThread({ graph: t.graph, airlock, threadId: thread, by })),
      );
      expect(outs.map((o) => (o.resumed ? "resumed" : o.reason)).sort()).toEqual([
        "already_resumed",
        "resumed",
      ]);
    }
    for (const r of [runA, runB]) {
      const outs = await Promise.all([
        resumeRun(airlock, r.runner, r.agent, r.id),
        resumeRun(airlock, r.runner, r.agent, r.id),
      ]);
      expect(outs.map((o) => o.status).sort()).toEqual(["already_resumed", "resumed"]);
      expect((await resumeRun(airlock, r.runner, r.agent, r.id)).status).toBe("already_resumed");
      expect(r.sent).toHaveLength(1);
    }
    expect(count(log, "tool")).toBe(1);

    const gates = [approved.id, rejected.id, runA.id, runB.id].sort();
    const metrics = await airlock.metrics();
    expect(metrics.total).toBe(4);
    expect(metrics.byOutcome).toEqual({ approved: 3, rejected: 1 });
    expect(metrics.approvalRate).toBe(0.75);
    expect(metrics.pending).toBe(0);
    expect(Object.keys(metrics.byAction).sort()).toEqual(["files.write", "send_email"]);
    expect((await airlock.list()).items.map((r) => r.id).sort()).toEqual(gates);
    expect((await airlock.listSummaries()).items).toHaveLength(4);
    expect(await airlock.count()).toBe(4);
    for (const id of gates) {
      const { requester } = await airlock.get(id);
      expect(await airlock.pendingUsage(requester)).toEqual({ count: 0, bytes: 0 });
    }
    // The audit log holds the gates' events only: no ticket was created or cancelled.
    const events = await airlock.audit({ limit: 1000 });
    expect(new Set(events.flatMap((e) => (e.requestId ? [e.requestId] : [])))).toEqual(
      new Set(gates),
    );
    expect(events.filter((e) => e.type === "cancelled")).toEqual([]);
  });

  it("a turn's ticket left by a resumer that died holds no quota and is taken over after its lease", async () => {
    await engine(store());
    const run = await parkedRun();
    await airlock.decide(run.id, { outcome: "approved", reviewer: "alice" });
    const { requester } = await airlock.get(run.id);
    // A resumer takes the turn's ticket with a 1 s lease and dies before finishing it.
    const dead = await airlock.takeTicket(`openai-agents-resume:${run.id}`, {
      requester,
      by: "dead-resumer",
      leaseMs: 1000,
    });
    expect(dead).toMatchObject({ taken: true, expiresAt: now + 1000 });
    // It is no pending request: a quota of one pending request still has room for a new gate.
    expect(await airlock.pendingUsage(requester)).toEqual({ count: 0, bytes: 0 });
    const next = await airlock.request(
      { action: "files.read", title: "Read a file", args: {}, requester },
      { quota: { count: 1, bytes: 1_000_000 } },
    );
    expect(next.status).toBe("pending");
    expect((await airlock.metrics()).pending).toBe(1);

    const held = await resumeRun(airlock, run.runner, run.agent, run.id, { ticketLeaseMs: 1000 });
    expect(held).toMatchObject({ status: "already_resumed" });
    if (held.status === "already_resumed") expect(held.detail).toContain("dead-resumer#");
    expect(run.sent).toEqual([]);

    now += 1000;
    const taken = await resumeRun(airlock, run.runner, run.agent, run.id, { ticketLeaseMs: 1000 });
    expect(taken.status).toBe("resumed");
    expect(run.sent).toHaveLength(1);
    // The dead resumer, back, can no longer finish it; nor can anyone take it again.
    const key = `openai-agents-resume:${run.id}`;
    expect(await airlock.finishTicket(key, { holder: dead.holder, requester })).toBe(false);
    expect((await resumeRun(airlock, run.runner, run.agent, run.id)).status).toBe(
      "already_resumed",
    );
  });

  it("a thread whose resumer died mid-resume is resumed again once its ticket's lease ran out", async () => {
    await engine(store());
    const { graph, id } = await parkedThread("t-dies");
    await airlock.decide(id, { outcome: "approved", reviewer: "alice" });
    // The first resumer takes the ticket, then dies inside the graph's run.
    const dying = {
      getState: graph.getState.bind(graph),
      invoke: async () => {
        throw new Error("the resumer's process died");
      },
    };
    const lease = { ticketLeaseMs: 2000 };
    await expect(
      resumeThread({ graph: dying, airlock, threadId: "t-dies", by: "dying", ...lease }),
    ).rejects.toThrow("died");
    const early = await resumeThread({ graph, airlock, threadId: "t-dies", by: "next", ...lease });
    expect(early).toMatchObject({ resumed: false, reason: "already_resumed" });
    expect(count(log, "tool")).toBe(0);

    now += 2000;
    const late = await resumeThread({ graph, airlock, threadId: "t-dies", by: "next", ...lease });
    expect(late.resumed).toBe(true);
    expect(count(log, "tool")).toBe(1);
    expect((await graph.getState(threadConfig("t-dies"))).next).toEqual([]);
  });

  it("the winner of a long resume renews its ticket, so nobody takes it over meanwhile", async () => {
    await engine(store());
    const { graph, id } = await parkedThread("t-long");
    await airlock.decide(id, { outcome: "approved", reviewer: "alice" });
    const takes = vi.spyOn(airlock, "takeTicket");
    let release: () => void = () => {};
    const released = new Promise<void>((r) => {
      release = r;
    });
    // A resume that runs until released (its graph's run is slow), with a 300 ms lease.
    const slow: ResumableGraph = {
      getState: graph.getState.bind(graph),
      invoke: async (input: unknown, config?: Record<string, unknown>) => {
        await released;
        return graph.invoke(input as never, config as never);
      },
    };
    const lease = { ticketLeaseMs: 300 };
    const first = resumeThread({ graph: slow, airlock, threadId: "t-long", by: "slow", ...lease });
    await until(() => takes.mock.calls.length >= 1);
    const taken = await (takes.mock.results[0]?.value as ReturnType<Airlock["takeTicket"]>);
    expect(taken).toMatchObject({ taken: true, expiresAt: now + 300 });

    // 250 ms later on the engine's clock, a renewal (every 100 ms of real time) moves the lease on.
    now += 250;
    const before = takes.mock.calls.length;
    await until(() => takes.mock.calls.length > before);
    const renewed = await (takes.mock.results[before]?.value as ReturnType<Airlock["takeTicket"]>);
    expect(renewed).toMatchObject({ taken: true, holder: taken.holder, expiresAt: now + 300 });

    // Past the first lease, within the renewed one: another resume finds the ticket held.
    now += 250;
    const other = await resumeThread({ graph, airlock, threadId: "t-long", by: "other", ...lease });
    expect(other).toMatchObject({ resumed: false, reason: "already_resumed" });
    release();
    expect((await first).resumed).toBe(true);
    expect(count(log, "tool")).toBe(1);
  });
});

/** Waits (bounded) until `check()` holds. */
async function until(check: () => boolean, ms = 5000): Promise<void> {
  await eventually(check, { timeoutMs: ms, intervalMs: 10 });
}
