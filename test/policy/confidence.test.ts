import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BASE_SCORES,
  calculateConfidence,
  DEFAULT_BASE_SCORE,
  DEFAULT_THRESHOLDS,
  determineApprovalLevel,
} from "../../src/policy/confidence.js";

describe("calculateConfidence", () => {
  it.each([
    ["sign_contract", 50],
    ["delete_project", 40],
    ["approve_expense", 60],
    ["send_notification", 80],
    ["update_task_status", 85],
    ["something_else", 70],
  ])("gives %s its base score %i", (tool, score) => {
    expect(calculateConfidence(tool, {})).toBe(score);
  });

  it("starts unknown tools, including inherited property names, at the default", () => {
    expect(DEFAULT_BASE_SCORE).toBe(70);
    expect(calculateConfidence("toString")).toBe(70);
    expect(calculateConfidence("constructor")).toBe(70);
  });

  it("adds 10 for an admin (camelCase or snake_case)", () => {
    expect(calculateConfidence("sign_contract", {}, { userRole: "admin" })).toBe(60);
    expect(calculateConfidence("sign_contract", {}, { user_role: "admin" })).toBe(60);
    expect(calculateConfidence("sign_contract", {}, { userRole: "member" })).toBe(50);
  });

  it("adds 5 for a verified workspace, only when it is exactly true", () => {
    expect(calculateConfidence("sign_contract", {}, { workspaceVerified: true })).toBe(55);
    expect(calculateConfidence("sign_contract", {}, { workspace_verified: true })).toBe(55);
    expect(calculateConfidence("sign_contract", {}, { workspace_verified: "yes" })).toBe(50);
  });

  it("subtracts 15 for an amount above 1000, not at exactly 1000", () => {
    expect(calculateConfidence("approve_expense", { amount: 1000 })).toBe(60);
    expect(calculateConfidence("approve_expense", { amount: 1000.01 })).toBe(45);
    expect(calculateConfidence("approve_expense", { amount: 5000 })).toBe(45);
    // Only numbers count: a string is not an amount we can compare.
    expect(calculateConfidence("approve_expense", { amount: "5000" })).toBe(60);
  });

  it("subtracts 10 for a bulk operation (flag in args, in context, or in the name)", () => {
    expect(calculateConfidence("approve_expense", { bulk: true })).toBe(50);
    expect(calculateConfidence("approve_expense", {}, { bulk: true })).toBe(50);
    expect(calculateConfidence("send_bulk_notification", {})).toBe(60);
    expect(calculateConfidence("approve_expense", { bulk: "true" })).toBe(60);
  });

  it("combines every modifier", () => {
    const ctx = { userRole: "admin", workspaceVerified: true };
    // 50 + 10 + 5 - 15 - 10
    expect(calculateConfidence("sign_contract", { amount: 2000, bulk: true }, ctx)).toBe(40);
    // 85 + 10 + 5 = 100 exactly: the top of the range
    expect(calculateConfidence("update_task_status", {}, ctx)).toBe(100);
  });

  it("clamps at 100 and at 0", () => {
    const baseScores = { high: 98, low: 10 };
    const admin = { userRole: "admin", workspaceVerified: true };
    expect(calculateConfidence("high", {}, admin, { baseScores })).toBe(100);
    expect(calculateConfidence("low", { amount: 10_000, bulk: true }, {}, { baseScores })).toBe(0);
  });

  it("is always within 0..100, whatever comes in", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.constantFrom(...Object.keys(BASE_SCORES)), fc.string()),
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.record({
          userRole: fc.constantFrom("admin", "user", undefined),
          workspaceVerified: fc.boolean(),
          bulk: fc.boolean(),
        }),
        fc.double(),
        (tool, args, ctx, amount) => {
          const score = calculateConfidence(tool, { ...args, amount }, ctx);
          expect(score).toBeGreaterThanOrEqual(0);
          expect(score).toBeLessThanOrEqual(100);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("determineApprovalLevel", () => {
  it("uses 85 and 60 by default", () => {
    expect(DEFAULT_THRESHOLDS).toEqual({ autoThreshold: 85, quickThreshold: 60 });
  });

  it("is auto at exactly the auto threshold and quick just below it", () => {
    expect(determineApprovalLevel(85)).toBe("auto");
    expect(determineApprovalLevel(84.999)).toBe("quick");
    expect(determineApprovalLevel(84)).toBe("quick");
    expect(determineApprovalLevel(100)).toBe("auto");
  });

  it("is quick at exactly the quick threshold and full just below it", () => {
    expect(determineApprovalLevel(60)).toBe("quick");
    expect(determineApprovalLevel(59.999)).toBe("full");
    expect(determineApprovalLevel(0)).toBe("full");
  });

  it("follows custom thresholds", () => {
    const t = { autoThreshold: 95, quickThreshold: 70 };
    expect(determineApprovalLevel(94, t)).toBe("quick");
    expect(determineApprovalLevel(95, t)).toBe("auto");
    expect(determineApprovalLevel(69, t)).toBe("full");
    expect(determineApprovalLevel(70, t)).toBe("quick");
    // Only one given: the other keeps its default.
    expect(determineApprovalLevel(59, { autoThreshold: 90 })).toBe("full");
  });

  it("treats a broken score (NaN) as the strictest level", () => {
    expect(determineApprovalLevel(Number.NaN)).toBe("full");
  });

  it("gives the seed's results", () => {
    expect(determineApprovalLevel(90)).toBe("auto");
    expect(determineApprovalLevel(70)).toBe("quick");
    expect(determineApprovalLevel(50)).toBe("full");
  });
});
