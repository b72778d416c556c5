import { PassThrough, Writable } from "node:stream";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Airlock } from "../../src/engine/engine.js";
import { type Planner, ruleBasedPlanner } from "../planner/index.js";
import { captureLog, nextPending, testEngine } from "../shared/testing.js";
import { buildPlan, consoleReviewer, PLAN_ACTION, runRobotPlan, verifyPlan } from "./index.js";

let engine: Airlock;
beforeEach(async () => {
  engine = await testEngine();
});
afterEach(async () => {
  await engine.close();
});

/** The operator's terminal: what they type (all at once, as a pipe would) and what they see. */
function terminal(typed: string | undefined) {
  const input = new PassThrough();
  if (typed !== undefined) input.write(typed);
  const output = new PassThrough();
  let screen = "";
  output.on("data", (c: Buffer) => {
    screen += c.toString();
  });
  return { reviewer: consoleReviewer({ input, output }), screen: () => screen };
}

/** pino writing JSON lines into an array. */
function jsonLog() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split("\n")) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  return { logger: pino(sink), lines };
}

describe("robot-plan (pattern 2)", () => {
  it("approve: the console shows the plan, the operator types a, the verifier passes it", async () => {
    const t = terminal("a\n");
    const { logger, lines } = jsonLog();
    const result = await runRobotPlan({
      airlock: engine,
      command: "weld at position 1 and 2",
      reviewer: t.reviewer,
      timeoutMs: 5000,
      logger,
    });
    expect(result).toMatchObject({
      route: "verify",
      readyToExecute: true,
      humanDecision: "approved",
      humanComments: null,
      intent: { task: "tack_weld", positions: [1, 2] },
      verification: { ok: true, errors: [] },
    });
    expect(result.plan.map((s) => s.name)).toContain("Tack Weld at Pos_2");
    const screen = t.screen();
    expect(screen).toContain("PLAN REVIEW REQUIRED");
    expect(screen).toContain(`Correlation ID: ${result.correlationId}`);
    expect(screen).toContain("Your command: weld at position 1 and 2");
    expect(screen).toContain("[1]  Move to Tool_Weld_Safe_Position");
    expect(screen).toContain(`[${result.plan.length}] Move to Home`);
    expect(screen).toContain("[a] Approve - Execute this plan");
    expect(screen).toContain("Timeout: 5 seconds");
    expect(screen).toContain("Your decision [a/r/d]: ");
    const request = await engine.get(result.reviews[0]?.requestId ?? "");
    expect(request.decision).toMatchObject({
      outcome: "approved",
      reviewer: "operator",
      channel: "cli",
    });
    expect(lines.map((l) => l.msg)).toEqual([
      "Presenting plan for human review",
      "Human decision recorded",
    ]);
    expect(lines[0]).toMatchObject({
      service: "human_review",
      correlation_id: result.correlationId,
      timeout_seconds: 5,
    });
    expect(lines[1]).toMatchObject({ correlation_id: result.correlationId, decision: "approved" });
  });

  it("revise, then approve: the comment re-plans, the new plan is a new request linked to the old", async () => {
    const t = terminal("x\nr\nSkip position 2, too risky today\na\n");
    const result = await runRobotPlan({
      airlock: engine,
      command: "weld at all positions",
      reviewer: t.reviewer,
      timeoutMs: 5000,
    });
    expect(result.route).toBe("verify");
    expect(result.intent?.positions).toEqual([1, 3]);
    expect(result.plan.some((s) => s.name.includes("Pos_2"))).toBe(false);
    expect(result.reviews.map((r) => [r.decision, r.comments])).toEqual([
      ["revision", "Skip position 2, too risky today"],
      ["approved", null],
    ]);
    const [first, second] = result.reviews;
    expect(first?.steps).toBeGreaterThan(second?.steps ?? Infinity);
    const revised = await engine.get(second?.requestId ?? "");
    expect(revised.revisionOf).toBe(first?.requestId);
    expect(revised.correlationId).toBe(result.correlationId);
    expect((await engine.get(first?.requestId ?? "")).status).toBe("revise");
    expect(t.screen()).toContain("Invalid choice. Please enter 'a', 'r', or 'd'.");
    expect(t.screen()).toContain("What changes do you want? ");
    expect(result.metrics).toMatchObject({
      reviews: 2,
      approvalRate: 1,
      revisionRate: 0.5,
      timeoutRate: 0,
    });
  });

  it("decline routes to the fallback and nothing is ready to run", async () => {
    const t = terminal("d\n");
    const result = await runRobotPlan({ airlock: engine, reviewer: t.reviewer, timeoutMs: 5000 });
    expect(result).toMatchObject({
      route: "fallback",
      readyToExecute: false,
      humanDecision: "declined",
      message: "Task declined by operator; nothing was executed",
    });
    expect(result.verification).toBeUndefined();
    expect(result.metrics.approvalRate).toBe(0);
  });

  it("timeout: no answer before the deadline routes to the fallback, logged as a timeout", async () => {
    const t = terminal(undefined);
    const { logger, lines } = jsonLog();
    const result = await runRobotPlan({
      airlock: engine,
      reviewer: t.reviewer,
      timeoutMs: 300,
      logger,
    });
    expect(result).toMatchObject({
      route: "fallback",
      humanDecision: "timeout",
      readyToExecute: false,
    });
    expect(result.message).toMatch(/^Human review timed out after 0.3 seconds with no response/);
    expect(t.screen()).toContain("Human review timeout exceeded. Routing to fallback.");
    const request = await engine.get(result.reviews[0]?.requestId ?? "");
    expect(request.status).toBe("timed_out");
    expect(lines.map((l) => l.msg)).toEqual([
      "Presenting plan for human review",
      "Human review timeout",
    ]);
    expect(result.metrics.timeoutRate).toBe(1);
  });

  it("a timeout while typing the revision comment is a timeout, not a revision", async () => {
    const t = terminal("r\n");
    const result = await runRobotPlan({ airlock: engine, reviewer: t.reviewer, timeoutMs: 300 });
    expect(result).toMatchObject({ route: "fallback", humanDecision: "timeout" });
    expect(t.screen()).toContain(
      "What changes do you want? \nTimeout exceeded while waiting for comments.",
    );
    expect(result.reviews).toHaveLength(1);
  });

  it("any decider works: revise and approve through the API while the agent waits", async () => {
    const run = runRobotPlan({
      airlock: engine,
      command: "inspect positions 1 and 3",
      timeoutMs: 5000,
    });
    const seen = new Set<string>();
    const first = await nextPending(engine, { action: PLAN_ACTION, seen });
    expect(first.items.map((i) => i.label)).toContain("Attach Camera");
    await engine.decide(first.id, {
      outcome: "revise",
      reviewer: "bob",
      comment: "only position 3",
    });
    const second = await nextPending(engine, { action: PLAN_ACTION, seen });
    expect(second.revisionOf).toBe(first.id);
    expect(second.items.map((i) => i.label)).not.toContain("Inspect Pos_1");
    await engine.decide(second.id, { outcome: "approved", reviewer: "bob" });
    const result = await run;
    expect(result).toMatchObject({ route: "verify", intent: { task: "inspect", positions: [3] } });
  });

  it("a comment the planner cannot act on: the revision says the plan is unchanged, not re-planned", async () => {
    const { log, lines } = captureLog();
    const run = runRobotPlan({
      airlock: engine,
      command: "inspect positions 1 and 3",
      timeoutMs: 5000,
      log,
    });
    const seen = new Set<string>();
    const first = await nextPending(engine, { action: PLAN_ACTION, seen });
    await engine.decide(first.id, { outcome: "revise", reviewer: "bob", comment: "looks fine" });
    const second = await nextPending(engine, { action: PLAN_ACTION, seen });
    expect(second.items).toEqual(first.items);
    expect(second.summary).not.toMatch(/Re-planned/);
    expect(second.summary).toMatch(
      /found nothing to change in the operator's comment "looks fine"/,
    );
    expect(lines.some((l) => /^plan \(revision 1\): .*\(unchanged: /.test(l))).toBe(true);
    await engine.decide(second.id, { outcome: "approved", reviewer: "bob" });
    expect((await run).route).toBe("verify");
  });

  it("an approved plan that breaks the cell's constraints is stopped by the verifier", async () => {
    const wrong: Planner = {
      ...ruleBasedPlanner(),
      parseIntent: async () => ({ task: "tack_weld", positions: [1, 7] }),
    };
    const run = runRobotPlan({ airlock: engine, planner: wrong, timeoutMs: 5000 });
    const pending = await nextPending(engine, { action: PLAN_ACTION });
    await engine.decide(pending.id, { outcome: "approved", reviewer: "carol" });
    const result = await run;
    expect(result).toMatchObject({
      route: "fallback",
      readyToExecute: false,
      humanDecision: "approved",
    });
    expect(result.message).toMatch(/^Plan failed verification: .*Safe_Pos_7 is not a location/);
    expect(result.verification?.errors.join("\n")).toContain("Pos_7 does not exist");
  });

  it("a command the planner cannot read goes to the fallback without asking anyone", async () => {
    const result = await runRobotPlan({ airlock: engine, command: "make coffee", timeoutMs: 5000 });
    expect(result.route).toBe("fallback");
    expect(result.message).toMatch(/^Could not understand the command/);
    expect((await engine.list()).items).toEqual([]);
  });

  it("gives up after too many revisions", async () => {
    const run = runRobotPlan({ airlock: engine, timeoutMs: 5000, maxRevisions: 1 });
    const seen = new Set<string>();
    for (let i = 0; i < 2; i++) {
      const r = await nextPending(engine, { action: PLAN_ACTION, seen });
      await engine.decide(r.id, { outcome: "revise", reviewer: "bob", comment: "hmm" });
    }
    const result = await run;
    expect(result.route).toBe("fallback");
    expect(result.message).toMatch(/Gave up after 1 revisions/);
  });
});

describe("plan verifier", () => {
  const good = buildPlan({ task: "tack_weld", positions: [1] });

  it("passes a built plan", () => {
    expect(verifyPlan(good)).toEqual({ ok: true, errors: [] });
  });

  it("requires a move to the position right before a routine, the right tool, and ending Home", () => {
    const weldIndex = good.findIndex((s) => s.action === "routine");
    const noApproach = good.filter((_, i) => i !== weldIndex - 1);
    expect(verifyPlan(noApproach).errors).toEqual([
      expect.stringMatching(/must come right after a move to Pos_1/),
    ]);
    const camera = good.map((s) => (s.action === "attach" ? { ...s, target: "Camera" } : s));
    expect(verifyPlan(camera).errors).toEqual([
      expect.stringMatching(/needs the Welder attached, but Camera is/),
    ]);
    expect(verifyPlan(good.slice(0, -1)).errors).toEqual([
      "the plan must end with the arm at Home",
    ]);
    expect(verifyPlan([]).ok).toBe(false);
  });
});
