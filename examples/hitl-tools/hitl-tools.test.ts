import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import type { Airlock } from "../../src/engine/engine.js";
import { isHitlPending } from "../../src/tools/results.js";
import type { Gate } from "../shared/gate.js";
import { captureLog, nextPending, testEngine } from "../shared/testing.js";
import { runHitlTools } from "./index.js";

let engine: Airlock;
beforeEach(async () => {
  engine = await testEngine();
});
afterEach(async () => {
  await engine.close();
});

describe("hitl-tools (pattern 3)", () => {
  it("auto runs at once with an audit record; quick and full wait, then run or are refused", async () => {
    const { log, lines } = captureLog();
    const run = runHitlTools({ airlock: engine, log });
    const seen = new Set<string>();
    const pending: ApprovalRequest[] = [];
    for (let i = 0; i < 5; i++) pending.push(await nextPending(engine, { seen }));
    const byTitle = (start: string) => {
      const r = pending.find((p) => p.title.startsWith(start));
      if (!r) throw new Error(`no request titled ${start}…`);
      return r;
    };
    const bulk = byTitle("Send Release 2.4");
    const smallExpense = byTitle("Approve expense EXP-310");
    const bigExpense = byTitle("Approve expense EXP-311");
    const contract = byTitle("Sign contract C-2025-044");
    const deletion = byTitle("Delete project P-legacy-crm");
    expect([bulk, smallExpense].map((r) => [r.level, r.confidence])).toEqual([
      ["quick", 75],
      ["quick", 65],
    ]);
    expect([bigExpense, contract, deletion].map((r) => [r.level, r.confidence])).toEqual([
      ["full", 45],
      ["full", 45],
      ["full", 55],
    ]);

    // Decided in an order of the reviewers' choosing; the agent resumes each as it comes.
    await engine.decide(deletion.id, {
      outcome: "rejected",
      reviewer: "alice",
      comment: "still in use",
    });
    await engine.decide(contract.id, {
      outcome: "approved",
      reviewer: "alice",
      editedArgs: { contractId: "C-2025-044", amount: 10_000 },
    });
    await engine.decide(bigExpense.id, { outcome: "rejected", reviewer: "bob" });
    await engine.decide(smallExpense.id, { outcome: "approved", reviewer: "bob" });
    await engine.decide(bulk.id, { outcome: "approved", reviewer: "bob" });
    const result = await run;

    expect(result.counts).toEqual({ auto: 1, quick: 2, full: 3 });
    const [task, notify, expense, expenseBig, sign, del] = result.calls;
    expect(task).toMatchObject({
      tool: "update_task_status",
      level: "auto",
      confidence: 85,
      outcome: "auto_executed",
      result: { status: "updated", taskId: "T-118", newStatus: "done", approvedBy: "auto" },
    });
    expect(task?.approvalId).toBeUndefined();
    for (const c of [notify, expense, expenseBig, sign, del]) {
      expect(isHitlPending(c?.first)).toBe(true);
      expect(c?.approvalId).toBeDefined();
    }
    expect(notify).toMatchObject({
      outcome: "executed",
      result: { status: "sent", recipients: 3, approvedBy: "bob" },
    });
    expect(expense).toMatchObject({
      outcome: "executed",
      result: { status: "approved", amount: 240 },
    });
    expect(expenseBig).toMatchObject({
      outcome: "rejected",
      result: { rejected: true, retry: false, code: "rejected", toolName: "approve_expense" },
    });
    // The edited arguments are the ones that ran.
    expect(sign).toMatchObject({
      outcome: "executed",
      result: { status: "signed", amount: 10_000, approvedBy: "alice" },
    });
    expect(del).toMatchObject({
      outcome: "rejected",
      result: { code: "rejected", comment: "still in use" },
    });

    // The auto-executed call is in the audit log, with its secret redacted.
    const audit = await engine.audit();
    const auto = audit.filter((e) => e.type === "auto_executed");
    expect(auto).toHaveLength(1);
    expect(auto[0]?.data).toMatchObject({
      tool: "update_task_status",
      confidence: 85,
      args: { taskId: "T-118", status: "done" },
      context: { userRole: "member", sessionToken: "[REDACTED]" },
    });
    expect(JSON.stringify(audit)).not.toContain("tok-example-7f3a");
    expect(lines[0]).toMatch(/^update_task_status: confidence 85 → auto, executed and audited/);
    expect(lines.at(-1)).toBe("done: 1 auto, 2 quick, 3 full");
  });

  it("a pending call that times out is not executed", async () => {
    const result = await runHitlTools({
      airlock: engine,
      timeoutMs: 150,
      calls: [
        {
          why: "large expense",
          tool: "approve_expense",
          args: { expenseId: "EXP-9", amount: 5000 },
          context: {},
        },
      ],
    });
    expect(result.calls[0]).toMatchObject({
      level: "full",
      outcome: "rejected",
      result: { code: "timed_out", retry: false },
    });
  });

  it("a tool call that fails is reported and the loop goes on", async () => {
    const gate: Gate = {
      ...pick(engine),
      request: async (input) => {
        if (input.action === "sign_contract") throw new Error("the gate is down");
        return engine.request(input);
      },
    };
    const run = runHitlTools({ airlock: gate });
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const r = await nextPending(engine, { seen });
      await engine.decide(r.id, { outcome: "approved", reviewer: "bob" });
    }
    const result = await run;
    expect(result.calls.map((c) => [c.tool, c.outcome])).toEqual([
      ["update_task_status", "auto_executed"],
      ["send_bulk_notification", "executed"],
      ["approve_expense", "executed"],
      ["approve_expense", "executed"],
      ["sign_contract", "failed"],
      ["delete_project", "executed"],
    ]);
    expect(result.calls[4]).toMatchObject({
      level: "full",
      confidence: 45,
      error: "the gate is down",
    });
  });
});

/** The engine's API and `record`, as plain functions bound to it. */
function pick(e: Airlock): Gate {
  return {
    request: (i) => e.request(i),
    get: (id) => e.get(id),
    list: (f) => e.list(f),
    waitFor: (id, o) => e.waitFor(id, o),
    decide: (id, d) => e.decide(id, d),
    cancel: (id, o) => e.cancel(id, o),
    getByKey: (k, o) => e.getByKey(k, o),
    claimExecution: (id, o) => e.claimExecution(id, o),
    takeTicket: (k, o) => e.takeTicket(k, o),
    finishTicket: (k, o) => e.finishTicket(k, o),
    renewExecution: (id, o) => e.renewExecution(id, o),
    finishExecution: (id, o, by) => e.finishExecution(id, o, by),
    record: (ev) => e.record(ev),
  };
}
