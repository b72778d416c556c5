import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RequestInput } from "../../src/core/schemas.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { formatRequest } from "../../src/reply/format.js";
import { sqliteStore } from "../../src/store/sqlite.js";

let engine: Airlock;
beforeEach(async () => {
  engine = await createAirlock({ store: sqliteStore(":memory:"), sweeper: false });
});
afterEach(async () => {
  await engine.close();
});

const make = (input: Partial<RequestInput>) =>
  engine.request({ title: "Research Progress Update", ...input });

const research: Partial<RequestInput> = {
  items: ["query1", "query2"],
  timeoutMs: 3_600_000,
  metadata: {
    mainQuery: "Test query",
    progress: { completedCount: 5, avgConfidence: 0.75, lowConfidenceCount: 2 },
    critiques: [
      { issue: "Missing data", importance: "high" },
      { issue: "Minor gap", importance: "low" },
    ],
    itemsTitle: "Proposed Additional Research",
    itemNoun: "queries",
    estimatedMinutes: 4,
    estimatedCost: 0.2,
  },
};

describe("formatRequest: text (chat, email)", () => {
  it("has everything the seed's approval message has", async () => {
    const message = formatRequest(await make(research), "text");
    for (const part of ["Test query", "5", "0.75", "2 queries", "APPROVE ALL", "SKIP", "SELECT"]) {
      expect(message).toContain(part);
    }
    expect(message).toBe(
      [
        "Research Progress Update",
        "",
        "Main query: Test query",
        "",
        "Current status:",
        "- Sub-questions analyzed: 5",
        "- Average confidence: 0.75",
        "- Low confidence areas: 2",
        "",
        "Key issues identified:",
        "- Missing data",
        "",
        "Proposed Additional Research (2 queries):",
        "1. query1",
        "2. query2",
        "",
        "Estimated additional time: ~4 minutes",
        "Estimated additional cost: ~$0.20",
        "",
        "Response options:",
        "- Reply APPROVE ALL to proceed with all queries",
        "- Reply SKIP to finish with current findings",
        "- Reply SELECT 1,2 to approve specific queries by number",
        "- Reply REVISE <comment> to ask for changes",
        "",
        "Timeout: Response required within 60 minutes",
      ].join("\n"),
    );
  });

  it("the typed presentation fields give the same message as the old metadata keys", async () => {
    const typed = await make({
      items: ["query1", "query2"],
      timeoutMs: 3_600_000,
      question: "Test query",
      progress: {
        "Sub-questions analyzed": 5,
        "Average confidence": 0.75,
        "Low confidence areas": 2,
      },
      critiques: [
        { issue: "Missing data", importance: "high" },
        { issue: "Minor gap", importance: "low" },
      ],
      labels: { items: "Proposed Additional Research", itemNoun: "queries" },
      estimate: { minutes: 4, cost: 0.2 },
    });
    expect(typed.metadata).toEqual({});
    expect(formatRequest(typed, "text")).toBe(formatRequest(await make(research), "text"));
  });

  it("shows only high-priority critiques", async () => {
    const message = formatRequest(await make(research), "text");
    expect(message).toContain("Missing data");
    expect(message).not.toContain("Minor gap");
  });

  it("leaves out what was not given, and uses singulars", async () => {
    const message = formatRequest(await make({ items: ["only one"] }), "text");
    expect(message).toContain("Proposed items (1 item):");
    expect(message).toContain("SELECT 1 ");
    expect(message).not.toMatch(/Main query|Current status|Key issues|Estimated|Timeout/);
  });

  it("offers APPROVE / REJECT without items, and only what the request allows", async () => {
    const message = formatRequest(await make({ allowed: ["approve", "reject"] }), "text");
    expect(message).toContain("- Reply APPROVE to go ahead");
    expect(message).toContain("- Reply REJECT <reason> to stop it");
    expect(message).not.toContain("REVISE");
  });

  it("gives the time left, in minutes, or seconds under a minute", async () => {
    const r = await make({ items: ["a"], timeoutMs: 90_000 });
    expect(formatRequest(r, "text")).toMatch(/within 1 minute$/);
    expect(formatRequest(r, "text", { now: r.createdAt + 60_000 })).toContain("within 30 seconds");
    expect(formatRequest(r, "text", { now: r.createdAt + 90_000 })).toContain(
      "the deadline has passed",
    );
  });

  it("shows a preview indented, one line per item label", async () => {
    const r = await make({ items: [{ label: "two\nlines", detail: "why" }], preview: "+ added" });
    const message = formatRequest(r, "text");
    expect(message).toContain("1. two lines\n   why");
    expect(message).toContain("Preview:\n  + added");
  });
});

describe("formatRequest: markdown", () => {
  it("uses emphasis and code for replies, and fences a diff", async () => {
    const r = await make({ ...research, preview: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b" });
    const md = formatRequest(r, "markdown");
    expect(md.startsWith("### Research Progress Update\n")).toBe(true);
    expect(md).toContain("**Main query:** Test query");
    expect(md).toContain("**Proposed Additional Research** (2 queries):");
    expect(md).toContain("- Reply `APPROVE ALL` to proceed with all queries");
    expect(md).toContain("```diff\n--- a/x");
    expect(md).toContain("**Timeout:** Response required within 60 minutes");
  });
});

describe("formatRequest: cli (pattern 2)", () => {
  it("draws the plan-review box", async () => {
    const steps = [
      "Move to Tool_Weld_Safe_Position",
      "Move to Tool_Weld_Position",
      "Attach Welder",
      "Move to Tool_Weld_Safe_Position",
      "Move to Safe_Pos_1",
      "Move to Pos_1",
      "Tack Weld at Pos_1",
      "Move to Safe_Pos_1",
      "Move to Home",
      "Move to Safe_Pos_2",
      "Move to Pos_2",
      "Tack Weld at Pos_2",
    ];
    const r = await make({
      title: "Weld plan",
      items: steps,
      correlationId: "abc-123-def-456",
      metadata: { command: "weld at position 1 and 2" },
      timeoutMs: 240_000,
    });
    const rule = "=".repeat(80);
    expect(formatRequest(r, "cli")).toBe(
      [
        "",
        rule,
        "PLAN REVIEW REQUIRED",
        rule,
        "Correlation ID: abc-123-def-456",
        "Your command: weld at position 1 and 2",
        "",
        "Generated Plan:",
        "",
        "  [1]  Move to Tool_Weld_Safe_Position",
        "  [2]  Move to Tool_Weld_Position",
        "  [3]  Attach Welder",
        "  [4]  Move to Tool_Weld_Safe_Position",
        "  [5]  Move to Safe_Pos_1",
        "  [6]  Move to Pos_1",
        "  [7]  Tack Weld at Pos_1",
        "  [8]  Move to Safe_Pos_1",
        "  [9]  Move to Home",
        "  [10] Move to Safe_Pos_2",
        "  [11] Move to Pos_2",
        "  [12] Tack Weld at Pos_2",
        "",
        rule,
        "Options:",
        "  [a] Approve - Execute this plan",
        "  [r] Revise - Request changes (provide comments)",
        "  [d] Decline - Cancel this task",
        rule,
        "Timeout: 240 seconds",
        rule,
        "",
      ].join("\n"),
    );
  });

  it("shows the console's own timeout, the title without a command, and details without items", async () => {
    const r = await make({
      title: "Deploy v2",
      args: { version: "2.0.0" },
      allowed: ["approve", "reject"],
    });
    const box = formatRequest(r, "cli", { timeoutMs: 120_000 });
    expect(box).toContain("Your command: Deploy v2");
    expect(box).toContain('Details:\n\n  {\n    "version": "2.0.0"\n  }');
    expect(box).toContain("Timeout: 120 seconds");
    expect(box).not.toContain("[r] Revise");
    expect(formatRequest(r, "cli")).toContain("Timeout: none");
  });

  it("refuses an unknown style, naming it", async () => {
    const r = await make({});
    expect(() => formatRequest(r, "html" as never)).toThrow(
      'Expected `style` to be one of "text", "markdown", "cli", got `html` (string)',
    );
  });
});
