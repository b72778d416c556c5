// The tool's own schema through airlock/langgraph (issue 33, item 3), against a real server on
// loopback that was given no schema (as `airlock serve`), with an agent token for the graph and a
// reviewer token for the decisions: `airlockGate` with `schema` and the HITL middleware bridge with
// `tools` send the tool's JSON Schema, an edit of `amountCents` to "lots" is refused with 422 and
// leaves the gate pending (the tool never runs with it, and the approval is not used up), and a
// fitting edit comes back parsed by the tool's zod schema, typed by it.
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { createAgent, humanInTheLoopMiddleware, tool } from "langchain";
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  airlockGate,
  type GateApi,
  hitlKey,
  hitlToAirlock,
  isGateInterrupt,
  isHitlRequest,
  resumeThread,
} from "../../../src/adapters/langgraph.js";
import { createClient } from "../../../src/index.js";
import { startTestServer, type TestServer } from "../../server/helpers.js";

let s: TestServer;
beforeEach(async () => {
  s = await startTestServer();
});
afterEach(async () => {
  await s.close();
});

const payment = z.object({
  amountCents: z.number().int().positive(),
  payee: z.string(),
  currency: z.string().default("EUR"),
});
type Payment = z.output<typeof payment>;

function scriptedModel(args: Record<string, unknown>) {
  const model = fakeModel();
  const reply = (messages: BaseMessage[]) => {
    const last = messages[messages.length - 1];
    if (last && ToolMessage.isInstance(last)) return new AIMessage(`Done: ${String(last.content)}`);
    return new AIMessage({
      content: "",
      tool_calls: [{ name: "pay", args, id: "call-1", type: "tool_call" }],
    });
  };
  for (let i = 0; i < 10; i++) model.respond(reply);
  return model;
}

/** A graph whose `review` node gates the model's `pay` call with the tool's schema. */
function gatedGraph(airlock: GateApi) {
  const paid: Payment[] = [];
  const model = scriptedModel({ amountCents: 480000, payee: "ACME" });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("review", async (state) => {
      const last = state.messages[state.messages.length - 1] as AIMessage;
      const out: ToolMessage[] = [];
      for (const tc of last.tool_calls ?? []) {
        const gate = await airlockGate(airlock, {
          action: "payments.pay",
          title: "Pay",
          args: tc.args,
          allowed: ["approve", "reject", "edit"],
          requester: "bot",
          schema: payment,
        });
        expectTypeOf(gate.args).toEqualTypeOf<Payment | undefined>();
        let content: string;
        if (gate.approved) {
          const ran = await gate.run((args) => {
            expectTypeOf(args).toEqualTypeOf<Payment>();
            paid.push(args);
            return `paid ${args.amountCents} ${args.currency} cents to ${args.payee}`;
          });
          content = ran.ok ? ran.value : `not run: ${ran.detail}`;
        } else {
          content = `not approved: ${gate.reason}`;
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
  return { graph, paid };
}

const thread = (id: string) => ({ configurable: { thread_id: id } });

async function editTo(id: string, editedArgs: Record<string, unknown>) {
  return s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
    outcome: "approved",
    editedArgs,
  });
}

function lastText(values: unknown): string {
  const messages = (values as { messages: BaseMessage[] }).messages;
  return String(messages[messages.length - 1]?.content);
}

function payAgent(paid: unknown[]) {
  const pay = tool(
    (args) => {
      paid.push(args);
      return `paid ${args.amountCents} cents`;
    },
    { name: "pay", description: "Pay a supplier", schema: payment },
  );
  const agent = createAgent({
    model: scriptedModel({ amountCents: 480000, payee: "ACME" }),
    tools: [pay],
    middleware: [
      humanInTheLoopMiddleware({
        interruptOn: { pay: { allowedDecisions: ["approve", "edit", "reject"] } },
      }),
    ],
    checkpointer: new MemorySaver(),
  });
  return { pay, agent };
}

describe("airlock/langgraph: the tool's schema, on a server with none of its own", () => {
  it("airlockGate: a wrongly typed edit is refused (422), a fitting one runs parsed and typed", async () => {
    const airlock = createClient({ url: s.url, token: s.tokens.agent, pollMs: 50 });
    const { graph, paid } = gatedGraph(airlock);
    const out = (await graph.invoke(
      { messages: [{ role: "user", content: "pay ACME" }] },
      thread("g1"),
    )) as { __interrupt__?: Array<{ value: unknown }> };
    const value = out.__interrupt__?.[0]?.value;
    if (!isGateInterrupt(value)) throw new Error("the graph did not park");
    const id = value.airlock.requestId;
    expect((await s.airlock.get(id)).argsSchema).toEqual(z.toJSONSchema(payment, { io: "input" }));

    const lots = await editTo(id, { amountCents: "lots", payee: "ACME" });
    expect(lots.status).toBe(422);
    expect(lots.body.field).toBe("editedArgs.amountCents");
    expect(lots.body.detail).toContain('amountCents: expected a number, got the text "lots"');
    expect(lots.body.detail).not.toContain("`");
    expect((await s.airlock.get(id)).status).toBe("pending");
    // Resuming now wakes nothing: the gate is still pending, the tool did not run.
    expect(await resumeThread({ graph, airlock, threadId: "g1" })).toMatchObject({
      resumed: false,
      reason: "pending",
    });
    expect(paid).toEqual([]);

    expect((await editTo(id, { amountCents: 400000, payee: "ACME" })).status).toBe(200);
    expect((await resumeThread({ graph, airlock, threadId: "g1" })).resumed).toBe(true);
    expect(paid).toEqual([{ amountCents: 400000, payee: "ACME", currency: "EUR" }]);
    expect(lastText((await graph.getState(thread("g1"))).values)).toBe(
      "Done: paid 400000 EUR cents to ACME",
    );
    expect((await s.airlock.get(id)).execution?.state).toBe("executed");
  });

  it("airlockGate: approved args a refinement refuses are not run and nothing is claimed", async () => {
    const airlock = createClient({ url: s.url, token: s.tokens.agent, pollMs: 50 });
    const whole = payment.refine((p) => p.amountCents % 100 === 0, {
      message: "whole euros only",
      path: ["amountCents"],
    });
    const ran: unknown[] = [];
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("review", async () => {
        const gate = await airlockGate(airlock, {
          title: "Pay",
          args: { amountCents: 5000, payee: "ACME" },
          allowed: ["approve", "edit"],
          requester: "bot",
          schema: whole,
        });
        const r = await gate.run((args) => ran.push(args));
        return {
          messages: [new AIMessage(gate.approved ? "ran" : `${gate.reason} / ${r.ok || r.reason}`)],
        };
      })
      .addEdge(START, "review")
      .addEdge("review", END)
      .compile({ checkpointer: new MemorySaver() });
    const out = (await graph.invoke({ messages: [] }, thread("g2"))) as {
      __interrupt__?: Array<{ value: unknown }>;
    };
    const value = out.__interrupt__?.[0]?.value;
    if (!isGateInterrupt(value)) throw new Error("the graph did not park");
    const id = value.airlock.requestId;
    expect((await editTo(id, { amountCents: 4999, payee: "ACME" })).status).toBe(200);
    await resumeThread({ graph, airlock, threadId: "g2" });
    expect(ran).toEqual([]);
    expect(lastText((await graph.getState(thread("g2"))).values)).toBe(
      "the approved arguments do not fit the tool's schema: amountCents: whole euros only / not_approved",
    );
    expect((await s.airlock.get(id)).execution).toBeUndefined();
  });

  it("HITL middleware bridge with the agent's tools: 422 for the wrong type, the fitting edit runs", async () => {
    const airlock = createClient({ url: s.url, token: s.tokens.agent, pollMs: 50 });
    const paid: unknown[] = [];
    const { pay, agent } = payAgent(paid);
    const out = (await agent.invoke(
      { messages: [{ role: "user", content: "pay ACME" }] },
      thread("m1"),
    )) as { __interrupt__?: Array<{ id: string; value: unknown }> };
    const intr = out.__interrupt__?.[0];
    if (!intr || !isHitlRequest(intr.value)) throw new Error("no HITL interrupt");
    const [r] = await hitlToAirlock(airlock, {
      threadId: "m1",
      interruptId: intr.id,
      request: intr.value,
      tools: [pay],
    });
    if (!r) throw new Error("no request");
    expect(r.argsSchema).toEqual(z.toJSONSchema(payment, { io: "input" }));
    // Bridged again with other options (a resumer given no tools): the same request, no conflict.
    const [again] = await hitlToAirlock(airlock, {
      threadId: "m1",
      interruptId: intr.id,
      request: intr.value,
    });
    expect(again?.id).toBe(r.id);
    expect(again?.argsSchema).toEqual(r.argsSchema);

    const lots = await editTo(r.id, { amountCents: "lots", payee: "ACME" });
    expect(lots.status).toBe(422);
    expect(lots.body.detail).toContain('amountCents: expected a number, got the text "lots"');
    expect((await s.airlock.get(r.id)).status).toBe("pending");
    expect(await resumeThread({ graph: agent.graph, airlock, threadId: "m1" })).toMatchObject({
      resumed: false,
      reason: "pending",
    });
    expect(paid).toEqual([]);

    expect((await editTo(r.id, { amountCents: 400000, payee: "ACME" })).status).toBe(200);
    expect((await resumeThread({ graph: agent.graph, airlock, threadId: "m1" })).resumed).toBe(
      true,
    );
    expect(paid).toEqual([{ amountCents: 400000, payee: "ACME", currency: "EUR" }]);
    expect((await s.airlock.get(r.id)).execution?.state).toBe("executed");
  });

  it("the HITL resumer given the tools (hitl: { tools }) opens the request with the schema", async () => {
    const airlock = createClient({ url: s.url, token: s.tokens.agent, pollMs: 50 });
    const paid: unknown[] = [];
    const { pay, agent } = payAgent(paid);
    const out = (await agent.invoke(
      { messages: [{ role: "user", content: "pay ACME" }] },
      thread("m2"),
    )) as { __interrupt__?: Array<{ id: string; value: unknown }> };
    const intr = out.__interrupt__?.[0];
    if (!intr) throw new Error("no HITL interrupt");
    expect(
      await resumeThread({ graph: agent.graph, airlock, threadId: "m2", hitl: { tools: [pay] } }),
    ).toMatchObject({ resumed: false, reason: "pending" });
    const r = await airlock.getByKey(hitlKey("m2", intr.id, 0));
    expect(r?.argsSchema).toEqual(z.toJSONSchema(payment, { io: "input" }));
    const lots = await editTo(r?.id ?? "", { amountCents: "lots", payee: "ACME" });
    expect(lots.status).toBe(422);
    expect(paid).toEqual([]);
  });
});
