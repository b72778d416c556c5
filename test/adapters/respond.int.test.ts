// A reviewer's `respond` (issue 33, item 4) through each adapter, against a real server on loopback
// with an agent token for the agent and a reviewer token for the answer: the tool never runs, its
// execution is never claimed, and the answer reaches the model where the framework lets it:
//   - LangGraph `airlockGate`: `gate.response` (status `responded`), for the node to use;
//   - LangChain's HITL middleware (no respond decision in v1): a reject whose message is the answer,
//     so the answer is the call's ToolMessage;
//   - OpenAI Agents (no respond in the SDK): the call is rejected with the answer as its message,
//     which is the tool output the model reads;
//   - AI SDK: answered as approved, and the gated tool's `execute` returns the answer instead of
//     running, so the answer is the call's result.
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { Agent, tool as agentsTool, Runner } from "@openai/agents";
import { tool as aiTool, generateText, type ModelMessage, stepCountIs } from "ai";
import { createAgent, humanInTheLoopMiddleware, tool as lcTool } from "langchain";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { scriptedModel as aiModel } from "../../examples/adapters/ai-sdk/fake-model.js";
import { FakeModel } from "../../examples/adapters/openai-agents/fake-model.js";
import { airlockToolApproval } from "../../src/adapters/ai-sdk.js";
import {
  airlockGate,
  hitlToAirlock,
  isGateInterrupt,
  isHitlRequest,
  resumeThread,
} from "../../src/adapters/langgraph.js";
import {
  airlockNeedsApproval,
  parkInterruptions,
  resumeRun,
} from "../../src/adapters/openai-agents.js";
import { createClient } from "../../src/index.js";
import { startTestServer, type TestServer } from "../server/helpers.js";

let s: TestServer;
beforeEach(async () => {
  s = await startTestServer();
});
afterEach(async () => {
  await s.close();
});

const payment = z.object({ amountCents: z.number().int().positive(), payee: z.string() });
const CALL = { amountCents: 480000, payee: "ACME" };

const agentClient = () => createClient({ url: s.url, token: s.tokens.agent, pollMs: 50 });

async function respond(id: string, response: unknown) {
  const r = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
    outcome: "responded",
    response,
  });
  expect(r.status).toBe(200);
  expect(r.body.status).toBe("responded");
}

function lastText(values: unknown): string {
  const messages = (values as { messages: BaseMessage[] }).messages;
  return String(messages[messages.length - 1]?.content);
}

function langchainModel() {
  const model = fakeModel();
  const reply = (messages: BaseMessage[]) => {
    const last = messages[messages.length - 1];
    if (last && ToolMessage.isInstance(last)) return new AIMessage(`Read: ${String(last.content)}`);
    return new AIMessage({
      content: "",
      tool_calls: [{ name: "pay", args: CALL, id: "call-1", type: "tool_call" }],
    });
  };
  for (let i = 0; i < 10; i++) model.respond(reply);
  return model;
}

describe("respond through the adapters, on a real server", () => {
  it("LangGraph airlockGate: the answer comes back as gate.response; nothing runs", async () => {
    const airlock = agentClient();
    const ran: unknown[] = [];
    const model = langchainModel();
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
      .addNode("review", async (state) => {
        const last = state.messages[state.messages.length - 1] as AIMessage;
        const out: ToolMessage[] = [];
        for (const tc of last.tool_calls ?? []) {
          const gate = await airlockGate(airlock, {
            title: "Pay",
            args: tc.args,
            allowed: ["approve", "reject", "respond"],
            requester: "bot",
            schema: payment,
          });
          let content: string;
          if (gate.status === "responded") {
            content = `the person answered: ${JSON.stringify(gate.response)} (${gate.reason})`;
          } else {
            const r = await gate.run((args) => ran.push(args));
            content = r.ok ? "paid" : `not run: ${r.detail}`;
          }
          out.push(new ToolMessage({ content, tool_call_id: tc.id ?? "", name: tc.name }));
        }
        return { messages: out };
      })
      .addEdge(START, "agent")
      .addConditionalEdges("agent", (state) => {
        const last = state.messages[state.messages.length - 1] as AIMessage;
        return last.tool_calls?.length ? "review" : END;
      })
      .addEdge("review", "agent")
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "r1" } };
    const out = (await graph.invoke({ messages: [{ role: "user", content: "pay" }] }, config)) as {
      __interrupt__?: Array<{ value: unknown }>;
    };
    const value = out.__interrupt__?.[0]?.value;
    if (!isGateInterrupt(value)) throw new Error("the graph did not park");
    await respond(value.airlock.requestId, { paidBy: "bank transfer", reference: "TX-9" });
    expect((await resumeThread({ graph, airlock, threadId: "r1" })).resumed).toBe(true);
    expect(ran).toEqual([]);
    expect(lastText((await graph.getState(config)).values)).toBe(
      'Read: the person answered: {"paidBy":"bank transfer","reference":"TX-9"} (Pay: answered instead of approved by alice; the answer: {"paidBy":"bank transfer","reference":"TX-9"})',
    );
    expect((await s.airlock.get(value.airlock.requestId)).execution).toBeUndefined();
  });

  it("LangChain HITL middleware: the answer is the call's ToolMessage; the tool does not run", async () => {
    const airlock = agentClient();
    const ran: unknown[] = [];
    const pay = lcTool((args) => ran.push(args), {
      name: "pay",
      description: "Pay",
      schema: payment,
    });
    const agent = createAgent({
      model: langchainModel(),
      tools: [pay],
      middleware: [
        humanInTheLoopMiddleware({
          interruptOn: { pay: { allowedDecisions: ["approve", "edit", "reject"] } },
        }),
      ],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "r2" } };
    const out = (await agent.invoke({ messages: [{ role: "user", content: "pay" }] }, config)) as {
      __interrupt__?: Array<{ id: string; value: unknown }>;
    };
    const intr = out.__interrupt__?.[0];
    if (!intr || !isHitlRequest(intr.value)) throw new Error("no HITL interrupt");
    const [r] = await hitlToAirlock(airlock, {
      threadId: "r2",
      interruptId: intr.id,
      request: intr.value,
      tools: [pay],
      respond: true,
      responseSchema: { type: "string", minLength: 1 },
    });
    if (!r) throw new Error("no request");
    expect(r.allowed).toContain("respond");
    // The response schema holds: a number is refused.
    const wrong = await s.call(s.tokens.alice, "POST", `/v1/requests/${r.id}/decisions`, {
      outcome: "responded",
      response: 42,
    });
    expect(wrong.status).toBe(422);
    await respond(r.id, "Already paid by hand, reference TX-9");
    expect((await resumeThread({ graph: agent.graph, airlock, threadId: "r2" })).resumed).toBe(
      true,
    );
    expect(ran).toEqual([]);
    expect(lastText((await agent.graph.getState(config)).values)).toBe(
      "Read: Already paid by hand, reference TX-9",
    );
    expect((await s.airlock.get(r.id)).execution).toBeUndefined();
  });

  it("OpenAI Agents: the call is rejected with the answer as its output; the tool does not run", async () => {
    const airlock = agentClient();
    const paid: unknown[] = [];
    const pay = agentsTool({
      name: "pay",
      description: "Pay",
      parameters: payment,
      needsApproval: airlockNeedsApproval(airlock, { tool: "pay" }),
      execute: async (args) => {
        paid.push(args);
        return "paid";
      },
    });
    const agent = new Agent({
      name: "payer",
      instructions: "Pay.",
      tools: [pay],
      model: new FakeModel({ tool: "pay", calls: [CALL] }),
    });
    const runner = new Runner({ tracingDisabled: true });
    const { requests } = await parkInterruptions(airlock, await runner.run(agent, "Pay."), {
      respond: true,
    });
    const id = requests[0]?.id as string;
    expect(requests[0]?.allowed).toEqual(["approve", "reject", "revise", "edit", "respond"]);
    await respond(id, "Already paid by hand");
    const out = await resumeRun(airlock, runner, agent, id);
    if (out.status !== "resumed") throw new Error(`not resumed: ${out.status}`);
    expect(paid).toEqual([]);
    expect(String(out.result.finalOutput)).toBe(
      "Done. alice answered this pay call instead of running it (it was not executed). Their answer: Already paid by hand",
    );
    expect((await s.airlock.get(id)).execution).toBeUndefined();
  });

  it("AI SDK: the answer is the call's result; the tool does not run", async () => {
    const paid: unknown[] = [];
    const tools = {
      pay: aiTool({
        description: "Pay",
        inputSchema: payment,
        execute: async (args) => {
          paid.push(args);
          return "paid";
        },
      }),
    };
    const gate = airlockToolApproval({
      airlock: agentClient(),
      conversationId: "conv-respond",
      tools,
      gates: { pay: { responseSchema: { type: "object", required: ["status"] } } },
    });
    const model = aiModel(() => [{ toolName: "pay", input: CALL }]);
    const messages: ModelMessage[] = [{ role: "user", content: "pay ACME" }];
    const call = () =>
      generateText({
        model,
        tools: gate.tools,
        toolApproval: gate.toolApproval,
        stopWhen: stepCountIs(3),
        messages: [...messages],
      });
    messages.push(...(await call()).response.messages);
    const [request] = (await gate.responses(messages)).pending;
    if (!request) throw new Error("nothing pending");
    expect(request.allowed).toContain("respond");
    await respond(request.id, { status: "done by hand" });
    const { message } = await gate.responses(messages, { wait: true });
    if (!message) throw new Error("not answered");
    messages.push(message);
    expect((await call()).text).toBe('pay returned {"status":"done by hand"}');
    expect(paid).toEqual([]);
    expect((await s.airlock.get(request.id)).execution).toBeUndefined();
  });
});
