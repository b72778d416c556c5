// Presentation fields: typed on the request (labels, question, command, progress, critiques,
// estimate, hitl), stored as given, and read by presentationOf, which also understands the metadata
// keys of requests stored before the fields existed.
import { afterEach, describe, expect, it } from "vitest";
import { presentationOf } from "../../src/core/presentation.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { hitlTool } from "../../src/tools/hitl-tool.js";

let engine: Airlock;
afterEach(async () => {
  await engine?.close();
});

describe("presentation fields", () => {
  it("are stored as given and read back; metadata stays the caller's", async () => {
    engine = await createAirlock({ store: sqliteStore(":memory:") });
    const r = await engine.request({
      title: "More research?",
      items: ["q1"],
      labels: { approve: "Run them", reject: "Stop here", items: "Queries", itemNoun: "queries" },
      question: "Is tea good for you?",
      progress: { "Sub-questions analyzed": 3 },
      critiques: [{ issue: "Few sources", importance: "high" }],
      estimate: { minutes: 4, cost: 0.2 },
      metadata: { mine: 1 },
    });
    const stored = await engine.get(r.id);
    expect(stored).toMatchObject({
      labels: { approve: "Run them", itemNoun: "queries" },
      question: "Is tea good for you?",
      progress: { "Sub-questions analyzed": 3 },
      critiques: [{ issue: "Few sources", importance: "high" }],
      estimate: { minutes: 4, cost: 0.2 },
      metadata: { mine: 1 },
    });
    expect(presentationOf(stored)).toMatchObject({
      labels: { approve: "Run them", reject: "Stop here", items: "Queries" },
      question: "Is tea good for you?",
    });
  });

  it("are checked like any input: a bad one is refused with the field named", async () => {
    engine = await createAirlock({ store: sqliteStore(":memory:") });
    await expect(engine.request({ title: "x", estimate: { minutes: -1 } })).rejects.toMatchObject({
      code: "invalid_input",
    });
    await expect(
      engine.request({ title: "x", labels: { approve: "ok", other: "no" } as never }),
    ).rejects.toMatchObject({ code: "invalid_input" });
  });

  it("a request stored with the old metadata keys reads the same", () => {
    const p = presentationOf({
      metadata: {
        approveLabel: "Sign",
        hitl: { tool: "sign_contract", rejectLabel: "Keep unsigned", approvalType: "contract" },
        context: { userRole: "admin" },
        itemsTitle: "Proposed Additional Research",
        itemNoun: "queries",
        main_query: "Test query",
        operatorInput: "weld at 1",
        progress: { completedCount: 5, avg_confidence: 0.75, extra: { nested: 1 } },
        critique_points: [{ issue: "Missing data", importance: "HIGH" }, { issue: 3 }],
        estimatedMinutes: 4,
        estimated_cost: 0.2,
      },
    });
    expect(p).toEqual({
      labels: {
        approve: "Sign",
        reject: "Keep unsigned",
        items: "Proposed Additional Research",
        itemNoun: "queries",
      },
      question: "Test query",
      command: "weld at 1",
      progress: { "Sub-questions analyzed": 5, "Average confidence": 0.75 },
      critiques: [{ issue: "Missing data", importance: "high" }],
      estimate: { minutes: 4, cost: 0.2 },
      hitl: { tool: "sign_contract", approvalType: "contract", context: { userRole: "admin" } },
    });
    // Typed fields win over metadata.
    expect(
      presentationOf({ labels: { approve: "Go" }, metadata: { approveLabel: "Old" } }).labels,
    ).toEqual({ approve: "Go" });
  });

  it("hitlTool writes typed fields, not metadata, and resumes from them", async () => {
    engine = await createAirlock({ store: sqliteStore(":memory:") });
    const tool = hitlTool(async (a: { n: number }) => a.n * 2, {
      name: "double",
      airlock: engine,
      autoThreshold: 100,
      quickThreshold: 100,
      approveLabel: "Double it",
    });
    const pending = await tool({ n: 2, _hitlContext: { userRole: "admin" } });
    const id = (pending as { hitl_result: { approvalId: string } }).hitl_result.approvalId;
    const stored = await engine.get(id);
    expect(stored.metadata).toEqual({});
    expect(stored.hitl).toMatchObject({ tool: "double", context: { userRole: "admin" } });
    expect(stored.labels).toEqual({ approve: "Double it", reject: "Reject" });
    await engine.decide(id, { outcome: "approved", reviewer: "alice" });
    expect(await tool.resume(id)).toBe(4);
  });
});
