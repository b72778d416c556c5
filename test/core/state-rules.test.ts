// The rules written once in core/state.ts: the decision-kind table, status predicates, automatic
// methods, and "a deadline exists only while pending".
import { describe, expect, it } from "vitest";
import { METHODS, STATUSES } from "../../src/core/schemas.js";
import {
  AUTOMATIC_METHODS,
  activeDeadline,
  DECISION_KINDS,
  decisionKind,
  isApproved,
  isPending,
  isTerminal,
  methodsFor,
} from "../../src/core/state.js";

describe("decision kinds", () => {
  it("name each kind's outcome, default method and what must be allowed", () => {
    expect(decisionKind({ outcome: "approved" })).toBe("approve");
    expect(decisionKind({ outcome: "approved", selected: ["a"] })).toBe("select");
    expect(decisionKind({ outcome: "approved", editedArgs: {}, selected: ["a"] })).toBe("edit");
    expect(decisionKind({ outcome: "rejected", selected: ["a"] })).toBe("reject");
    expect(decisionKind({ outcome: "revise" })).toBe("revise");
    expect(DECISION_KINDS.reject.allowed).toBeUndefined();
    expect(DECISION_KINDS.edit).toMatchObject({
      outcome: "approved",
      method: "edit",
      allowed: "edit",
    });
  });

  it("the methods of an outcome come from the table", () => {
    expect(methodsFor("approved")).toEqual(["approve_all", "select", "edit"]);
    expect(methodsFor("rejected")).toEqual(["reject", "skip", "parse_error", "error"]);
    expect(methodsFor("revise")).toEqual(["revise"]);
  });
});

describe("status predicates", () => {
  it("pending is the only status that is not terminal", () => {
    for (const s of STATUSES) expect(isTerminal(s)).toBe(s !== "pending");
    expect(isPending({ status: "pending" })).toBe(true);
  });

  it("approved means the status and the approving decision", () => {
    const d = {
      outcome: "approved" as const,
      method: "approve_all" as const,
      reviewer: "a",
      channel: "api" as const,
      decidedAt: 1,
    };
    expect(isApproved({ status: "approved", decision: d })).toBe(true);
    expect(isApproved({ status: "approved", decision: undefined })).toBe(false);
    expect(isApproved({ status: "rejected", decision: { ...d, outcome: "rejected" } })).toBe(false);
  });

  it("a deadline applies only while pending", () => {
    expect(activeDeadline({ status: "pending", deadline: 5 })).toBe(5);
    expect(activeDeadline({ status: "approved", deadline: 5 })).toBeUndefined();
  });

  it("automatic methods are methods, and no human review method is among them", () => {
    for (const m of AUTOMATIC_METHODS) expect(METHODS).toContain(m);
    for (const m of ["approve_all", "select", "edit", "reject", "revise", "skip"] as const) {
      expect(AUTOMATIC_METHODS.has(m)).toBe(false);
    }
  });
});
