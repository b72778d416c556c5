// airlock/ai-sdk in a chat built on `useChat`: the server gets UI messages each turn, streams with
// `streamText(...).toUIMessageStream()`, and the client answers approvals with
// `addToolApprovalResponse` (simulated here by editing the part as that function does). Real `ai` 7,
// its mock model, offline.
import {
  convertToModelMessages,
  readUIMessageStream,
  stepCountIs,
  streamText,
  tool,
  type UIMessage,
} from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { scriptedModel } from "../../../examples/adapters/ai-sdk/fake-model.js";
import { type AirlockToolApproval, airlockToolApproval } from "../../../src/adapters/ai-sdk.js";
import { type Airlock, createAirlock, isAirlockError } from "../../../src/index.js";
import { sqliteStore } from "../../../src/store/sqlite-entry.js";

let airlock: Airlock;
let runs: number;
beforeEach(async () => {
  runs = 0;
  airlock = await createAirlock({ store: sqliteStore(":memory:") });
});
afterEach(async () => {
  await airlock.close();
});

function tools() {
  return {
    deploy: tool({
      inputSchema: z.object({ service: z.string(), version: z.string() }),
      execute: async ({ service, version }) => {
        runs++;
        return { deployed: `${service}@${version}` };
      },
    }),
  };
}
type Tools = ReturnType<typeof tools>;

const model = scriptedModel(() => [
  { toolName: "deploy", input: { service: "api", version: "1.2.3" } },
]);

function gateFor(approvers?: string[]): AirlockToolApproval<Tools> {
  return airlockToolApproval({
    airlock,
    conversationId: "chat-7",
    tools: tools(),
    requester: "chat-server",
    ...(approvers ? { gates: { deploy: { approvers } } } : {}),
  });
}

/** One POST of the chat route: UI messages in, the streamed assistant message out. */
async function chatTurn(gate: AirlockToolApproval<Tools>, messages: UIMessage[]) {
  const result = streamText({
    model,
    tools: gate.tools,
    toolApproval: gate.toolApproval,
    stopWhen: stepCountIs(3),
    messages: await convertToModelMessages(messages, { tools: gate.tools }),
  });
  const last = messages.at(-1);
  const continued = last?.role === "assistant" ? last : undefined;
  let out: UIMessage | undefined;
  const errors: unknown[] = [];
  for await (const m of readUIMessageStream({
    ...(continued ? { message: continued } : {}),
    stream: result.toUIMessageStream({
      originalMessages: messages,
      onError: (err) => {
        errors.push(err);
        return String(err);
      },
    }),
  })) {
    out = m;
  }
  // A tool the gate refused to run is a tool error the model reads; anything else fails the test.
  const unexpected = errors.find((e) => !isAirlockError(e));
  if (unexpected) throw unexpected;
  if (!out) throw new Error("no assistant message");
  return continued ? [...messages.slice(0, -1), out] : [...messages, out];
}

const user: UIMessage = {
  id: "u1",
  role: "user",
  parts: [{ type: "text", text: "deploy api 1.2.3" }],
};

type Part = {
  type: string;
  state?: string;
  output?: unknown;
  approval?: { id: string; approved?: boolean; reason?: string; requestReason?: string };
};
const toolPart = (messages: UIMessage[]) =>
  messages.at(-1)?.parts.find((p) => p.type === "tool-deploy") as Part;
const text = (messages: UIMessage[]) =>
  (messages.at(-1)?.parts ?? []).map((p) => (p.type === "text" ? p.text : "")).join("");

/** What `addToolApprovalResponse` does to the part on the client. */
function clientAnswer(messages: UIMessage[], approved: boolean, reason?: string): UIMessage[] {
  const copy = structuredClone(messages);
  const part = toolPart(copy);
  part.state = "approval-responded";
  part.approval = {
    ...part.approval,
    id: part.approval?.id ?? "",
    approved,
    ...(reason ? { reason } : {}),
  };
  return copy;
}

describe("airlock/ai-sdk with useChat (UI messages)", () => {
  it("a decision taken in the inbox answers the chat's approval; the tool runs once", async () => {
    const gate = gateFor();
    let messages = await chatTurn(gate, [user]);
    const part = toolPart(messages);
    expect(part.state).toBe("approval-requested");
    const [request] = (await airlock.list({ status: "pending" })).items;
    if (!request) throw new Error("no request");
    expect(part.approval?.requestReason).toBe(
      `Waiting for a decision in Airlock (request ${request.id})`,
    );

    // Before any decision the route has nothing to run.
    const early = await gate.applyDecisions(messages);
    expect(early.pending.map((r) => r.id)).toEqual([request.id]);
    expect(toolPart(early.messages).state).toBe("approval-requested");

    await airlock.decide(request.id, { outcome: "approved", reviewer: "dana", channel: "web" });
    const applied = await gate.applyDecisions(messages);
    expect(applied.pending).toEqual([]);
    expect(toolPart(applied.messages)).toMatchObject({
      state: "approval-responded",
      approval: { approved: true, reason: expect.stringContaining("Approved by dana") },
    });
    messages = await chatTurn(gate, applied.messages);
    expect(toolPart(messages)).toMatchObject({
      state: "output-available",
      output: { deployed: "api@1.2.3" },
    });
    expect(text(messages)).toBe('deploy returned {"deployed":"api@1.2.3"}');
    expect(runs).toBe(1);
  });

  it("an approved edit reaches the UI as an approval whose output is the edited run's", async () => {
    const gate = gateFor();
    let messages = await chatTurn(gate, [user]);
    const [request] = (await airlock.list({ status: "pending" })).items;
    if (!request) throw new Error("no request");
    await airlock.decide(request.id, {
      outcome: "approved",
      reviewer: "dana",
      editedArgs: { service: "api", version: "1.2.4" },
    });
    const applied = await gate.applyDecisions(messages);
    expect(toolPart(applied.messages)).toMatchObject({
      state: "approval-responded",
      approval: {
        approved: true,
        reason: expect.stringContaining("Approved by dana with edited arguments"),
      },
    });
    messages = await chatTurn(gate, applied.messages);
    expect(toolPart(messages)).toMatchObject({
      state: "output-available",
      output: { deployed: "api@1.2.4" },
      approval: { approved: true },
    });
    expect(text(messages)).toBe('deploy returned {"deployed":"api@1.2.4"}');
    expect(runs).toBe(1);
    expect((await airlock.get(request.id)).executedBy).toBe("chat-server");
  });

  it("an answer the client sent counts only as a named chat reviewer's decision, recorded in Airlock", async () => {
    const gate = gateFor();
    const messages = await chatTurn(gate, [user]);
    const [request] = (await airlock.list({ status: "pending" })).items;
    if (!request) throw new Error("no request");

    // Without a reviewer, the client's "approved" is withdrawn: Airlock still waits.
    const ignored = await gate.applyDecisions(clientAnswer(messages, true));
    expect(ignored.pending.map((r) => r.id)).toEqual([request.id]);
    expect(toolPart(ignored.messages).state).toBe("approval-requested");
    expect(toolPart(ignored.messages).approval?.approved).toBeUndefined();
    expect((await airlock.get(request.id)).status).toBe("pending");

    // As the signed-in user's decision, it is recorded (channel chat) and its reason reaches the model.
    const answered = clientAnswer(messages, false, "not during the freeze");
    const applied = await gate.applyDecisions(answered, { reviewer: "carol" });
    expect(applied.pending).toEqual([]);
    expect((await airlock.get(request.id)).decision).toMatchObject({
      outcome: "rejected",
      reviewer: "carol",
      channel: "chat",
      comment: "not during the freeze",
    });
    const next = await chatTurn(gate, applied.messages);
    expect(toolPart(next).state).toBe("output-denied");
    expect(text(next)).toContain("deploy was not run: Rejected by carol: not during the freeze");
    expect(runs).toBe(0);
    // The same message sent again is not a second vote.
    await gate.applyDecisions(answered, { reviewer: "carol" });
    expect((await airlock.get(request.id)).decisions).toHaveLength(1);
  });

  it("a chat user who may not decide is refused, and the gate keeps waiting", async () => {
    const gate = gateFor(["release-managers"]);
    const messages = await chatTurn(gate, [user]);
    const applied = await gate.applyDecisions(clientAnswer(messages, true), {
      reviewer: "mallory",
    });
    expect(applied.refused).toHaveLength(1);
    expect(applied.refused[0]?.reason).toMatch(/mallory/);
    expect(applied.pending).toHaveLength(1);
    expect(toolPart(applied.messages).state).toBe("approval-requested");
    expect(runs).toBe(0);
  });

  it("two POSTs with the same approved conversation run the tool once", async () => {
    const gate = gateFor();
    const messages = await chatTurn(gate, [user]);
    const [request] = (await airlock.list({ status: "pending" })).items;
    if (!request) throw new Error("no request");
    await airlock.decide(request.id, { outcome: "approved", reviewer: "dana" });
    const { messages: ready } = await gate.applyDecisions(messages);
    // Each POST parses its own copy of the conversation.
    const [a, b] = await Promise.all([
      chatTurn(gate, structuredClone(ready)),
      chatTurn(gateFor(), structuredClone(ready)),
    ]);
    expect(runs).toBe(1);
    const states = [toolPart(a).state, toolPart(b).state].sort();
    expect(states).toEqual(["output-available", "output-error"]);
  });
});
