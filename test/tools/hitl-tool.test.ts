import { afterEach, describe, expect, expectTypeOf, it, vi } from "vitest";
import { hashArgs } from "../../src/core/hash.js";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import type { AirlockApi } from "../../src/engine/api.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { getHitlConfig, type HitlCall, hitlTool, isHitlTool } from "../../src/tools/hitl-tool.js";
import {
  type HitlPending,
  type HitlRejection,
  isHitlPending,
  isHitlRejection,
} from "../../src/tools/results.js";
import { eventually } from "../helpers.js";

let engine: Airlock | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

async function newEngine(): Promise<Airlock> {
  engine = await createAirlock({ store: sqliteStore(":memory:") });
  return engine;
}

/** The one pending request, once the tool has created it. */
async function pendingRequest(e: Airlock): Promise<ApprovalRequest> {
  return eventually(async () => (await e.list({ status: "pending" })).items[0] ?? false, {
    timeoutMs: 5_000,
    intervalMs: 5,
    what: "a pending request",
  });
}

interface Transfer {
  to: string;
  amount: number;
  password?: string;
}

function transferTool(config: Parameters<typeof hitlTool>[1] = {}) {
  const calls: { args: Transfer; call: HitlCall }[] = [];
  const tool = hitlTool(
    async function transferMoney(args: Transfer, call: HitlCall) {
      calls.push({ args, call });
      return { sent: args.amount, to: args.to };
    },
    { name: "transfer_money", ...config },
  );
  return { tool, calls };
}

describe("hitlTool: the wrapper itself", () => {
  it("keeps the function's name and arity, and its typing", async () => {
    async function signIt(args: { id: string }, _call: HitlCall): Promise<{ signed: string }> {
      return { signed: args.id };
    }
    const wrapped = hitlTool(signIt, { autoThreshold: 0, quickThreshold: 0 });
    expect(wrapped.name).toBe("signIt");
    expect(wrapped.length).toBe(2);
    expect(wrapped.toolName).toBe("signIt");
    expectTypeOf(wrapped).parameter(0).toMatchTypeOf<{ id: string }>();
    expectTypeOf(wrapped).returns.resolves.toEqualTypeOf<
      { signed: string } | HitlPending | HitlRejection
    >();
    const gate = { request: vi.fn(), get: vi.fn(), waitFor: vi.fn() } as unknown as AirlockApi;
    const blocking = hitlTool(signIt, { blocking: true, airlock: gate });
    expectTypeOf(blocking).returns.resolves.toEqualTypeOf<{ signed: string } | HitlRejection>();
  });

  it("is recognised, and its configuration read back", () => {
    const { tool } = transferTool({ autoThreshold: 90 });
    expect(isHitlTool(tool)).toBe(true);
    expect(getHitlConfig(tool)).toMatchObject({ name: "transfer_money", autoThreshold: 90 });
    for (const other of [() => 1, {}, null, undefined, "transfer_money"]) {
      expect(isHitlTool(other)).toBe(false);
      expect(getHitlConfig(other)).toBeUndefined();
    }
  });

  it("recognises pending markers and rejections by shape only", () => {
    expect(isHitlPending({ __hitl_pending__: true, hitl_result: {} })).toBe(true);
    expect(isHitlPending({ __hitl_pending__: "true" })).toBe(false);
    expect(isHitlPending(null)).toBe(false);
    expect(isHitlPending([1])).toBe(false);
    expect(isHitlRejection({ rejected: true, retry: false, reason: "no" })).toBe(true);
    expect(isHitlRejection({ rejected: true, retry: true, reason: "no" })).toBe(false);
  });

  it("refuses arguments nested deeper than MAX_JSON_DEPTH before scoring or redacting them", async () => {
    let deep: Record<string, unknown> = { to: "bob" };
    for (let i = 0; i < 100_000; i++) deep = { nested: deep };
    const { tool, calls } = transferTool({ airlock: await newEngine() });
    await expect(tool({ to: "bob", amount: 1, ...deep } as Transfer)).rejects.toMatchObject({
      code: "invalid_input",
      field: "args",
    });
    expect(calls).toHaveLength(0);
  });

  it("refuses arguments that are not an object", async () => {
    const { tool, calls } = transferTool();
    await expect(tool(null as never)).rejects.toThrow(/arguments to be an object/);
    await expect(tool({ to: "a", amount: 1, _hitlContext: 5 as never })).rejects.toThrow(
      /_hitlContext/,
    );
    expect(calls).toHaveLength(0);
  });
});

describe("hitlTool: auto level", () => {
  it("executes at once with the arguments, handing the context through (seed: admin boost)", async () => {
    const tool = hitlTool(async (args: { value: string }) => ({ value: args.value }), {
      name: "test_tool",
      autoThreshold: 50,
    });
    // unknown tool 70 + admin 10 = 80 >= 50
    expect(await tool({ value: "test", _hitlContext: { userRole: "admin" } })).toEqual({
      value: "test",
    });
    const { tool: t2, calls } = transferTool({ autoThreshold: 70 });
    await t2({ to: "bob", amount: 5, _hitlContext: { userId: "u1" } });
    expect(calls[0]?.args).toEqual({ to: "bob", amount: 5 });
    expect(calls[0]?.call).toMatchObject({
      toolName: "transfer_money",
      level: "auto",
      confidence: 70,
      context: { userId: "u1" },
    });
    expect(calls[0]?.call.approvalId).toBeUndefined();
  });

  it("exactly at autoThreshold is auto; one point below asks a human", async () => {
    const score = vi.fn(() => 85);
    const { tool, calls } = transferTool({ confidence: score });
    await tool({ to: "a", amount: 1 });
    expect(calls).toHaveLength(1);
    score.mockReturnValue(84);
    const marker = await tool({ to: "a", amount: 1 });
    expect(isHitlPending(marker)).toBe(true);
    expect(calls).toHaveLength(1);
  });

  it("writes an auto_executed audit record with sensitive keys redacted", async () => {
    const e = await newEngine();
    const { tool } = transferTool({ airlock: e, autoThreshold: 0, quickThreshold: 0 });
    await tool({
      to: "bob",
      amount: 5,
      password: "hunter2",
      _hitlContext: { userRole: "admin", api_key: "k-123" },
    });
    const events = await e.audit();
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event?.type).toBe("auto_executed");
    expect(event?.data).toMatchObject({
      tool: "transfer_money",
      confidence: 80,
      autoThreshold: 0,
      args: { to: "bob", amount: 5, password: "[REDACTED]" },
      argsHash: hashArgs({ to: "bob", amount: 5, password: "hunter2" }),
      context: { userRole: "admin", api_key: "[REDACTED]" },
    });
    expect(JSON.stringify(events)).not.toContain("hunter2");
    expect(JSON.stringify(events)).not.toContain("k-123");
    expect((await e.verifyAudit()).ok).toBe(true);
  });

  it("through a gate without `record` (one written before it was required), leaves an auto-approved request", async () => {
    const e = await newEngine();
    const client = {
      request: (i) => e.request(i),
      get: (id) => e.get(id),
      getByKey: (k, o) => e.getByKey(k, o),
      list: (f) => e.list(f),
      waitFor: (id, o) => e.waitFor(id, o),
      decide: (id, d) => e.decide(id, d),
      cancel: (id, o) => e.cancel(id, o),
      claimExecution: (id, o) => e.claimExecution(id, o),
      takeTicket: (k, o) => e.takeTicket(k, o),
      finishTicket: (k, o) => e.finishTicket(k, o),
      renewExecution: (id, o) => e.renewExecution(id, o),
      finishExecution: (id, o, by) => e.finishExecution(id, o, by),
    } satisfies Omit<AirlockApi, "record"> as unknown as AirlockApi;
    const { tool, calls } = transferTool({ airlock: client, autoThreshold: 0, quickThreshold: 0 });
    expect(await tool({ to: "bob", amount: 5, password: "pw" })).toEqual({ sent: 5, to: "bob" });
    expect(calls).toHaveLength(1);
    const [request] = (await e.list({ status: "approved" })).items;
    expect(request).toMatchObject({ action: "transfer_money", level: "auto" });
    expect(request?.decision).toMatchObject({ outcome: "approved", method: "auto" });
    expect(JSON.stringify(await e.audit())).not.toContain('"pw"');
  });

  it("does not execute when the audit record cannot be written", async () => {
    const record = vi.fn(async () => {
      throw new Error("disk full");
    });
    const { tool, calls } = transferTool({ record, autoThreshold: 0, quickThreshold: 0 });
    await expect(tool({ to: "a", amount: 1 })).rejects.toThrow("disk full");
    expect(record).toHaveBeenCalledTimes(1);
    expect(calls).toHaveLength(0);
  });
});

describe("hitlTool: quick and full, non-blocking", () => {
  it("returns the marker without an approval id when there is no gate (seed)", async () => {
    const tool = hitlTool(async (args: { value: string }) => args, {
      name: "test_tool",
      autoThreshold: 95,
    });
    const result = await tool({ value: "test" });
    expect(isHitlPending(result)).toBe(true);
    const marker = result as HitlPending;
    expect(marker.hitl_result).toMatchObject({
      requiresApproval: true,
      approvalLevel: "quick",
      confidenceScore: 70,
      toolName: "test_tool",
      toolArgs: { value: "test" },
      config: { autoThreshold: 95, quickThreshold: 60, riskLevel: "medium" },
    });
    expect(marker.hitl_result.approvalId).toBeUndefined();
  });

  it("creates a request, returns its id in the marker, and runs only after approval", async () => {
    const e = await newEngine();
    const { tool, calls } = transferTool({
      airlock: e,
      descriptionTemplate: "Send {amount} to {to}",
      riskLevel: "high",
    });
    const marker = await tool({
      to: "bob",
      amount: 5000,
      password: "hunter2",
      _hitlContext: { correlationId: "corr-1" },
    });
    expect(isHitlPending(marker)).toBe(true);
    const { hitl_result } = marker as HitlPending;
    // 70 - 15 (amount > 1000) = 55 < 60
    expect(hitl_result.approvalLevel).toBe("full");
    expect(hitl_result.toolArgs.password).toBe("[REDACTED]");
    expect(calls).toHaveLength(0);

    const id = hitl_result.approvalId ?? "";
    const request = await e.get(id);
    expect(request).toMatchObject({
      status: "pending",
      action: "transfer_money",
      title: "Send 5000 to bob",
      level: "full",
      confidence: 55,
      risk: "high",
      correlationId: "corr-1",
      requester: "agent",
    });
    expect(request.args.password).toBe("hunter2");

    // Still pending: resume gives the marker again and runs nothing.
    expect(isHitlPending(await tool.resume(id))).toBe(true);
    expect(calls).toHaveLength(0);

    await e.decide(id, { outcome: "approved", reviewer: "ann" });
    expect(await tool.resume(id)).toEqual({ sent: 5000, to: "bob" });
    expect(calls[0]?.args).toEqual({ to: "bob", amount: 5000, password: "hunter2" });
    expect(calls[0]?.call).toMatchObject({ approvalId: id, decision: { reviewer: "ann" } });
  });

  it("titles a list of plain values as words, and anything else as JSON", async () => {
    const e = await newEngine();
    const notify = hitlTool(async (args: { to: string[]; meta: object }) => args.to.length, {
      airlock: e,
      name: "notify",
      riskLevel: "high",
      descriptionTemplate: "Send to {to} ({meta})",
    });
    const marker = await notify({ to: ["team-a", "team-b", "team-c"], meta: { n: 1 } });
    const id = (marker as HitlPending).hitl_result.approvalId ?? "";
    expect((await e.get(id)).title).toBe('Send to team-a, team-b, team-c ({"n":1})');
  });

  it("reports the level the engine's policy gave the request", async () => {
    engine = await createAirlock({
      store: sqliteStore(":memory:"),
      policy: () => ({ level: "full", reason: "all transfers get a full review" }),
    });
    const { tool } = transferTool({ airlock: engine });
    // 70: quick by the tool's own thresholds, full by the engine's policy.
    const marker = (await tool({ to: "bob", amount: 1 })) as HitlPending;
    expect(marker.hitl_result.approvalLevel).toBe("full");
  });

  it("runs with the edited arguments when the reviewer edited them", async () => {
    const e = await newEngine();
    const { tool, calls } = transferTool({ airlock: e });
    const marker = (await tool({ to: "bob", amount: 5000 })) as HitlPending;
    const id = marker.hitl_result.approvalId ?? "";
    await e.decide(id, {
      outcome: "approved",
      reviewer: "ann",
      editedArgs: { to: "bob", amount: 500 },
    });
    expect(await tool.resume(id)).toEqual({ sent: 500, to: "bob" });
    expect(calls.map((c) => c.args.amount)).toEqual([500]);
  });

  it.each([
    ["rejected", "rejected"],
    ["revise", "revise"],
  ] as const)(
    "never runs after a %s decision, and tells the model not to retry",
    async (outcome, code) => {
      const e = await newEngine();
      const { tool, calls } = transferTool({ airlock: e });
      const id =
        ((await tool({ to: "eve", amount: 9999 })) as HitlPending).hitl_result.approvalId ?? "";
      await e.decide(id, { outcome, reviewer: "ann", comment: "not to eve" });
      const result = await tool.resume(id);
      expect(result).toMatchObject({
        rejected: true,
        retry: false,
        code,
        approvalId: id,
        toolName: "transfer_money",
        comment: "not to eve",
        reviewer: "ann",
      });
      expect((result as HitlRejection).reason).toContain("not to eve");
      expect(calls).toHaveLength(0);
    },
  );

  it("never runs after a cancellation", async () => {
    const e = await newEngine();
    const { tool, calls } = transferTool({ airlock: e });
    const id = ((await tool({ to: "eve", amount: 1 })) as HitlPending).hitl_result.approvalId ?? "";
    await e.cancel(id, { by: "agent", reason: "user left" });
    expect(await tool.resume(id, { wait: true })).toMatchObject({
      code: "cancelled",
      retry: false,
    });
    expect(calls).toHaveLength(0);
  });

  it("requiresReason: a revision request must say what should change", async () => {
    const e = await newEngine();
    const { tool, calls } = transferTool({ airlock: e, requiresReason: true });
    const id = ((await tool({ to: "bob", amount: 1 })) as HitlPending).hitl_result.approvalId ?? "";
    expect((await e.get(id)).revisionCommentRequired).toBe(true);
    await expect(e.decide(id, { outcome: "revise", reviewer: "ann" })).rejects.toMatchObject({
      code: "invalid_input",
      field: "comment",
    });
    await e.decide(id, { outcome: "revise", reviewer: "ann", comment: "send it to alice" });
    expect(await tool.resume(id)).toMatchObject({ code: "revise", comment: "send it to alice" });
    expect(calls).toHaveLength(0);
    const plain = transferTool({ airlock: e }).tool;
    const other = ((await plain({ to: "x", amount: 2 })) as HitlPending).hitl_result.approvalId;
    expect((await e.get(other ?? "")).revisionCommentRequired).toBe(false);
  });

  it("never runs an approval that has expired", async () => {
    const e = await newEngine();
    const { tool, calls } = transferTool({ airlock: e });
    const id = ((await tool({ to: "bob", amount: 1 })) as HitlPending).hitl_result.approvalId ?? "";
    await e.decide(id, { outcome: "approved", reviewer: "ann", validForMs: 1 });
    await new Promise((r) => setTimeout(r, 10));
    expect(await tool.resume(id)).toMatchObject({ rejected: true, code: "expired" });
    expect(calls).toHaveLength(0);
  });

  it("refuses to resume another tool's request", async () => {
    const e = await newEngine();
    const { tool } = transferTool({ airlock: e });
    const other = await e.request({ title: "other", action: "transfer_money" });
    await expect(tool.resume(other.id)).rejects.toThrow(/not a call to the tool/);
    const none = transferTool().tool;
    await expect(none.resume(other.id)).rejects.toThrow(/no `airlock` gate/);
  });

  it("replays by key: the same call gets the same request, executed once approved", async () => {
    const e = await newEngine();
    const { tool, calls } = transferTool({ airlock: e });
    const args = { to: "bob", amount: 1, _hitlContext: { key: "call-42" } };
    const first = (await tool(args)) as HitlPending;
    const again = (await tool(args)) as HitlPending;
    expect(again.hitl_result.approvalId).toBe(first.hitl_result.approvalId);
    await e.decide(first.hitl_result.approvalId ?? "", { outcome: "approved", reviewer: "ann" });
    expect(await tool(args)).toEqual({ sent: 1, to: "bob" });
    expect(calls).toHaveLength(1);
  });
});

describe("hitlTool: blocking", () => {
  it("waits for the human, then executes", async () => {
    const e = await newEngine();
    const { tool, calls } = transferTool({ airlock: e, blocking: true });
    const pending = tool({ to: "bob", amount: 10 });
    const request = await pendingRequest(e);
    expect(calls).toHaveLength(0);
    await e.decide(request.id, { outcome: "approved", reviewer: "ann" });
    expect(await pending).toEqual({ sent: 10, to: "bob" });
    expect(calls).toHaveLength(1);
  });

  // LangChain's HITL middleware once executed tool calls a human had rejected. Ours cannot.
  it("a rejected tool call never executes", async () => {
    const e = await newEngine();
    const body = vi.fn(async (_args: { path: string }) => "deleted");
    const deleteAll = hitlTool(body, { name: "delete_all", airlock: e, blocking: true });
    const pending = deleteAll({ path: "/" });
    const request = await pendingRequest(e);
    await e.decide(request.id, { outcome: "rejected", reviewer: "ann", comment: "no way" });
    const result = await pending;
    expect(result).toMatchObject({ rejected: true, retry: false, code: "rejected" });
    // Resuming the rejected request, or waiting on it again, does not run it either.
    expect(await deleteAll.resume(request.id, { wait: true })).toMatchObject({ rejected: true });
    expect(body).not.toHaveBeenCalled();
  });

  it("never executes after the gate times out", async () => {
    const e = await newEngine();
    const { tool, calls } = transferTool({ airlock: e, blocking: true, timeoutMs: 40 });
    const result = await tool({ to: "bob", amount: 10 });
    expect(result).toMatchObject({ rejected: true, retry: false, code: "timed_out" });
    expect(calls).toHaveLength(0);
  });

  it("never executes after a cancellation while waiting", async () => {
    const e = await newEngine();
    const { tool, calls } = transferTool({ airlock: e, blocking: true });
    const pending = tool({ to: "bob", amount: 10 });
    const request = await pendingRequest(e);
    await e.cancel(request.id, { by: "ops" });
    expect(await pending).toMatchObject({ rejected: true, code: "cancelled" });
    expect(calls).toHaveLength(0);
  });

  it("never executes arguments other than the approved ones (tampered decision)", async () => {
    // A gate that reports an approval whose hash does not cover the args it carries.
    const approved: ApprovalRequest = {
      id: "req_1",
      action: "transfer_money",
      title: "t",
      args: { to: "mallory", amount: 1_000_000 },
      argsHash: hashArgs({ to: "bob", amount: 10 }),
      items: [],
      allowed: ["approve"],
      level: "full",
      requester: "agent",
      approvers: [],
      quorum: 1,
      onTimeout: "reject",
      escalations: 0,
      correlationId: "req_1",
      metadata: { hitl: { tool: "transfer_money" } },
      status: "approved",
      decisions: [],
      decision: {
        outcome: "approved",
        method: "approve_all",
        reviewer: "ann",
        channel: "api",
        decidedAt: 1,
        argsHash: hashArgs({ to: "bob", amount: 10 }),
      },
      inputHash: "x",
      createdAt: 0,
      updatedAt: 1,
      version: 2,
    };
    const gate: AirlockApi = {
      request: async () => ({ ...approved, status: "pending", decision: undefined }),
      get: async () => approved,
      list: async () => ({ items: [] }),
      waitFor: async () => approved,
      decide: async () => approved,
      cancel: async () => approved,
      getByKey: async () => undefined,
      claimExecution: async () => approved,
      takeTicket: async () => {
        throw new Error("not used");
      },
      finishTicket: async () => {
        throw new Error("not used");
      },
      renewExecution: async () => approved,
      finishExecution: async () => approved,
      record: async () => {
        throw new Error("not used");
      },
    };
    const { tool, calls } = transferTool({ airlock: gate, blocking: true });
    expect(await tool({ to: "bob", amount: 10 })).toMatchObject({
      rejected: true,
      code: "args_mismatch",
    });
    expect(await tool.resume("req_1")).toMatchObject({ code: "args_mismatch" });
    expect(calls).toHaveLength(0);
  });

  it("executes at once when the engine's own policy approves the request", async () => {
    engine = await createAirlock({
      store: sqliteStore(":memory:"),
      policy: () => ({ level: "auto", reason: "trusted" }),
    });
    const { tool, calls } = transferTool({ airlock: engine });
    expect(await tool({ to: "bob", amount: 10 })).toEqual({ sent: 10, to: "bob" });
    expect(calls[0]?.call.decision).toMatchObject({ method: "auto" });
  });
});
