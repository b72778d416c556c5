import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import type { Airlock } from "../../src/engine/engine.js";
import { type Planner, ruleBasedPlanner } from "../planner/index.js";
import type { Gate } from "../shared/gate.js";
import { captureLog, nextPending, testEngine } from "../shared/testing.js";
import { DEFAULT_SUB_QUESTIONS } from "./corpus.js";
import { decideByReply, RESEARCH_ACTION, runResearchReflection } from "./index.js";

let engine: Airlock;
beforeEach(async () => {
  engine = await testEngine();
});
afterEach(async () => {
  await engine.close();
});

/** Runs the pipeline and answers its gate with a typed reply, as a chat reviewer would. */
async function runWithReply(reply: string) {
  const messages: string[] = [];
  const { log, lines } = captureLog();
  const run = runResearchReflection({
    airlock: engine,
    log,
    onApprovalRequest: (_request, message) => {
      messages.push(message);
    },
  });
  const pending = await nextPending(engine, { action: RESEARCH_ACTION });
  const decided = await decideByReply(engine, pending.id, reply, { reviewer: "alice" });
  const result = await run;
  return { result, pending, decided, messages, lines };
}

describe("research-reflection (pattern 1)", () => {
  it("APPROVE ALL runs every recommended search, and the message shows what to decide on", async () => {
    const { result, pending, messages, lines } = await runWithReply("APPROVE ALL");
    const queries = pending.items.map((i) => i.label);
    expect(queries).toHaveLength(3);
    expect(result.approval).toMatchObject({
      approved: true,
      approvalMethod: "approve_all",
      selectedQueries: queries,
      reviewer: "alice",
    });
    const meta = result.state.reflection_metadata;
    expect(meta?.searches_performed).toEqual(queries);
    expect(meta?.user_decision).toBe("approve_all");
    expect(meta?.improvements_made).toBeGreaterThan(0);
    expect(meta?.critique_summary.length).toBeGreaterThan(0);

    const message = messages[0] ?? "";
    expect(message).toBe(result.message);
    expect(message).toContain("Main query: How well do heat pumps perform in cold climates?");
    expect(message).toContain(`Sub-questions analyzed: ${DEFAULT_SUB_QUESTIONS.length}`);
    expect(message).toContain("Key issues identified:");
    expect(message).toContain("Proposed Additional Research (3 queries):");
    expect(message).toContain(`1. ${queries[0]}`);
    expect(message).toContain("Estimated additional time: ~6 minutes");
    expect(message).toContain("Estimated additional cost: ~$0.12");
    expect(message).toMatch(/Reply APPROVE ALL .*\n- Reply SKIP .*\n- Reply SELECT 1,3 /);
    expect(message).toContain("Timeout: Response required within 60 minutes");
    expect(lines.some((l) => l.startsWith(`search: "${queries[2]}"`))).toBe(true);
  });

  it("SELECT runs only the chosen queries; out-of-range numbers are dropped and noted", async () => {
    const { result, pending, decided } = await runWithReply("select 1,3,7");
    const [q1, q2, q3] = pending.items.map((i) => i.label);
    expect(decided.reply).toMatchObject({ method: "select", dropped: ["7"] });
    expect(result.approval.approvalMethod).toBe("select");
    expect(result.state.reflection_metadata?.searches_performed).toEqual([q1, q3]);
    expect(result.state.reflection_metadata?.searches_performed).not.toContain(q2);
    expect(result.state.reflection_metadata?.reviewer_notes).toBe(
      "Out-of-range numbers ignored: 7",
    );
  });

  it("SKIP finishes with the current findings and searches nothing", async () => {
    const before = await runResearchReflection({
      airlock: engine,
      requireApproval: false,
      maxAdditionalSearches: 0,
    });
    const { result } = await runWithReply("skip");
    expect(result.approval).toMatchObject({ approved: false, approvalMethod: "skip" });
    expect(result.state.reflection_metadata).toMatchObject({
      searches_performed: [],
      improvements_made: 0,
      user_decision: "skip",
    });
    // Untouched: the same findings as a run that searched nothing extra.
    expect(result.state.findings).toEqual(before.state.findings);
  });

  it("an unreadable reply is a parse error and never an approval", async () => {
    const { result, decided } = await runWithReply("SELECT invalid");
    expect(decided.request.status).toBe("rejected");
    expect(result.approval).toMatchObject({ approved: false, approvalMethod: "parse_error" });
    expect(result.state.reflection_metadata?.searches_performed).toEqual([]);
  });

  it("requireApproval: false approves every query automatically, and the gate records it", async () => {
    const result = await runResearchReflection({ airlock: engine, requireApproval: false });
    expect(result.approval).toMatchObject({
      approved: true,
      approvalMethod: "auto",
      reviewerNotes: "approval not required by configuration",
    });
    expect(result.state.reflection_metadata?.searches_performed).toHaveLength(3);
    const stored = await engine.get(result.requestId ?? "");
    expect(stored.status).toBe("approved");
    expect(stored.decision?.method).toBe("auto");
    const events = await engine.audit({ requestId: stored.id });
    expect(events.map((e) => e.type)).toEqual(["created", "decided"]);
  });

  it("no recommended queries settles the gate as no_items without asking anyone", async () => {
    const satisfied: Planner = {
      ...ruleBasedPlanner(),
      reflect: async () => ({
        critique: [{ issue: "all good", importance: "low" }],
        additionalQuestions: [],
        recommendedQueries: [],
      }),
    };
    const result = await runResearchReflection({ airlock: engine, planner: satisfied });
    expect(result.approval).toMatchObject({
      approved: false,
      approvalMethod: "no_items",
      selectedQueries: [],
    });
    expect(result.state.reflection_metadata?.searches_performed).toEqual([]);
    expect((await engine.list({ status: "pending" })).items).toEqual([]);
  });

  it("a failure while waiting is 'not approved' with method error, and the gate is withdrawn", async () => {
    const flaky: Gate = {
      request: (input) => engine.request(input),
      get: (id) => engine.get(id),
      list: (filter) => engine.list(filter),
      decide: (id, d) => engine.decide(id, d),
      cancel: (id, o) => engine.cancel(id, o),
      getByKey: (k, o) => engine.getByKey(k, o),
      claimExecution: (id, o) => engine.claimExecution(id, o),
      takeTicket: (k, o) => engine.takeTicket(k, o),
      finishTicket: (k, o) => engine.finishTicket(k, o),
      renewExecution: (id, o) => engine.renewExecution(id, o),
      finishExecution: (id, o, by) => engine.finishExecution(id, o, by),
      record: (e) => engine.record(e),
      waitFor: async (): Promise<ApprovalRequest> => {
        throw new Error("connection to the approval server lost");
      },
    };
    const result = await runResearchReflection({ airlock: flaky });
    expect(result.approval).toMatchObject({
      approved: false,
      approvalMethod: "error",
      reviewerNotes: "Approval failed: connection to the approval server lost",
    });
    expect(result.state.reflection_metadata?.searches_performed).toEqual([]);
    const withdrawn = await engine.get(result.approval.requestId ?? "");
    expect(withdrawn.status).toBe("cancelled");
  });

  it("no decision before the deadline is a timeout: nothing is searched", async () => {
    const result = await runResearchReflection({ airlock: engine, timeoutMs: 150 });
    expect(result.approval).toMatchObject({ approved: false, approvalMethod: "timeout" });
    expect(result.state.reflection_metadata?.searches_performed).toEqual([]);
  });
});
