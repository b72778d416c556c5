// The humanInTheLoopMiddleware bridge over more than one interrupt: langchain's createAgent with a
// fake model that calls a gated tool, reads the result, and calls it again. The app bridges the
// first interrupt; `resumeOnDecision`, given the bridge's options, opens the request of the
// interrupt the resumed thread parks at, so the second call is put to a person too and the thread
// completes. Decisions come from outside the agent: in process (the engine), and over HTTP with an
// agent token for the agent and a reviewer token for the decisions.
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, humanInTheLoopMiddleware, tool } from "langchain";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type HitlBridgeOptions,
  type HitlRequest,
  hitlToAirlock,
  isHitlRequest,
  type Resumer,
  type ResumerApi,
  resumeOnDecision,
  resumeThread,
} from "../../../src/adapters/langgraph.js";
import {
  type Airlock,
  type ApprovalRequest,
  createAirlock,
  createClient,
} from "../../../src/index.js";
import { postgresStore } from "../../../src/store/postgres-entry.js";
import { sqliteStore } from "../../../src/store/sqlite-entry.js";
import { describePg, dropSchema, freshSchema } from "../../postgres/pg-env.js";
import { startTestServer, type TestServer } from "../../server/helpers.js";

const RECIPIENTS = ["ann@example.com", "bob@example.com"];

/** An agent that emails each recipient in turn, one gated tool call per model turn. */
function mailer() {
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
  const model = fakeModel();
  const reply = (messages: BaseMessage[]) => {
    const results = messages.filter((m) => ToolMessage.isInstance(m)).map((m) => String(m.content));
    const next = RECIPIENTS[results.length];
    if (next === undefined) return new AIMessage(`Done: ${results.join(" | ")}`);
    return new AIMessage({
      content: "",
      tool_calls: [
        {
          name: "send_email",
          args: { to: next, body: "Hi" },
          id: `c${results.length}`,
          type: "tool_call",
        },
      ],
    });
  };
  for (let i = 0; i < 10; i++) model.respond(reply);
  const agent = createAgent({
    model,
    tools: [sendEmail],
    middleware: [
      humanInTheLoopMiddleware({
        interruptOn: { send_email: { allowedDecisions: ["approve", "edit", "reject"] } },
      }),
    ],
    checkpointer: new MemorySaver(),
  });
  return { agent, ran };
}

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const found = await probe();
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Runs the mailer on `api` until both emails are sent: each pending request is approved by
 * `approve` (from outside the agent), `observer` watches the store. */
async function twoInterrupts(options: {
  api: ResumerApi;
  observer: Airlock;
  bridge: HitlBridgeOptions;
  approve: (id: string) => Promise<unknown>;
  pollMs?: number;
}) {
  const { api, observer, bridge } = options;
  const { agent, ran } = mailer();
  const thread = "mail-1";
  const out = (await agent.invoke(
    { messages: [{ role: "user", content: "email Ann, then Bob" }] },
    { configurable: { thread_id: thread } },
  )) as { __interrupt__?: Array<{ id: string; value: unknown }> };
  const first = out.__interrupt__?.[0];
  if (!first || !isHitlRequest(first.value)) throw new Error("no HITL interrupt");
  // The app bridges the first interrupt; the resumer, given the same options, every later one.
  const [r1] = await hitlToAirlock(api, {
    ...bridge,
    threadId: thread,
    interruptId: first.id,
    request: first.value as HitlRequest,
  });
  if (!r1) throw new Error("no request opened");

  const resumed: ApprovalRequest[][] = [];
  const errors: unknown[] = [];
  const resumer: Resumer = resumeOnDecision({
    graph: agent.graph,
    airlock: api,
    hitl: bridge,
    ...(options.pollMs ? { pollMs: options.pollMs } : {}),
    onResumed: (_t, result) => resumed.push(result.opened),
    onError: (err) => errors.push(err),
  });
  stops.push(() => resumer.stop());
  await resumer.ready;

  await options.approve(r1.id);
  // The resumed run calls send_email again and parks at a new interrupt: a second request opens.
  const r2 = await until("a second request", async () => {
    const pending = await observer.list({ status: "pending", action: "tool.send_email" });
    return pending.items.find((r) => r.id !== r1.id);
  });
  expect(ran).toEqual([{ to: "ann@example.com", body: "Hi" }]);
  expect(r2).toMatchObject({
    args: { to: "bob@example.com", body: "Hi" },
    requester: r1.requester,
    metadata: { langgraph: { kind: "hitl", threadId: thread, index: 0, tool: "send_email" } },
  });
  const lg = (r: ApprovalRequest) => r.metadata.langgraph as { interruptId: string };
  expect(lg(r2).interruptId).not.toBe(lg(r1).interruptId);
  // The resume that opened it reports it (it returns after opening it).
  await until("the first resume", async () => (resumed.length >= 1 ? true : undefined));
  expect(resumed[0]?.map((r) => r.id)).toEqual([r2.id]);

  await options.approve(r2.id);
  await until("the second resume", async () => (resumed.length >= 2 ? true : undefined));
  await resumer.stop();
  expect(errors).toEqual([]);
  expect(ran).toEqual([
    { to: "ann@example.com", body: "Hi" },
    { to: "bob@example.com", body: "Hi" },
  ]);
  expect(resumed[1]).toEqual([]); // the thread finished: nothing more to ask
  const state = await agent.graph.getState({ configurable: { thread_id: thread } });
  expect(state.next).toEqual([]);
  const messages = (state.values as { messages: BaseMessage[] }).messages;
  expect(String(messages.at(-1)?.content)).toBe(
    "Done: sent to ann@example.com | sent to bob@example.com",
  );
  const asked = await observer.list({ action: "tool.send_email" });
  expect(asked.items.map((r) => r.status)).toEqual(["approved", "approved"]);
}

describe("HITL bridge: a resumed thread that parks again gets its new request opened", () => {
  it("in process (SQLite): two interrupts, two requests, both approved, the thread completes", async () => {
    const airlock = await createAirlock({ store: sqliteStore(":memory:") });
    stops.push(() => airlock.close());
    await twoInterrupts({
      api: airlock,
      observer: airlock,
      bridge: { requester: "mail-agent" },
      approve: (id) => airlock.decide(id, { outcome: "approved", reviewer: "alice" }),
    });
  });

  it("a resumer started later opens the request of an interrupt a resume left unbridged", async () => {
    const airlock = await createAirlock({ store: sqliteStore(":memory:") });
    stops.push(() => airlock.close());
    const { agent, ran } = mailer();
    const config = { configurable: { thread_id: "mail-2" } };
    const out = (await agent.invoke(
      { messages: [{ role: "user", content: "email both" }] },
      config,
    )) as {
      __interrupt__?: Array<{ id: string; value: unknown }>;
    };
    const first = out.__interrupt__?.[0];
    if (!first || !isHitlRequest(first.value)) throw new Error("no HITL interrupt");
    const bridge = { requester: "mail-agent" };
    const [r1] = await hitlToAirlock(airlock, {
      ...bridge,
      threadId: "mail-2",
      interruptId: first.id,
      request: first.value,
    });
    if (!r1) throw new Error("no request opened");
    await airlock.decide(r1.id, { outcome: "approved", reviewer: "alice" });
    // A resume without the bridge's options (or one that died before bridging): parked, unasked.
    expect(
      (
        await resumeThread({
          graph: agent.graph,
          airlock,
          threadId: "mail-2",
          hitlRequester: "mail-agent",
        })
      ).resumed,
    ).toBe(true);
    expect((await airlock.list({ status: "pending" })).items).toEqual([]);

    const resumed: string[] = [];
    const resumer = resumeOnDecision({
      graph: agent.graph,
      airlock,
      hitl: bridge,
      onResumed: (t) => resumed.push(t),
    });
    stops.push(() => resumer.stop());
    await resumer.ready; // its catch-up reads r1's decision and finds the thread parked again
    const r2 = await until("the second request", async () => {
      return (await airlock.list({ status: "pending", action: "tool.send_email" })).items[0];
    });
    expect(r2.args).toEqual({ to: "bob@example.com", body: "Hi" });
    await airlock.decide(r2.id, { outcome: "approved", reviewer: "alice" });
    await until("the resume", async () => (resumed.length >= 1 ? true : undefined));
    expect(ran).toHaveLength(2);
    expect((await agent.graph.getState(config)).next).toEqual([]);
  });

  it("over HTTP: the agent's token names the requester, a reviewer decides through the API", async () => {
    const srv: TestServer = await startTestServer();
    stops.push(() => srv.close());
    const agent = createClient({ url: srv.url, token: srv.tokens.agent, pollMs: 50 });
    const reviewer = createClient({ url: srv.url, token: srv.tokens.alice });
    await twoInterrupts({
      api: agent,
      observer: srv.airlock,
      bridge: {},
      pollMs: 50,
      approve: (id) => reviewer.decide(id, { outcome: "approved", reviewer: "alice" }),
    });
    const asked = await srv.airlock.list({ action: "tool.send_email" });
    expect(asked.items.map((r) => r.requester)).toEqual(["bot", "bot"]);
  });
});

await describePg("HITL bridge on PostgreSQL", ({ url }) => {
  it("two interrupts, two requests, both approved, the thread completes", async () => {
    const schema = freshSchema("airlock_hitl");
    stops.push(() => dropSchema(url, schema));
    const airlock = await createAirlock({ store: postgresStore(url, { schema }) });
    stops.push(() => airlock.close());
    await twoInterrupts({
      api: airlock,
      observer: airlock,
      bridge: { requester: "mail-agent" },
      approve: (id) => airlock.decide(id, { outcome: "approved", reviewer: "alice" }),
    });
  });
});
