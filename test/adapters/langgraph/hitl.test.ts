// The humanInTheLoopMiddleware bridge, with langchain's createAgent, a fake tool-calling model and
// MemorySaver: each interrupt's action requests become Airlock requests (one per tool call, allowed
// decisions from the review config), and Airlock's decisions become the middleware's resume payload.
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, humanInTheLoopMiddleware, tool } from "langchain";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  airlockToHitlResponse,
  type HitlRequest,
  hitlToAirlock,
  isHitlRequest,
  resumeOnDecision,
  resumeThread,
} from "../../../src/adapters/langgraph.js";
import { type Airlock, createAirlock, memoryStore } from "../../../src/index.js";

let airlock: Airlock;
beforeEach(async () => {
  airlock = await createAirlock({ store: memoryStore() });
});
afterEach(() => airlock.close());

function agent() {
  const ran: unknown[] = [];
  const sendEmail = tool(
    (args) => {
      ran.push(args);
      return `sent to ${args.to}`;
    },
    {
      name: "send_email",
      description: "Send an email",
      schema: z.object({ to: z.string(), body: z.string() }),
    },
  );
  const readInbox = tool(() => "3 unread", {
    name: "read_inbox",
    description: "Read the inbox",
    schema: z.object({}),
  });
  const model = fakeModel();
  const reply = (messages: BaseMessage[]) => {
    const last = messages[messages.length - 1];
    if (last && ToolMessage.isInstance(last)) {
      const results = messages
        .filter((m) => ToolMessage.isInstance(m))
        .map((m) => String(m.content))
        .sort();
      return new AIMessage(`Results: ${results.join(" | ")}`);
    }
    return new AIMessage({
      content: "",
      tool_calls: [
        {
          name: "send_email",
          args: { to: "ann@example.com", body: "Hi" },
          id: "c1",
          type: "tool_call",
        },
        { name: "read_inbox", args: {}, id: "c2", type: "tool_call" },
      ],
    });
  };
  for (let i = 0; i < 10; i++) model.respond(reply);
  const a = createAgent({
    model,
    tools: [sendEmail, readInbox],
    middleware: [
      humanInTheLoopMiddleware({
        interruptOn: { send_email: { allowedDecisions: ["approve", "edit", "reject"] } },
      }),
    ],
    checkpointer: new MemorySaver(),
  });
  return { agent: a, ran };
}

async function interrupted(a: ReturnType<typeof agent>["agent"], thread: string) {
  const out = (await a.invoke(
    { messages: [{ role: "user", content: "email Ann" }] },
    { configurable: { thread_id: thread } },
  )) as { __interrupt__?: Array<{ id: string; value: unknown }> };
  const intr = out.__interrupt__?.[0];
  if (!intr || !isHitlRequest(intr.value)) throw new Error("no HITL interrupt");
  return { interruptId: intr.id, request: intr.value as HitlRequest };
}

function lastText(values: { messages: BaseMessage[] }): string {
  return String(values.messages[values.messages.length - 1]?.content);
}

describe("humanInTheLoopMiddleware bridge", () => {
  it("opens one Airlock request per interrupted tool call, idempotently, with the review config", async () => {
    const { agent: a } = agent();
    const { interruptId, request } = await interrupted(a, "h1");
    const opts = { threadId: "h1", interruptId, request, requester: "mail-agent" };
    const [r] = await hitlToAirlock(airlock, opts);
    expect((await hitlToAirlock(airlock, opts))[0]?.id).toBe(r?.id);
    expect(r).toMatchObject({
      action: "tool.send_email",
      args: { to: "ann@example.com", body: "Hi" },
      allowed: ["approve", "edit", "reject"],
      status: "pending",
      metadata: { langgraph: { kind: "hitl", threadId: "h1", index: 0, tool: "send_email" } },
    });
    expect((await airlock.list({ status: "pending" })).items).toHaveLength(1);
  });

  it("an approval and an edit map onto the middleware's decisions", async () => {
    const { agent: a, ran } = agent();
    const { interruptId, request } = await interrupted(a, "h2");
    const [r] = await hitlToAirlock(airlock, { threadId: "h2", interruptId, request });
    if (!r) throw new Error("no request");
    await airlock.decide(r.id, {
      outcome: "approved",
      method: "edit",
      editedArgs: { to: "ann@example.com", body: "Hello Ann" },
      reviewer: "alice",
    });
    const settled = await airlock.get(r.id);
    expect(airlockToHitlResponse([settled], request)).toEqual({
      decisions: [
        {
          type: "edit",
          editedAction: { name: "send_email", args: { to: "ann@example.com", body: "Hello Ann" } },
        },
      ],
    });
    const result = await resumeThread({ graph: a.graph, airlock, threadId: "h2" });
    expect(result.resumed).toBe(true);
    expect(ran).toEqual([{ to: "ann@example.com", body: "Hello Ann" }]);
    const state = await a.graph.getState({ configurable: { thread_id: "h2" } });
    expect(lastText(state.values as { messages: BaseMessage[] })).toBe(
      "Results: 3 unread | sent to ann@example.com",
    );
  });

  it("a rejection resumes the agent with the reviewer's words; a second resume does nothing", async () => {
    const { agent: a, ran } = agent();
    const { interruptId, request } = await interrupted(a, "h3");
    const [r] = await hitlToAirlock(airlock, { threadId: "h3", interruptId, request });
    if (!r) throw new Error("no request");
    const resumed: string[] = [];
    const one = resumeOnDecision({ graph: a.graph, airlock, onResumed: (t) => resumed.push(t) });
    const two = resumeOnDecision({ graph: a.graph, airlock, onResumed: (t) => resumed.push(t) });
    await Promise.all([one.ready, two.ready]);
    await airlock.decide(r.id, {
      outcome: "rejected",
      reviewer: "bob",
      comment: "wrong recipient",
    });
    await airlock.waitFor(r.id);
    for (let i = 0; i < 100 && resumed.length === 0; i++)
      await new Promise((s) => setTimeout(s, 10));
    await Promise.all([one.stop(), two.stop()]);
    expect(resumed).toEqual(["h3"]);
    expect(ran).toEqual([]);
    const state = await a.graph.getState({ configurable: { thread_id: "h3" } });
    expect(lastText(state.values as { messages: BaseMessage[] })).toBe(
      "Results: Run send_email: rejected by bob: wrong recipient",
    );
  });

  it("a timeout becomes a rejection, or an approval when the request declared onTimeout: approve", async () => {
    const { agent: a, ran } = agent();
    const { interruptId, request } = await interrupted(a, "h4");
    const [r] = await hitlToAirlock(airlock, {
      threadId: "h4",
      interruptId,
      request,
      timeoutMs: 20,
      onTimeout: "approve",
    });
    if (!r) throw new Error("no request");
    await airlock.waitFor(r.id);
    expect((await resumeThread({ graph: a.graph, airlock, threadId: "h4" })).resumed).toBe(true);
    expect(ran).toEqual([{ to: "ann@example.com", body: "Hi" }]);

    const timedOut = { ...(await airlock.get(r.id)), status: "timed_out" as const };
    delete timedOut.decision;
    expect(airlockToHitlResponse([timedOut]).decisions[0]).toMatchObject({ type: "reject" });
  });
});
