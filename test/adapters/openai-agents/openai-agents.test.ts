import { Agent, Runner, tool } from "@openai/agents";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { FakeModel } from "../../../examples/adapters/openai-agents/fake-model.js";
import {
  airlockNeedsApproval,
  approveInterruptions,
  parkInterruptions,
  resumeRun,
} from "../../../src/adapters/openai-agents.js";
import {
  type Airlock,
  type AirlockOptions,
  createAirlock,
  isAirlockError,
  memoryStore,
  when,
} from "../../../src/index.js";
import { eventually } from "../../helpers.js";
import { type Mail, mailer } from "./fixtures/mailer.js";

const open: Airlock[] = [];
afterEach(async () => {
  for (const a of open.splice(0)) await a.close();
});

async function setup(
  calls: Mail[] = [{ to: "partner@elsewhere.org", body: "Contract attached." }],
  engine: Partial<AirlockOptions> = {},
  policy?: Parameters<typeof airlockNeedsApproval>[1],
) {
  const airlock = await createAirlock({ store: memoryStore(), ...engine });
  open.push(airlock);
  const sent: Mail[] = [];
  const { agent, runner, model } = mailer(airlock, {
    calls,
    ...(policy ? { policy } : {}),
    onSend: (mail) => sent.push(mail),
  });
  const first = await runner.run(agent, "Send the contract.");
  return { airlock, agent, runner, sent, model, first };
}

describe("airlock/openai-agents", () => {
  it("opens one gate per interruption, keyed by the call id, showing tool, args and a preview", async () => {
    const { airlock, first } = await setup([
      { to: "a@elsewhere.org", body: "one" },
      { to: "b@elsewhere.org", body: "two" },
    ]);
    expect(first.interruptions).toHaveLength(2);
    const { requests } = await parkInterruptions(airlock, first);
    expect(requests).toHaveLength(2);
    const [a, b] = requests;
    const callId = (first.interruptions[0]?.rawItem as { callId?: string } | undefined)?.callId;
    expect(a?.key).toBe(`openai-agents:${callId}`);
    expect(a?.action).toBe("send_email");
    expect(a?.title).toBe("Approve send_email");
    expect(a?.args).toEqual({ to: "a@elsewhere.org", body: "one" });
    expect(a?.preview).toContain("send_email");
    expect(a?.preview).toContain("a@elsewhere.org");
    expect(a?.allowed).toContain("edit");
    expect(a?.status).toBe("pending");
    // The RunState is kept once per turn, with the first gate; both gates name the whole turn.
    const meta = (r: typeof a) => r?.metadata.openaiAgents as Record<string, unknown>;
    expect(typeof meta(a).state).toBe("string");
    expect(meta(b).state).toBeUndefined();
    expect(meta(b).turn).toEqual(meta(a).turn);
    // Parking the same turn again opens nothing new.
    const again = await parkInterruptions(airlock, first);
    expect(again.requests.map((r) => r.id)).toEqual(requests.map((r) => r.id));
    expect(await airlock.count({ status: "pending" })).toBe(2);
  });

  it("a turn whose parking died half-way is completed by the resumer, which opens the missing gate", async () => {
    const { airlock, agent, runner, sent, first } = await setup([
      { to: "a@elsewhere.org", body: "one" },
      { to: "b@elsewhere.org", body: "two" },
    ]);
    let calls = 0;
    const dying = {
      request: async (input: Parameters<Airlock["request"]>[0]) => {
        if (++calls === 2) throw new Error("killed while parking");
        return airlock.request(input);
      },
    };
    await expect(parkInterruptions(dying, first)).rejects.toThrow("killed while parking");
    const [only] = (await airlock.list({})).items;
    expect(only?.status).toBe("pending");
    await airlock.decide(only?.id as string, { outcome: "approved", reviewer: "alice" });
    const out = await resumeRun(airlock, runner, agent, only?.id as string);
    expect(out.status).toBe("pending");
    expect(out.requests).toHaveLength(2);
    const second = out.requests[1];
    expect(second?.args).toEqual({ to: "b@elsewhere.org", body: "two" });
    await airlock.decide(second?.id as string, { outcome: "approved", reviewer: "alice" });
    const done = await resumeRun(airlock, runner, agent, second?.id as string);
    expect(done.status).toBe("resumed");
    expect(sent.map((m) => m.to)).toEqual(["a@elsewhere.org", "b@elsewhere.org"]);
  });

  it("approve: the run resumes and the tool runs once with the approved args", async () => {
    const { airlock, agent, runner, sent, first } = await setup();
    const { requests } = await parkInterruptions(airlock, first);
    const id = requests[0]?.id as string;
    expect((await resumeRun(airlock, runner, agent, id)).status).toBe("pending");
    expect(sent).toEqual([]);
    await airlock.decide(id, { outcome: "approved", reviewer: "alice" });
    const out = await resumeRun(airlock, runner, agent, id);
    expect(out.status).toBe("resumed");
    if (out.status !== "resumed") return;
    expect(sent).toEqual([{ to: "partner@elsewhere.org", body: "Contract attached." }]);
    expect(out.result.finalOutput).toBe("Done. sent to partner@elsewhere.org");
    expect(out.result.interruptions).toHaveLength(0);
    expect((await airlock.get(id)).executedAt).toBeTypeOf("number");
  });

  it("reject: the tool does not run and the agent sees the reviewer's reason", async () => {
    const { airlock, agent, runner, sent, first } = await setup();
    const { requests } = await parkInterruptions(airlock, first);
    const id = requests[0]?.id as string;
    await airlock.decide(id, {
      outcome: "rejected",
      reviewer: "bob",
      comment: "no contracts to partners before legal review",
    });
    const out = await resumeRun(airlock, runner, agent, id);
    if (out.status !== "resumed") throw new Error(`expected resumed, got ${out.status}`);
    expect(sent).toEqual([]);
    expect(out.result.finalOutput).toContain("A human rejected this send_email call by bob");
    expect(out.result.finalOutput).toContain("no contracts to partners before legal review");
  });

  it("revise: the agent is told to change the call, with the reviewer's comment", async () => {
    const { airlock, agent, runner, sent, first } = await setup();
    const id = (await parkInterruptions(airlock, first)).requests[0]?.id as string;
    await airlock.decide(id, { outcome: "revise", reviewer: "bob", comment: "shorter please" });
    const out = await resumeRun(airlock, runner, agent, id);
    if (out.status !== "resumed") throw new Error(out.status);
    expect(sent).toEqual([]);
    expect(out.result.finalOutput).toContain("asked for changes");
    expect(out.result.finalOutput).toContain("shorter please");
  });

  it("edit: the tool runs once with the edited args and the agent sees that it was edited", async () => {
    const { airlock, agent, runner, sent, first } = await setup();
    const id = (await parkInterruptions(airlock, first)).requests[0]?.id as string;
    const edited = { to: "legal@example.com", body: "Contract attached, for review." };
    await airlock.decide(id, {
      outcome: "approved",
      method: "edit",
      editedArgs: edited,
      reviewer: "carol",
    });
    const out = await resumeRun(airlock, runner, agent, id);
    if (out.status !== "resumed") throw new Error(out.status);
    expect(sent).toEqual([edited]);
    expect(out.result.finalOutput).toContain("carol edited the arguments of this send_email call");
    expect(out.result.finalOutput).toContain("sent to legal@example.com");
    // Claimed like any approval: a second resume runs nothing.
    expect((await resumeRun(airlock, runner, agent, id)).status).toBe("already_resumed");
    expect(sent).toHaveLength(1);
  });

  it("timeout: the declared default applies (reject by default, or approve)", async () => {
    let now = 1_000_000;
    const clock = { now: () => now };
    const { airlock, agent, runner, sent, first } = await setup(undefined, {
      clock,
      sweeper: false,
    });
    const id = (await parkInterruptions(airlock, first, { timeoutMs: 60_000 })).requests[0]
      ?.id as string;
    now += 60_001;
    expect(await airlock.sweep()).toBe(1);
    const out = await resumeRun(airlock, runner, agent, id);
    if (out.status !== "resumed") throw new Error(out.status);
    expect((await airlock.get(id)).status).toBe("timed_out");
    expect(sent).toEqual([]);
    expect(out.result.finalOutput).toContain(
      "Nobody approved this send_email call before the deadline",
    );

    const second = await setup(undefined, { clock, sweeper: false });
    const id2 = (
      await parkInterruptions(second.airlock, second.first, {
        timeoutMs: 1000,
        onTimeout: "approve",
      })
    ).requests[0]?.id as string;
    now += 1001;
    await second.airlock.sweep();
    const out2 = await resumeRun(second.airlock, second.runner, second.agent, id2);
    if (out2.status !== "resumed") throw new Error(out2.status);
    expect(second.sent).toHaveLength(1);
    expect(out2.result.finalOutput).toBe("Done. sent to partner@elsewhere.org");
  });

  it("double resume: two resumers at once, and a third later, run the tool once", async () => {
    const { airlock, agent, runner, sent, first } = await setup();
    const id = (await parkInterruptions(airlock, first)).requests[0]?.id as string;
    await airlock.decide(id, { outcome: "approved", reviewer: "alice" });
    const outs = await Promise.all([
      resumeRun(airlock, runner, agent, id),
      resumeRun(airlock, runner, agent, id),
    ]);
    expect(outs.map((o) => o.status).sort()).toEqual(["already_resumed", "resumed"]);
    const late = await resumeRun(airlock, runner, agent, id);
    expect(late.status).toBe("already_resumed");
    expect(sent).toHaveLength(1);
  });

  it("double resume of a turn where nothing was approved: the run goes on once (the turn's ticket)", async () => {
    const { airlock, agent, runner, sent, model, first } = await setup();
    const id = (await parkInterruptions(airlock, first)).requests[0]?.id as string;
    await airlock.decide(id, { outcome: "rejected", reviewer: "bob", comment: "no" });
    expect(model.requests).toBe(1);
    const outs = await Promise.all([
      resumeRun(airlock, runner, agent, id),
      resumeRun(airlock, runner, agent, id),
    ]);
    expect(outs.map((o) => o.status).sort()).toEqual(["already_resumed", "resumed"]);
    // One continuation: the model was asked once more, not twice.
    expect(model.requests).toBe(2);
    expect(sent).toEqual([]);
    // The turn's ticket, finished by the winner, is no request: the gate is the only one.
    const requester = (await airlock.get(id)).requester;
    expect(await airlock.takeTicket(`openai-agents-resume:${id}`, { requester })).toMatchObject({
      taken: false,
      finished: true,
      holder: expect.stringMatching(new RegExp(`^${requester}#`)),
    });
    expect((await airlock.list()).items.map((r) => r.id)).toEqual([id]);
  });

  it("force resumes a turn whose ticket was taken, and still never runs a claimed call again", async () => {
    const { airlock, agent, runner, sent, first } = await setup();
    const id = (await parkInterruptions(airlock, first)).requests[0]?.id as string;
    await airlock.decide(id, { outcome: "approved", reviewer: "alice" });
    expect((await resumeRun(airlock, runner, agent, id)).status).toBe("resumed");
    expect((await resumeRun(airlock, runner, agent, id)).status).toBe("already_resumed");
    const forced = await resumeRun(airlock, runner, agent, id, { force: true });
    if (forced.status !== "resumed") throw new Error(forced.status);
    expect(sent).toHaveLength(1);
    expect(forced.result.finalOutput).toContain(
      "already claimed for execution by an earlier resume",
    );
  });

  it("waits until every gate of the turn is decided, then applies each decision", async () => {
    const { airlock, agent, runner, sent, first } = await setup([
      { to: "a@elsewhere.org", body: "one" },
      { to: "b@elsewhere.org", body: "two" },
    ]);
    const [a, b] = (await parkInterruptions(airlock, first)).requests.map((r) => r.id);
    await airlock.decide(a as string, { outcome: "approved", reviewer: "alice" });
    expect((await resumeRun(airlock, runner, agent, a as string)).status).toBe("pending");
    expect(sent).toEqual([]);
    const resumed = resumeRun(airlock, runner, agent, [a as string, b as string], { wait: true });
    await airlock.decide(b as string, { outcome: "rejected", reviewer: "bob", comment: "not b" });
    const out = await resumed;
    if (out.status !== "resumed") throw new Error(out.status);
    expect(sent).toEqual([{ to: "a@elsewhere.org", body: "one" }]);
    expect(out.result.finalOutput).toContain("sent to a@elsewhere.org");
    expect(out.result.finalOutput).toContain('"not b"');
  });

  it("approveInterruptions: a decision taken elsewhere resumes the run in place", async () => {
    const { airlock, agent, runner, sent, first } = await setup();
    const done = approveInterruptions(airlock, runner, agent, first);
    const pending = await eventually(
      async () => (await airlock.list({ status: "pending" })).items[0] ?? false,
      {
        intervalMs: 5,
        what: "a pending request",
      },
    );
    await airlock.decide(pending.id, {
      outcome: "approved",
      reviewer: "alice",
    });
    const result = await done;
    expect(result.finalOutput).toBe("Done. sent to partner@elsewhere.org");
    expect(sent).toHaveLength(1);
  });

  it("approveInterruptions gates every turn that interrupts, until the run ends", async () => {
    const airlock = await createAirlock({ store: memoryStore() });
    open.push(airlock);
    let runs = 0;
    const sendEmail = tool({
      name: "send_email",
      description: "Send an email",
      parameters: z.object({ to: z.string(), body: z.string() }),
      needsApproval: airlockNeedsApproval(airlock, { tool: "send_email" }),
      execute: async ({ to }) => {
        runs++;
        return `sent to ${to}`;
      },
    });
    const model = new FakeModel({
      tool: "send_email",
      calls: [{ to: "a@elsewhere.org", body: "one" }],
      rounds: 2,
    });
    const agent = new Agent({ name: "mailer", instructions: "", tools: [sendEmail], model });
    const runner = new Runner({ tracingDisabled: true });
    const first = await runner.run(agent, "Send it twice.");
    const stop = new AbortController();
    const decided: string[] = [];
    const reviewer = (async () => {
      for await (const e of airlock.events({ types: ["created"], after: 0, signal: stop.signal })) {
        const r = await airlock.get(e.requestId as string);
        if (r.status !== "pending") continue;
        decided.push(r.id);
        await airlock.decide(r.id, { outcome: "approved", reviewer: "alice" });
      }
    })();
    const result = await approveInterruptions(airlock, runner, agent, first);
    stop.abort();
    await reviewer;
    expect(decided).toHaveLength(2);
    expect(runs).toBe(2);
    expect(result.finalOutput).toBe("Done. sent to a@elsewhere.org");
  });

  it("the policy auto-approves without interrupting, recorded in the audit; other calls ask", async () => {
    const policy = when((input) => String(input.args.to).endsWith("@example.com"), {
      level: "auto",
      reason: "internal mail",
    });
    const { airlock, sent, first } = await setup(
      [
        { to: "team@example.com", body: "hello" },
        { to: "x@elsewhere.org", body: "hi" },
      ],
      {},
      { policy },
    );
    expect(first.interruptions).toHaveLength(1);
    expect(first.interruptions[0]?.arguments).toContain("x@elsewhere.org");
    expect(sent.map((m) => m.to)).toEqual(["team@example.com"]);
    const audit = await airlock.audit();
    const auto = audit.filter((e) => e.type === "auto_executed");
    expect(auto).toHaveLength(1);
    expect(auto[0]?.data).toMatchObject({
      adapter: "openai-agents",
      tool: "send_email",
      policy: "internal mail",
      args: { to: "team@example.com", body: "hello" },
    });
  });

  it("refuses a request it did not open, and a RunState over maxStateBytes, with the option named", async () => {
    const { airlock, agent, runner, first } = await setup();
    const other = await airlock.request({ title: "Something else" });
    await expect(resumeRun(airlock, runner, agent, other.id)).rejects.toThrow(
      /not opened by airlock\/openai-agents/,
    );
    const err = await parkInterruptions(airlock, first, { maxStateBytes: 100 }).catch((e) => e);
    expect(isAirlockError(err, "invalid_input")).toBe(true);
    expect(String(err.message)).toContain("`maxStateBytes` (100)");
    // Nothing was opened for the refused turn: the only request is the other one.
    expect(await airlock.count({})).toBe(1);
  });
});
