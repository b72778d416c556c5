// A gate is found by its key (conversation id + tool call id) alone, and the messages come from the
// client: the same tool call id resent with other input must not get Airlock's approval, and a tool
// whose run does not go through Airlock (ungated, or not given to airlockToolApproval) gets no
// approval from the bridge at all.
import { type ModelMessage, tool } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { airlockToolApproval, approvalKey } from "../../../src/adapters/ai-sdk.js";
import { type Airlock, createAirlock } from "../../../src/index.js";
import { sqliteStore } from "../../../src/store/sqlite-entry.js";

let airlock: Airlock;
let runs: unknown[];
beforeEach(async () => {
  runs = [];
  airlock = await createAirlock({ store: sqliteStore(":memory:") });
});
afterEach(() => airlock.close());

function tools() {
  return {
    pay: tool({
      inputSchema: z.object({ to: z.string(), amount: z.number() }),
      execute: async (input) => {
        runs.push(input);
        return { paid: input.amount };
      },
    }),
    balance: tool({
      inputSchema: z.object({}),
      execute: async () => ({ balance: 1000 }),
    }),
  };
}

function gateOn() {
  return airlockToolApproval({
    airlock,
    conversationId: "conv-b",
    tools: tools(),
    requester: "ai-sdk",
    gates: { balance: false },
  });
}

const APPROVED = { to: "bob", amount: 120 };
const TAMPERED = { to: "eve", amount: 9999 };

function asked(toolName: string, input: Record<string, unknown>, id = "c1"): ModelMessage[] {
  return [
    { role: "user", content: "go" },
    {
      role: "assistant",
      content: [
        { type: "tool-call", toolCallId: id, toolName, input },
        { type: "tool-approval-request", approvalId: `a-${id}`, toolCallId: id },
      ],
    },
  ];
}

/** Opens the gate for pay(APPROVED) through the bridge and approves it in Airlock. */
async function approvePay(gate: ReturnType<typeof gateOn>) {
  const opened = await gate.responses(asked("pay", APPROVED));
  expect(opened.pending).toHaveLength(1);
  const request = await airlock.getByKey(approvalKey("conv-b", "c1"), { requester: "ai-sdk" });
  if (!request) throw new Error("no gate");
  await airlock.decide(request.id, { outcome: "approved", reviewer: "alice" });
  return request;
}

describe("model messages: responses()", () => {
  it("the same tool call id with other input is denied, saying the arguments differ", async () => {
    const gate = gateOn();
    await approvePay(gate);
    const honest = await gate.responses(asked("pay", APPROVED));
    expect(honest.responses[0]).toMatchObject({ approved: true });

    const tampered = await gate.responses(asked("pay", TAMPERED));
    expect(tampered.responses).toHaveLength(1);
    expect(tampered.responses[0]).toMatchObject({ approvalId: "a-c1", approved: false });
    expect(tampered.responses[0]?.reason).toContain(
      "the call's arguments differ from what was approved",
    );
  });

  it("an ungated tool, or one not given to airlockToolApproval, is refused and opens no gate", async () => {
    const gate = gateOn();
    for (const name of ["balance", "wire"]) {
      const answered = await gate.responses(asked(name, {}, `c-${name}`));
      expect(answered.pending).toEqual([]);
      expect(answered.responses[0]).toMatchObject({ approved: false });
      expect(answered.responses[0]?.reason).toContain(
        `Airlock does not guard the tool \`${name}\``,
      );
    }
    expect((await airlock.list()).items).toHaveLength(0);
  });
});

describe("toolApproval", () => {
  it("re-validating a call whose input differs from the approved request denies it", async () => {
    const gate = gateOn();
    await approvePay(gate);
    const call = (input: Record<string, unknown>) =>
      gate.toolApproval({
        toolCall: { type: "tool-call", toolCallId: "c1", toolName: "pay", input } as never,
        messages: asked("pay", input),
      });
    expect(await call(APPROVED)).toMatchObject({ type: "approved" });
    const denied = await call(TAMPERED);
    expect(denied).toMatchObject({ type: "denied" });
    expect(typeof denied === "object" && denied.reason).toContain(
      "the call's arguments differ from what was approved",
    );
    expect(runs).toEqual([]);
  });
});

describe("UI messages: applyDecisions()", () => {
  function lastAssistant(type: string, input: Record<string, unknown>, id = "c1") {
    return [
      { role: "user" as const, parts: [{ type: "text", text: "go" }] },
      {
        role: "assistant" as const,
        parts: [
          { type, toolCallId: id, state: "approval-requested", input, approval: { id: `a-${id}` } },
        ],
      },
    ];
  }
  const partOf = (r: { messages: { parts: unknown[] }[] }) =>
    r.messages.at(-1)?.parts[0] as {
      state: string;
      approval: { approved?: boolean; reason?: string };
    };

  it("a resent part with other input is answered denied", async () => {
    const gate = gateOn();
    await approvePay(gate);
    const honest = partOf(await gate.applyDecisions(lastAssistant("tool-pay", APPROVED)));
    expect(honest.approval.approved).toBe(true);
    const tampered = partOf(await gate.applyDecisions(lastAssistant("tool-pay", TAMPERED)));
    expect(tampered).toMatchObject({ state: "approval-responded", approval: { approved: false } });
    expect(tampered.approval.reason).toContain(
      "the call's arguments differ from what was approved",
    );
  });

  it("an ungated tool's part is answered denied and opens no gate", async () => {
    const gate = gateOn();
    const r = await gate.applyDecisions(lastAssistant("tool-balance", {}, "c-b"));
    expect(r.pending).toEqual([]);
    expect(partOf(r).approval).toMatchObject({ approved: false });
    expect(partOf(r).approval.reason).toContain("Airlock does not guard the tool `balance`");
    expect((await airlock.list()).items).toHaveLength(0);
  });
});
