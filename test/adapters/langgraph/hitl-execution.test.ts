// What the log says about calls langchain's humanInTheLoopMiddleware runs itself: the resumer claims
// each approved call before resuming and records `executed` only when the call's tool result
// appears in the thread afterwards. langchain 1.5 drops the approved call when one interrupt mixes
// approve and reject: the log then says the call did not run, whatever langchain does.
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, humanInTheLoopMiddleware, tool } from "langchain";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type HitlRequest,
  hitlToAirlock,
  isHitlRequest,
  resumeThread,
} from "../../../src/adapters/langgraph.js";
import { type Airlock, createAirlock, memoryStore } from "../../../src/index.js";

let airlock: Airlock;
beforeEach(async () => {
  airlock = await createAirlock({ store: memoryStore() });
});
afterEach(() => airlock.close());

/** An agent whose model asks to email each of `to` in one message, every call interrupted. */
function agent(to: string[]) {
  const ran: string[] = [];
  const sendEmail = tool(
    (args) => {
      ran.push(args.to);
      return `sent to ${args.to}`;
    },
    {
      name: "send_email",
      description: "Send an email",
      schema: z.object({ to: z.string(), body: z.string() }),
    },
  );
  const model = fakeModel();
  const reply = (messages: BaseMessage[]) => {
    const last = messages[messages.length - 1];
    if (last && ToolMessage.isInstance(last)) return new AIMessage("done");
    return new AIMessage({
      content: "",
      tool_calls: to.map((t, i) => ({
        name: "send_email",
        args: { to: t, body: "Hi" },
        id: `c${i}`,
        type: "tool_call" as const,
      })),
    });
  };
  for (let i = 0; i < 10; i++) model.respond(reply);
  const a = createAgent({
    model,
    tools: [sendEmail],
    middleware: [
      humanInTheLoopMiddleware({
        interruptOn: { send_email: { allowedDecisions: ["approve", "edit", "reject"] } },
      }),
    ],
    checkpointer: new MemorySaver(),
  });
  return { agent: a, ran };
}

async function parked(to: string[], thread: string) {
  const { agent: a, ran } = agent(to);
  const out = (await a.invoke(
    { messages: [{ role: "user", content: "email them" }] },
    { configurable: { thread_id: thread } },
  )) as { __interrupt__?: Array<{ id: string; value: unknown }> };
  const intr = out.__interrupt__?.[0];
  if (!intr || !isHitlRequest(intr.value)) throw new Error("no HITL interrupt");
  const requests = await hitlToAirlock(airlock, {
    threadId: thread,
    interruptId: intr.id,
    request: intr.value as HitlRequest,
    requester: "mail-agent",
  });
  return { a, ran, requests };
}

const types = async (id: string) => (await airlock.audit({ requestId: id })).map((e) => e.type);

describe("the HITL middleware's execution, as the log tells it", () => {
  it("an approved call that ran is claimed before the resume and executed after it", async () => {
    const { a, ran, requests } = await parked(["ann@example.com"], "x1");
    const [r] = requests;
    if (!r) throw new Error("no request");
    await airlock.decide(r.id, { outcome: "approved", reviewer: "alice" });
    const result = await resumeThread({
      graph: a.graph,
      airlock,
      threadId: "x1",
      hitlRequester: "mail-agent",
    });
    expect(result.resumed).toBe(true);
    expect(ran).toEqual(["ann@example.com"]);
    const after = await airlock.get(r.id);
    expect(after.execution).toMatchObject({ state: "executed", attempt: 1 });
    expect(after.execution?.resultDigest).toMatch(/^[0-9a-f]{64}$/);
    expect((await types(r.id)).slice(-2)).toEqual(["claimed", "executed"]);
  });

  it("one interrupt mixing approve and reject: the log says executed only if the tool ran", async () => {
    const { a, ran, requests } = await parked(["ann@example.com", "bob@example.com"], "x2");
    const [yes, no] = requests;
    if (!yes || !no) throw new Error("expected two requests");
    await airlock.decide(yes.id, { outcome: "approved", reviewer: "alice" });
    await airlock.decide(no.id, { outcome: "rejected", reviewer: "alice", comment: "not bob" });
    await resumeThread({ graph: a.graph, airlock, threadId: "x2", hitlRequester: "mail-agent" });
    const approved = await airlock.get(yes.id);
    const approvedRan = ran.includes("ann@example.com");
    // Whatever langchain does with the approved call, the log matches the tool's own record.
    expect(approved.execution?.state).toBe(approvedRan ? "executed" : "failed");
    expect((await types(yes.id)).includes("executed")).toBe(approvedRan);
    if (!approvedRan)
      expect(approved.execution?.error).toMatch(/^not run: .*dropped the approved call/);
    // The rejected call never ran and was never claimed.
    expect(ran).not.toContain("bob@example.com");
    expect((await airlock.get(no.id)).execution).toBeUndefined();
    process.stderr.write(
      `[hitl mixed] langchain ran the approved call: ${approvedRan} (logged ${approved.execution?.state})\n`,
    );
  });
});
