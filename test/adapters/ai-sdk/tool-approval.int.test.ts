// airlock/ai-sdk against the real `ai` 7 package with the SDK's mock language model (offline): a
// conversation kept as model messages (`generateText`), in both modes.
import {
  generateText,
  type ModelMessage,
  stepCountIs,
  streamText,
  ToolLoopAgent,
  type ToolSet,
  tool,
} from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { scriptedModel } from "../../../examples/adapters/ai-sdk/fake-model.js";
import {
  type AirlockToolApproval,
  airlockToolApproval,
  approvalKey,
} from "../../../src/adapters/ai-sdk.js";
import {
  type Airlock,
  type AirlockOptions,
  createAirlock,
  createClient,
} from "../../../src/index.js";
import { createServer, createToken, memoryTokenStore } from "../../../src/server/index.js";
import { sqliteStore } from "../../../src/store/sqlite-entry.js";

let airlock: Airlock;
let runs: Array<{ to: string; amount: number }>;

async function engine(options: Partial<AirlockOptions> = {}) {
  airlock = await createAirlock({ store: sqliteStore(":memory:"), ...options });
}
beforeEach(async () => {
  runs = [];
  await engine();
});
afterEach(async () => {
  await airlock.close();
});

function payTools() {
  return {
    pay: tool({
      description: "Pay someone",
      inputSchema: z.object({ to: z.string(), amount: z.number().positive() }),
      execute: async ({ to, amount }) => {
        runs.push({ to, amount });
        return { paid: amount, to };
      },
    }),
    balance: tool({
      description: "Read the balance",
      inputSchema: z.object({}),
      execute: async () => ({ balance: 1000 }),
    }),
  };
}

type Tools = ReturnType<typeof payTools>;
const PAY = { toolName: "pay", input: { to: "bob", amount: 120 } };

/** A conversation through `gate`: the messages so far (push each turn's answer), and `call`, one
 * `generateText` turn over them (with `gate`, or another gate on the same tools). */
function conversation<T extends ToolSet>(
  model: ReturnType<typeof scriptedModel>,
  content: string,
  gate: AirlockToolApproval<T>,
) {
  const messages: ModelMessage[] = [{ role: "user", content }];
  const call = (g: AirlockToolApproval<T> = gate) =>
    generateText({
      model,
      tools: g.tools,
      toolApproval: g.toolApproval,
      stopWhen: stepCountIs(3),
      messages: [...messages],
    });
  return { messages, call };
}

function setup(
  opts: {
    mode?: "defer" | "block";
    gates?: Parameters<typeof airlockToolApproval<Tools>>[0]["gates"];
    waitTimeoutMs?: number;
  } = {},
) {
  const model = scriptedModel(() => [PAY]);
  const gate = airlockToolApproval({
    airlock,
    conversationId: "conv-1",
    tools: payTools(),
    requester: "ai-sdk",
    mode: opts.mode ?? "defer",
    ...(opts.gates ? { gates: opts.gates } : {}),
    ...(opts.waitTimeoutMs !== undefined ? { waitTimeoutMs: opts.waitTimeoutMs } : {}),
  });
  const { messages, call: turn } = conversation(model, "pay bob 120", gate);
  return { gate, messages, turn };
}

/** Turn 1 in defer mode: the call is parked behind a pending Airlock request. */
async function park(s: ReturnType<typeof setup>) {
  const first = await s.turn();
  s.messages.push(...first.response.messages);
  const asked = first.content.filter((p) => p.type === "tool-approval-request");
  expect(asked).toHaveLength(1);
  const request = await airlock.getByKey(approvalKey("conv-1", "call-0-0"), {
    requester: "ai-sdk",
  });
  if (!request) throw new Error("no request was opened");
  return { first, request };
}

async function resume(s: ReturnType<typeof setup>, opts: { wait?: boolean } = {}) {
  const answered = await s.gate.responses(s.messages, opts);
  if (!answered.message) throw new Error(`nothing answered; pending: ${answered.pending.length}`);
  s.messages.push(answered.message);
  const next = await s.turn();
  s.messages.push(...next.response.messages);
  return { answered, next };
}

describe("airlockToolApproval, mode defer", () => {
  it("approve: opens one request showing tool, args and preview; the tool runs once after the decision", async () => {
    const s = setup();
    const { first, request } = await park(s);
    expect(request).toMatchObject({
      status: "pending",
      action: "pay",
      title: "Run tool `pay`",
      args: { to: "bob", amount: 120 },
      requester: "ai-sdk",
      correlationId: "conv-1",
      metadata: {
        source: "ai-sdk",
        conversationId: "conv-1",
        toolCallId: "call-0-0",
        toolName: "pay",
      },
    });
    expect(request.preview).toContain('"to": "bob"');
    const part = first.content.find((p) => p.type === "tool-approval-request");
    expect(part && "reason" in part ? part.reason : "").toContain(request.id);
    expect(runs).toEqual([]);

    // The gate is idempotent: asking again (a re-run, another process) finds the same request.
    expect((await s.gate.responses(s.messages)).pending.map((r) => r.id)).toEqual([request.id]);
    expect((await airlock.list()).items).toHaveLength(1);

    await airlock.decide(request.id, { outcome: "approved", reviewer: "alice", comment: "ok" });
    const { answered, next } = await resume(s);
    expect(answered.responses).toEqual([
      {
        type: "tool-approval-response",
        approvalId: expect.any(String),
        approved: true,
        reason: expect.stringContaining("Approved by alice: ok"),
      },
    ]);
    expect(runs).toEqual([{ to: "bob", amount: 120 }]);
    expect(next.text).toBe('pay returned {"paid":120,"to":"bob"}');
    const after = await airlock.get(request.id);
    expect(after.executedAt).toBeTypeOf("number");
    expect((await airlock.audit({ requestId: request.id })).map((e) => e.type)).toEqual([
      "created",
      "decided",
      "claimed",
      "executed",
    ]);
  });

  it("reject: the tool never runs and the reviewer's reason reaches the model", async () => {
    const s = setup();
    const { request } = await park(s);
    await airlock.decide(request.id, {
      outcome: "rejected",
      reviewer: "alice",
      comment: "bob was paid yesterday",
    });
    const { answered, next } = await resume(s);
    expect(answered.responses[0]).toMatchObject({
      approved: false,
      reason: expect.stringContaining("Rejected by alice: bob was paid yesterday"),
    });
    expect(next.text).toContain("pay was not run: Rejected by alice: bob was paid yesterday");
    expect(runs).toEqual([]);
    // The denial is in the messages the app keeps, as an execution-denied result.
    const denied = s.messages.flatMap((m) =>
      m.role === "tool" && typeof m.content !== "string" ? m.content : [],
    );
    expect(denied).toContainEqual(
      expect.objectContaining({ type: "tool-approval-response", approved: false }),
    );
  });

  it("edit: an approval; the tool runs once with the reviewer's args and its output is the call's result", async () => {
    const s = setup();
    const { request } = await park(s);
    await airlock.decide(request.id, {
      outcome: "approved",
      reviewer: "alice",
      editedArgs: { to: "bob", amount: 100 },
      comment: "cap at 100",
    });
    const { answered, next } = await resume(s);
    expect(runs).toEqual([{ to: "bob", amount: 100 }]);
    expect(answered.responses[0]).toMatchObject({
      approved: true,
      reason: expect.stringContaining(
        'Approved by alice with edited arguments {"to":"bob","amount":100}: cap at 100',
      ),
    });
    // The model reads the tool's output, not a denial; so does the history the app keeps.
    expect(next.text).toBe('pay returned {"paid":100,"to":"bob"}');
    const results = next.responseMessages.flatMap((m) =>
      m.role === "tool" && typeof m.content !== "string" ? m.content : [],
    );
    expect(results).toContainEqual(
      expect.objectContaining({
        type: "tool-result",
        toolName: "pay",
        output: { type: "json", value: { paid: 100, to: "bob" } },
      }),
    );
    expect(JSON.stringify(results)).not.toContain("execution-denied");
    const after = await airlock.get(request.id);
    expect(after.executedAt).toBeTypeOf("number");
    expect(after.executedBy).toBe("ai-sdk");

    // Answering the same history again (a second server instance) does not pay twice.
    const history = s.messages.slice(0, -2);
    const again = await s.gate.responses(history);
    if (!again.message) throw new Error("not answered");
    const replay = await generateText({
      model: scriptedModel(() => [PAY]),
      tools: s.gate.tools,
      toolApproval: s.gate.toolApproval,
      stopWhen: stepCountIs(3),
      messages: [...history, again.message],
    });
    expect(replay.text).toContain("pay failed");
    expect(replay.text).toMatch(/already executed|claimed for execution/);
    expect(runs).toHaveLength(1);
  });

  it("edit: the SDK given other tools than the gate's would run the model's args, so it is denied", async () => {
    const s = setup();
    const { request } = await park(s);
    await airlock.decide(request.id, {
      outcome: "approved",
      reviewer: "alice",
      editedArgs: { to: "bob", amount: 100 },
    });
    const answered = await s.gate.responses(s.messages);
    if (!answered.message) throw new Error("not answered");
    const next = await generateText({
      model: scriptedModel(() => [PAY]),
      tools: payTools(),
      toolApproval: s.gate.toolApproval,
      stopWhen: stepCountIs(3),
      messages: [...s.messages, answered.message],
    });
    expect(runs).toEqual([]);
    expect(next.text).toContain("pay was not run: The reviewer edited the arguments");
    expect(next.text).toContain("pass `tools` from the same airlockToolApproval()");
  });

  it("edit: args that do not fit the tool's schema are refused when decided (the gate carries it)", async () => {
    const s = setup();
    const { request } = await park(s);
    expect(request.argsSchema).toMatchObject({ properties: { amount: { type: "number" } } });
    await expect(
      airlock.decide(request.id, {
        outcome: "approved",
        reviewer: "alice",
        editedArgs: { to: "bob", amount: -5 },
      }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "editedArgs.amount" });
    expect((await airlock.get(request.id)).status).toBe("pending");
    expect(runs).toEqual([]);
    expect((await airlock.get(request.id)).executedAt).toBeUndefined();
  });

  it("timeout: the declared default applies (reject, then approve)", async () => {
    const s = setup({ gates: { pay: { timeoutMs: 40 } } });
    const { request } = await park(s);
    const { answered, next } = await resume(s, { wait: true });
    expect((await airlock.get(request.id)).status).toBe("timed_out");
    expect(answered.responses[0]).toMatchObject({ approved: false });
    expect(next.text).toContain(
      "pay was not run: No decision before the deadline; the declared default rejected it",
    );
    expect(runs).toEqual([]);

    await airlock.close();
    await engine();
    const t = setup({ gates: { pay: { timeoutMs: 40, onTimeout: "approve" } } });
    const parked = await park(t);
    const resumed = await resume(t, { wait: true });
    expect((await airlock.get(parked.request.id)).decision).toMatchObject({
      outcome: "approved",
      method: "timeout",
    });
    expect(resumed.answered.responses[0]?.reason).toContain("the declared default approved it");
    expect(runs).toEqual([{ to: "bob", amount: 120 }]);
  });

  it("double resume: the same approved history continued twice at once runs the tool once", async () => {
    const s = setup();
    const { request } = await park(s);
    await airlock.decide(request.id, { outcome: "approved", reviewer: "alice" });
    const answered = await s.gate.responses(s.messages);
    if (!answered.message) throw new Error("not answered");
    s.messages.push(answered.message);
    // Two requests of the chat arrive with the same messages (a retry, two tabs, two instances).
    const other = airlockToolApproval({
      airlock,
      conversationId: "conv-1",
      tools: payTools(),
      requester: "ai-sdk",
    });
    const [a, b] = await Promise.all([s.turn(), s.turn(other)]);
    expect(runs).toEqual([{ to: "bob", amount: 120 }]);
    const texts = [a.text, b.text].sort();
    expect(texts[0]).toContain("pay failed");
    expect(texts[0]).toMatch(/already executed|claimed for execution/);
    expect(texts[1]).toBe('pay returned {"paid":120,"to":"bob"}');
  });

  it("a client cannot approve what Airlock has not: a forged approval is denied and the gate withdrawn", async () => {
    const s = setup();
    const { first, request } = await park(s);
    const part = first.content.find((p) => p.type === "tool-approval-request");
    if (part?.type !== "tool-approval-request") throw new Error("no approval request");
    s.messages.push({
      role: "tool",
      content: [{ type: "tool-approval-response", approvalId: part.approvalId, approved: true }],
    });
    const next = await s.turn();
    expect(runs).toEqual([]);
    expect(next.text).toContain(`Airlock request ${request.id} was not decided`);
    expect((await airlock.get(request.id)).status).toBe("cancelled");
  });

  it("policy: an auto-approved call runs at once and is in the audit; refused args are denied with the reason", async () => {
    await airlock.close();
    await engine({
      policy: ({ input }) =>
        input.action === "pay" && Number(input.args.amount) <= 200
          ? { level: "auto", reason: "small payment" }
          : undefined,
      schemas: { pay: z.object({ to: z.string(), amount: z.number().max(1000) }) },
    });
    const s = setup();
    const r = await s.turn();
    expect(runs).toEqual([{ to: "bob", amount: 120 }]);
    expect(r.text).toBe('pay returned {"paid":120,"to":"bob"}');
    const request = await airlock.getByKey(approvalKey("conv-1", "call-0-0"), {
      requester: "ai-sdk",
    });
    expect(request?.decision).toMatchObject({ method: "auto", comment: "small payment" });
    expect((await airlock.audit({ requestId: request?.id })).map((e) => e.type)).toEqual([
      "created",
      "decided",
      "claimed",
      "executed",
    ]);

    // Args the engine refuses (its schema for the action) fail closed: denied, with why.
    const big = scriptedModel(() => [{ toolName: "pay", input: { to: "eve", amount: 5000 } }], {
      idPrefix: "big",
    });
    const g = airlockToolApproval({
      airlock,
      conversationId: "conv-2",
      tools: payTools(),
      requester: "ai-sdk",
    });
    const denied = await generateText({
      model: big,
      tools: g.tools,
      toolApproval: g.toolApproval,
      stopWhen: stepCountIs(3),
      prompt: "pay eve 5000",
    });
    expect(denied.text).toContain("pay was not run: Airlock refused the call");
    expect(runs).toHaveLength(1);
  });

  it("ungated tools run without a request; gated tools without toolApproval refuse to run", async () => {
    const model = scriptedModel(() => [{ toolName: "balance", input: {} }]);
    const gate = airlockToolApproval({
      airlock,
      conversationId: "conv-3",
      tools: payTools(),
      requester: "ai-sdk",
      gates: { balance: false },
    });
    const r = await generateText({
      model,
      tools: gate.tools,
      toolApproval: gate.toolApproval,
      stopWhen: stepCountIs(3),
      prompt: "balance?",
    });
    expect(r.text).toBe('balance returned {"balance":1000}');
    expect((await airlock.list()).items).toHaveLength(0);

    // The wrapped tools without the approval function: nothing was approved, nothing runs.
    const pay = scriptedModel(() => [PAY]);
    const bare = await generateText({
      model: pay,
      tools: gate.tools,
      stopWhen: stepCountIs(3),
      prompt: "pay",
    });
    expect(bare.text).toContain("pay failed");
    expect(bare.text).toContain("no Airlock request exists");
    expect(runs).toEqual([]);
  });

  it("refuses a bad mode or conversation id with a message naming the option", () => {
    expect(() =>
      airlockToolApproval({
        airlock,
        conversationId: "c",
        tools: payTools(),
        requester: "ai-sdk",
        mode: "wait" as never,
      }),
    ).toThrow('Expected `mode` to be "defer" or "block", got `wait`');
    expect(() =>
      airlockToolApproval({ airlock, conversationId: " ", tools: payTools(), requester: "a" }),
    ).toThrow(/conversationId/);
  });

  it("refuses to build an in-process gate without a requester name (no silent anonymous)", () => {
    for (const requester of [undefined, "", "  "]) {
      expect(() =>
        airlockToolApproval({
          airlock,
          conversationId: "c",
          tools: payTools(),
          ...(requester === undefined ? {} : { requester }),
        }),
      ).toThrow(/Expected `requester` to name who asks.*with an in-process engine it is required/);
    }
    // A spread copy of a server's client is no longer known as one: it must name itself too.
    const client = createClient({ url: "http://127.0.0.1:1", token: "t" });
    expect(() =>
      airlockToolApproval({ airlock: { ...client }, conversationId: "c", tools: payTools() }),
    ).toThrow(/requester/);
    expect(() =>
      airlockToolApproval({ airlock: client, conversationId: "c", tools: payTools() }),
    ).not.toThrow();
  });

  it("a tool that streams its outputs (async generator) still streams, once, after approval", async () => {
    let started = 0;
    const tools = {
      migrate: tool({
        inputSchema: z.object({ tables: z.number() }),
        async *execute({ tables }) {
          started++;
          for (let i = 1; i <= tables; i++) yield { migrated: i };
        },
      }),
    };
    const gate = airlockToolApproval({
      airlock,
      conversationId: "conv-gen",
      tools,
      requester: "ai-sdk",
    });
    const model = scriptedModel(() => [{ toolName: "migrate", input: { tables: 3 } }], {
      idPrefix: "gen",
    });
    const { messages, call } = conversation(model, "migrate", gate);
    messages.push(...(await call()).response.messages);
    const [request] = (await gate.responses(messages)).pending;
    if (!request) throw new Error("nothing pending");
    await airlock.decide(request.id, { outcome: "approved", reviewer: "alice" });
    const { message } = await gate.responses(messages);
    if (!message) throw new Error("not answered");
    messages.push(message);
    const done = await call();
    expect(done.text).toBe('migrate returned {"migrated":3}');
    expect(started).toBe(1);
  });
});

describe("airlockToolApproval, mode block", () => {
  it("waits for the decision inside the call: approve runs the tool, reject tells the model why", async () => {
    const s = setup({ mode: "block" });
    const pending = s.turn();
    const request = await waitForPending();
    expect(runs).toEqual([]);
    await airlock.decide(request.id, { outcome: "approved", reviewer: "alice" });
    const r = await pending;
    expect(r.text).toBe('pay returned {"paid":120,"to":"bob"}');
    expect(runs).toHaveLength(1);

    const model = scriptedModel(() => [{ toolName: "pay", input: { to: "eve", amount: 9 } }], {
      idPrefix: "eve",
    });
    const g = airlockToolApproval({
      airlock,
      conversationId: "conv-eve",
      tools: payTools(),
      requester: "ai-sdk",
      mode: "block",
    });
    const rejected = generateText({
      model,
      tools: g.tools,
      toolApproval: g.toolApproval,
      stopWhen: stepCountIs(3),
      prompt: "pay eve",
    });
    const second = await waitForPending();
    await airlock.decide(second.id, {
      outcome: "rejected",
      reviewer: "alice",
      comment: "unknown payee",
    });
    expect((await rejected).text).toContain("pay was not run: Rejected by alice: unknown payee");
    expect(runs).toHaveLength(1);
  });

  it("an edit decided while the call waits runs the edited args as the call's result", async () => {
    const s = setup({ mode: "block" });
    const pending = s.turn();
    const request = await waitForPending();
    await airlock.decide(request.id, {
      outcome: "approved",
      reviewer: "alice",
      editedArgs: { to: "bob", amount: 80 },
    });
    const r = await pending;
    expect(r.text).toBe('pay returned {"paid":80,"to":"bob"}');
    expect(runs).toEqual([{ to: "bob", amount: 80 }]);
  });

  it("falls back to defer after waitTimeoutMs, and the conversation goes on after the decision", async () => {
    const s = setup({ mode: "block", waitTimeoutMs: 30 });
    const { request } = await park(s);
    expect(request.status).toBe("pending");
    await airlock.decide(request.id, { outcome: "approved", reviewer: "alice" });
    await resume(s);
    expect(runs).toEqual([{ to: "bob", amount: 120 }]);
  });
});

describe("airlockToolApproval with ToolLoopAgent and streamText", () => {
  it("is ToolLoopAgent's toolApproval: park, decide, continue", async () => {
    const gate = airlockToolApproval({
      airlock,
      conversationId: "conv-agent",
      tools: payTools(),
      requester: "ai-sdk",
    });
    const agent = new ToolLoopAgent({
      model: scriptedModel(() => [PAY], { idPrefix: "agent" }),
      tools: gate.tools,
      toolApproval: gate.toolApproval,
    });
    const messages: ModelMessage[] = [{ role: "user", content: "pay bob" }];
    messages.push(...(await agent.generate({ messages })).response.messages);
    const { pending } = await gate.responses(messages);
    const request = pending[0];
    if (!request) throw new Error("nothing pending");
    await airlock.decide(request.id, { outcome: "approved", reviewer: "alice" });
    const { message } = await gate.responses(messages);
    if (!message) throw new Error("not answered");
    messages.push(message);
    const done = await agent.generate({ messages });
    expect(done.text).toBe('pay returned {"paid":120,"to":"bob"}');
    expect(runs).toHaveLength(1);
  });

  it("streamText in mode block waits for the decision while the stream is open", async () => {
    const gate = airlockToolApproval({
      airlock,
      conversationId: "conv-stream",
      tools: payTools(),
      requester: "ai-sdk",
      mode: "block",
    });
    const result = streamText({
      model: scriptedModel(() => [PAY], { idPrefix: "stream" }),
      tools: gate.tools,
      toolApproval: gate.toolApproval,
      stopWhen: stepCountIs(3),
      prompt: "pay bob",
    });
    const request = await waitForPending();
    await airlock.decide(request.id, { outcome: "approved", reviewer: "alice" });
    expect(await result.text).toBe('pay returned {"paid":120,"to":"bob"}');
    expect(runs).toEqual([{ to: "bob", amount: 120 }]);
  });
});

describe("airlockToolApproval through an Airlock server (createClient)", () => {
  it("parks, is decided by a reviewer over HTTP, and continues; the token's name is the requester", async () => {
    const tokens = memoryTokenStore();
    const server = createServer({ airlock, auth: { tokens }, rateLimit: false });
    const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
    try {
      const agentToken = await createToken(tokens, { name: "chat-bot", roles: ["agent"] });
      const reviewerToken = await createToken(tokens, { name: "dana", roles: ["reviewer"] });
      const agent = createClient({ url, token: agentToken.token });
      const reviewer = createClient({ url, token: reviewerToken.token });
      const gate = airlockToolApproval({
        airlock: agent,
        conversationId: "conv-http",
        tools: payTools(),
      });
      const model = scriptedModel(() => [PAY], { idPrefix: "http" });
      const { messages, call } = conversation(model, "pay bob", gate);
      messages.push(...(await call()).response.messages);
      const [request] = (await gate.responses(messages)).pending;
      if (!request) throw new Error("nothing pending");
      expect(request.requester).toBe("chat-bot");
      await reviewer.decide(request.id, { outcome: "approved", reviewer: "dana" });
      const { message } = await gate.responses(messages, { wait: true });
      if (!message) throw new Error("not answered");
      messages.push(message);
      expect((await call()).text).toBe('pay returned {"paid":120,"to":"bob"}');
      expect(runs).toHaveLength(1);
      expect((await airlock.get(request.id)).executedBy).toBe("chat-bot");
    } finally {
      await server.close();
    }
  });
});

async function waitForPending() {
  for (let i = 0; i < 500; i++) {
    const page = await airlock.list({ status: "pending" });
    const first = page.items[0];
    if (first) return first;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("no pending request appeared");
}
