import { afterEach, describe, expect, it } from "vitest";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { createExampleTools, getHitlTools } from "../../src/tools/examples.js";
import { getHitlConfig, isHitlTool } from "../../src/tools/hitl-tool.js";
import { type HitlPending, isHitlPending } from "../../src/tools/results.js";

let engine: Airlock | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

describe("example HITL tools", () => {
  it("are the four seed tools with the seed's thresholds", () => {
    const tools = getHitlTools();
    expect(tools).toHaveLength(4);
    expect(tools.every(isHitlTool)).toBe(true);
    const summary = tools.map((t) => {
      const c = getHitlConfig(t);
      return [c?.name, c?.autoThreshold, c?.quickThreshold, c?.riskLevel, c?.requiresReason];
    });
    expect(summary).toEqual([
      ["sign_contract", 95, 70, "high", true],
      ["delete_project", 90, 60, "high", true],
      ["approve_expense", 85, 65, "medium", false],
      ["send_bulk_notification", 80, 50, "low", false],
    ]);
    expect(tools.map((t) => t.name)).toEqual(summary.map((s) => s[0]));
  });

  it("route each call by confidence", async () => {
    const { signContract, deleteProject, approveExpense, sendBulkNotification } =
      createExampleTools();
    const level = async (p: Promise<unknown>) => {
      const r = await p;
      return isHitlPending(r) ? [r.hitl_result.approvalLevel, r.hitl_result.confidenceScore] : r;
    };
    // 50 - 15 = 35 < 70
    expect(await level(signContract({ contractId: "C1", amount: 5000 }))).toEqual(["full", 35]);
    // 50 + 10 + 5 = 65 < 70: still full for a contract
    const admin = { userRole: "admin", workspaceVerified: true };
    expect(
      await level(signContract({ contractId: "C1", amount: 500, _hitlContext: admin })),
    ).toEqual(["full", 65]);
    // 40 + 10 + 5 = 55 < 60
    expect(await level(deleteProject({ projectId: "P1", _hitlContext: admin }))).toEqual([
      "full",
      55,
    ]);
    // 60 < 65, but an admin's 70 is enough for a quick approval
    expect(await level(approveExpense({ expenseId: "E1", amount: 100 }))).toEqual(["full", 60]);
    expect(
      await level(
        approveExpense({ expenseId: "E1", amount: 100, _hitlContext: { userRole: "admin" } }),
      ),
    ).toEqual(["quick", 70]);
    // 70 - 10 (bulk) = 60: between 50 and 80
    expect(await level(sendBulkNotification({ recipients: ["a", "b"], message: "hi" }))).toEqual([
      "quick",
      60,
    ]);
  });

  it("execute after approval, reporting who approved", async () => {
    engine = await createAirlock({ store: sqliteStore(":memory:") });
    const { signContract } = createExampleTools({ airlock: engine });
    const marker = (await signContract({ contractId: "C9", amount: 2500 })) as HitlPending;
    const id = marker.hitl_result.approvalId ?? "";
    expect((await engine.get(id)).title).toBe("Sign contract C9 for 2500 USD");
    await engine.decide(id, { outcome: "approved", reviewer: "legal", comment: "ok" });
    expect(await signContract.resume(id)).toEqual({
      status: "signed",
      contractId: "C9",
      amount: 2500,
      approvedBy: "legal",
    });
  });

  it("carry their input schema: an expense edited to a wrongly typed amount is refused", async () => {
    engine = await createAirlock({ store: sqliteStore(":memory:") });
    const { approveExpense } = createExampleTools({ airlock: engine });
    const marker = (await approveExpense({ expenseId: "E7", amount: 4800 })) as HitlPending;
    const id = marker.hitl_result.approvalId ?? "";
    expect((await engine.get(id)).argsSchema).toMatchObject({
      properties: { expenseId: { type: "string" }, amount: { type: "number" } },
      required: ["expenseId", "amount"],
    });
    await expect(
      engine.decide(id, {
        outcome: "approved",
        reviewer: "finance",
        editedArgs: { expenseId: "E7", amount: "4000 EUR" },
      }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "editedArgs.amount" });
    await engine.decide(id, {
      outcome: "approved",
      reviewer: "finance",
      editedArgs: { expenseId: "E7", amount: 4000 },
    });
    expect(await approveExpense.resume(id)).toMatchObject({ status: "approved", amount: 4000 });
  });
});
