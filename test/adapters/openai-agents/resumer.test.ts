import { afterEach, describe, expect, it } from "vitest";
import {
  parkInterruptions,
  type Resumer,
  type ResumerApi,
  resumeOnDecision,
} from "../../../src/adapters/openai-agents.js";
import { type Airlock, createAirlock, memoryStore } from "../../../src/index.js";
import { mailer } from "./fixtures/mailer.js";

const open: Airlock[] = [];
const resumers: Resumer[] = [];
afterEach(async () => {
  for (const r of resumers.splice(0)) await r.stop();
  for (const a of open.splice(0)) await a.close();
});

async function parked(rounds = 1) {
  const airlock = await createAirlock({ store: memoryStore() });
  open.push(airlock);
  const sent: string[] = [];
  const { agent, runner } = mailer(airlock, { rounds, onSend: ({ to }) => sent.push(to) });
  const first = await runner.run(agent, "Send the contract.");
  const id = (await parkInterruptions(airlock, first)).requests[0]?.id as string;
  return { airlock, agent, runner, sent, id };
}

/** Resolves with each final output handed to `onResult`, in order. */
function collector() {
  const outputs: unknown[] = [];
  let wake: (() => void) | undefined;
  return {
    outputs,
    onResult: (result: { finalOutput?: unknown }) => {
      outputs.push(result.finalOutput);
      wake?.();
    },
    async until(n: number) {
      while (outputs.length < n) await new Promise<void>((r) => (wake = r));
    },
  };
}

describe("resumeOnDecision (airlock/openai-agents)", () => {
  it("resumes a parked run when its gate is decided, once, with two resumers", async () => {
    const { airlock, agent, runner, sent, id } = await parked();
    const c = collector();
    for (let i = 0; i < 2; i++) {
      const r = resumeOnDecision({ airlock, runner, agent, onResult: c.onResult });
      resumers.push(r);
      await r.ready;
    }
    expect(sent).toEqual([]);
    await airlock.decide(id, { outcome: "approved", reviewer: "alice", channel: "web" });
    await c.until(1);
    for (const r of resumers.splice(0)) await r.stop();
    expect(c.outputs).toEqual(["Done. sent to partner@elsewhere.org"]);
    expect(sent).toEqual(["partner@elsewhere.org"]);
  });

  it("catches up on a decision taken while no resumer ran; polls without events", async () => {
    const { airlock, agent, runner, sent, id } = await parked();
    await airlock.decide(id, { outcome: "rejected", reviewer: "bob", comment: "later" });
    const c = collector();
    const r = resumeOnDecision({ airlock, runner, agent, onResult: c.onResult });
    resumers.push(r);
    await c.until(1);
    expect(c.outputs[0]).toContain('"later"');
    expect(sent).toEqual([]);

    // Over a client without `events`: found by polling.
    const second = await parked();
    const polling: ResumerApi = {
      request: (i) => second.airlock.request(i),
      get: (i) => second.airlock.get(i),
      getByKey: (k, o) => second.airlock.getByKey(k, o),
      list: (f) => second.airlock.list(f),
      waitFor: (i, o) => second.airlock.waitFor(i, o),
      decide: (i, d) => second.airlock.decide(i, d),
      cancel: (i, o) => second.airlock.cancel(i, o),
      claimExecution: (i, o) => second.airlock.claimExecution(i, o),
      renewExecution: (i, o) => second.airlock.renewExecution(i, o),
      finishExecution: (i, o, by) => second.airlock.finishExecution(i, o, by),
      record: (e) => second.airlock.record(e),
      takeTicket: (k, o) => second.airlock.takeTicket(k, o),
      finishTicket: (k, o) => second.airlock.finishTicket(k, o),
    };
    const c2 = collector();
    const r2 = resumeOnDecision({
      airlock: polling,
      runner: second.runner,
      agent: second.agent,
      pollMs: 20,
      onResult: c2.onResult,
    });
    resumers.push(r2);
    await r2.ready;
    await second.airlock.decide(second.id, { outcome: "approved", reviewer: "alice" });
    await c2.until(1);
    expect(second.sent).toEqual(["partner@elsewhere.org"]);
  });

  it("parks a resumed run that interrupts again, and resumes it when that gate is decided", async () => {
    const { airlock, agent, runner, sent, id } = await parked(2);
    const c = collector();
    const again: string[] = [];
    const r = resumeOnDecision({
      airlock,
      runner,
      agent,
      onResult: c.onResult,
      onParked: (requests) => {
        again.push(...requests.map((q) => q.id));
        void airlock.decide(requests[0]?.id as string, { outcome: "approved", reviewer: "bob" });
      },
    });
    resumers.push(r);
    await r.ready;
    await airlock.decide(id, { outcome: "approved", reviewer: "alice" });
    await c.until(1);
    expect(again).toHaveLength(1);
    expect(again[0]).not.toBe(id);
    expect(sent).toEqual(["partner@elsewhere.org", "partner@elsewhere.org"]);
  });
});
