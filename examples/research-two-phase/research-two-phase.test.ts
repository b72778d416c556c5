import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Airlock } from "../../src/engine/engine.js";
import { eventually } from "../../test/helpers.js";
import { captureLog, nextPending, tempDir, testEngine } from "../shared/testing.js";
import {
  ApprovalRequiredError,
  chunkText,
  createExecutionTools,
  jsonFileSessionStore,
  openCollection,
  PLAN_ACTION,
  type ResearchEvent,
  type ResearchSession,
  reportSkeleton,
  runResearchTwoPhase,
  updateReport,
} from "./index.js";

let engine: Airlock;
let tmp: { dir: string; cleanup: () => void };
let file: string;
beforeEach(async () => {
  engine = await testEngine();
  tmp = tempDir("airlock-research-");
  file = join(tmp.dir, "research-sessions.json");
});
afterEach(async () => {
  await engine.close();
  tmp.cleanup();
});

const onDisk = (): ResearchSession[] =>
  existsSync(file)
    ? (JSON.parse(readFileSync(file, "utf8")) as { records: ResearchSession[] }).records
    : [];

/** The persisted records once `ready` holds for them (the agent persists right after opening the gate). */
async function onDiskWhen(
  ready: (records: ResearchSession[]) => boolean,
): Promise<ResearchSession[]> {
  return eventually(() => ready(onDisk()) && onDisk(), { timeoutMs: 2_000, intervalMs: 5 }).catch(
    () => {
      throw new Error(
        `the session file never reached the expected state: ${JSON.stringify(onDisk())}`,
      );
    },
  );
}

const toolCalls = (events: readonly ResearchEvent[], tool?: string) =>
  events.filter(
    (e): e is Extract<ResearchEvent, { type: "tool_call" }> =>
      e.type === "tool_call" && (tool === undefined || e.tool === tool),
  );

describe("research-two-phase (pattern 5)", () => {
  it("plans with no search, waits for approval, then searches, reads and patches the report", async () => {
    const events: ResearchEvent[] = [];
    const { log } = captureLog();
    const run = runResearchTwoPhase({
      airlock: engine,
      log,
      researchId: "r-1",
      sessions: jsonFileSessionStore(file),
      settings: { max_update_size: 180 },
      onEvent: (e) => events.push(e),
    });
    const plan = await nextPending(engine, { action: PLAN_ACTION });

    // Phase A only: the plan exists, nothing has been searched, and the session is persisted.
    expect(events.map((e) => [e.type, "tool" in e ? e.tool : ""])).toEqual([
      ["tool_call", "decompose_query"],
      ["tool_result", "decompose_query"],
    ]);
    const ready = await onDiskWhen((r) => r[0]?.status === "awaiting_approval");
    expect(ready).toHaveLength(1);
    expect(ready[0]).toMatchObject({
      research_id: "r-1",
      status: "awaiting_approval",
      sources: [],
      approval: { request_id: plan.id, status: "pending" },
    });
    expect(ready[0]?.report_markdown).toBe(
      reportSkeleton(ready[0]?.initial_query ?? "", ready[0]?.plan?.outline ?? []),
    );
    expect(plan.items.map((i) => i.label)).toEqual(ready[0]?.plan?.expanded_queries);
    expect(plan.summary).toContain("Clarifying questions");
    expect(plan.summary).toContain(
      "Outline: Overview → SQLite → PostgreSQL → Trade-offs → Recommendation",
    );

    const beforeDecision = events.length;
    await engine.decide(plan.id, {
      outcome: "approved",
      reviewer: "alice",
      selected: ["q1", "q4"],
    });
    const { session } = await run;

    // Nothing of phase B happened before the decision.
    expect(toolCalls(events.slice(0, beforeDecision)).map((e) => e.tool)).toEqual([
      "decompose_query",
    ]);
    // Only the approved queries were searched.
    expect(toolCalls(events, "web_search").map((e) => e.args.query)).toEqual([
      "SQLite advantages",
      "PostgreSQL limitations",
    ]);
    expect(session.approval?.approved_queries).toEqual([
      "SQLite advantages",
      "PostgreSQL limitations",
    ]);
    // Every source found was fetched and parsed, and is in the report's source list.
    expect(session.sources.length).toBeGreaterThanOrEqual(3);
    expect(toolCalls(events, "fetch_url").map((e) => e.args.url)).toEqual(
      session.sources.map((s) => s.url),
    );
    expect(toolCalls(events, "parse_content")).toHaveLength(session.sources.length);
    for (const s of session.sources) expect(session.report_markdown).toContain(`(${s.url})`);
    expect(session.sources.map((s) => s.url)).toContain("corpus://sqlite-overview.md");

    // The report grew in bounded updates, each a tool result carrying the report, then report_updated.
    const updates = toolCalls(events, "update_report");
    expect(updates.length).toBeGreaterThan(6);
    for (const u of updates) expect(u.args.chars).toBeLessThanOrEqual(180);
    const reports = events.filter(
      (e): e is Extract<ResearchEvent, { type: "report_updated" }> => e.type === "report_updated",
    );
    expect(reports).toHaveLength(updates.length);
    for (let i = 1; i < reports.length; i++) {
      const prev = reports[i - 1]?.report_markdown ?? "";
      const next = reports[i]?.report_markdown ?? "";
      expect(next.length).toBeGreaterThan(prev.length);
      expect(next.length - prev.length).toBeLessThanOrEqual(180 + 2);
    }
    expect(session.report_markdown).toBe(reports.at(-1)?.report_markdown);
    expect(session.report_markdown).toMatch(/^## SQLite\n\nSQLite .*\[\d\]/m);
    expect(session.report_markdown).not.toContain("_Pending._");
    const last = events.at(-1);
    expect(last).toMatchObject({ type: "stop", status: "completed" });

    // Persisted again at completion, replacing the plan-ready record.
    const done = onDisk();
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ research_id: "r-1", status: "completed" });
    expect(done[0]?.report_markdown).toBe(session.report_markdown);
    expect(done[0]?.events).toHaveLength(events.length);

    // The progress is on the plan request's audit trail too.
    const audit = await engine.audit({ requestId: plan.id });
    const notified = audit.filter((e) => e.type === "notified");
    expect(notified.length).toBe(events.length - 2);
    expect(notified.at(-1)?.data).toMatchObject({ event: "stop", status: "completed" });
  });

  it("a rejected plan searches nothing and is persisted as declined", async () => {
    const events: ResearchEvent[] = [];
    const run = runResearchTwoPhase({
      airlock: engine,
      researchId: "r-2",
      sessions: jsonFileSessionStore(file),
      onEvent: (e) => events.push(e),
    });
    const plan = await nextPending(engine, { action: PLAN_ACTION });
    await engine.decide(plan.id, {
      outcome: "rejected",
      reviewer: "alice",
      comment: "wrong question",
    });
    const { session } = await run;
    expect(session.status).toBe("declined");
    expect(toolCalls(events).map((e) => e.tool)).toEqual(["decompose_query"]);
    expect(events.at(-1)).toMatchObject({ type: "stop", status: "declined" });
    expect((events.at(-1) as { message: string }).message).toContain("wrong question");
    expect(onDisk()).toMatchObject([{ research_id: "r-2", status: "declined", sources: [] }]);
  });

  it("cancelling while the plan waits withdraws the gate and emits cancelled", async () => {
    const controller = new AbortController();
    const events: ResearchEvent[] = [];
    const run = runResearchTwoPhase({
      airlock: engine,
      researchId: "r-3",
      sessions: jsonFileSessionStore(file),
      signal: controller.signal,
      onEvent: (e) => events.push(e),
    });
    const plan = await nextPending(engine, { action: PLAN_ACTION });
    controller.abort();
    const { session } = await run;
    expect(session.status).toBe("cancelled");
    expect(events.at(-1)).toMatchObject({ type: "cancelled" });
    expect((await engine.get(plan.id)).status).toBe("cancelled");
    expect(onDisk()[0]?.status).toBe("cancelled");
  });

  it("cancelling during phase B stops before the report is written", async () => {
    const controller = new AbortController();
    const events: ResearchEvent[] = [];
    const run = runResearchTwoPhase({
      airlock: engine,
      researchId: "r-5",
      sessions: jsonFileSessionStore(file),
      signal: controller.signal,
      onEvent: (e) => {
        events.push(e);
        if (e.type === "tool_result" && e.tool === "web_search") controller.abort();
      },
    });
    const plan = await nextPending(engine, { action: PLAN_ACTION });
    await engine.decide(plan.id, { outcome: "approved", reviewer: "alice" });
    const { session } = await run;
    expect(session.status).toBe("cancelled");
    expect(toolCalls(events).map((e) => e.tool)).toEqual(["decompose_query", "web_search"]);
    expect(events.at(-1)).toMatchObject({
      type: "cancelled",
      reason: "cancelled during execution",
    });
    expect(onDisk()[0]?.status).toBe("cancelled");
  });

  it("replaying a run with the same research_id reuses the approved gate and keeps one record", async () => {
    const sessions = jsonFileSessionStore(file);
    const first = runResearchTwoPhase({ airlock: engine, researchId: "r-4", sessions });
    const plan = await nextPending(engine, { action: PLAN_ACTION });
    await engine.decide(plan.id, { outcome: "approved", reviewer: "alice" });
    const a = await first;
    const b = await runResearchTwoPhase({ airlock: engine, researchId: "r-4", sessions });
    expect(b.session.approval?.request_id).toBe(plan.id);
    expect(b.session.report_markdown).toBe(a.session.report_markdown);
    expect((await engine.list()).items).toHaveLength(1);
    expect(onDisk()).toHaveLength(1);
  });
});

describe("research-two-phase building blocks", () => {
  it("phase B tools cannot be created from a plan that is not approved", async () => {
    const pending = await engine.request({
      title: "plan",
      args: { plan: { expanded_queries: ["x"] } },
    });
    expect(() => createExecutionTools(pending, openCollection())).toThrow(ApprovalRequiredError);
  });

  it("the collection is searched for real: a query finds the document about it", () => {
    const { index } = openCollection();
    expect(index.size).toBe(6);
    expect(index.search("SQLite write limitations", 1)[0]?.url).toBe(
      "corpus://sqlite-concurrency.md",
    );
    expect(index.search("PostgreSQL operations autovacuum costs", 1)[0]?.url).toBe(
      "corpus://postgres-operations.md",
    );
    expect(index.search("zebra", 3)).toEqual([]);
  });

  it("updateReport refuses an update over max_update_size or a section outside the outline", () => {
    const report = reportSkeleton("q", ["A", "B"]);
    expect(() => updateReport(report, "A", "x".repeat(11), 10)).toThrow(/over max_update_size/);
    expect(() => updateReport(report, "C", "x", 10)).toThrow(/no section "C"/);
    const once = updateReport(report, "A", "First.", 10);
    const twice = updateReport(once, "A", "Second.", 10);
    expect(twice).toBe(
      "# Research report: q\n\n## A\n\nFirst. Second.\n\n## B\n\n_Pending._\n\n## Sources\n\n_Pending._\n",
    );
  });

  it("chunkText keeps every chunk within the bound and loses no word", () => {
    const text = "One short sentence. Another sentence that is longer than the rest of them. Tiny.";
    const chunks = chunkText(text, 30);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(30);
    expect(chunks.join(" ").split(/\s+/)).toEqual(text.split(/\s+/));
    expect(chunkText("1. a\n2. b", 100)).toEqual(["1. a\n2. b"]);
  });
});

describe("research-two-phase: the reviewer answers the clarifying questions (respond)", () => {
  it("plans again for the answers, asks for approval of that plan, and writes the report for them", async () => {
    const events: ResearchEvent[] = [];
    const run = runResearchTwoPhase({
      airlock: engine,
      researchId: "r-6",
      sessions: jsonFileSessionStore(file),
      onEvent: (e) => events.push(e),
    });
    const first = await nextPending(engine, { action: PLAN_ACTION });
    expect(first.allowed).toEqual(["approve", "reject", "select", "respond"]);
    const schema = first.responseSchema as { properties: Record<string, { title: string }> };
    const questions = Object.values(schema.properties).map((p) => p.title);
    expect(questions).toHaveLength(3);
    expect(questions[0]).toMatch(/Which criteria matter most/);
    expect(first.summary).toContain("answer them with **Respond**");

    // An answer that does not fit the schema is refused, and nothing moves.
    await expect(
      engine.decide(first.id, {
        outcome: "responded",
        reviewer: "alice",
        response: { answer_9: "?" },
      }),
    ).rejects.toMatchObject({ code: "invalid_input" });
    await engine.decide(first.id, {
      outcome: "responded",
      reviewer: "alice",
      response: {
        answer_1: "reliability and backups matter most",
        answer_3: "the CTO, deciding this quarter",
      },
    });

    // The second plan, made for the answers, waits for approval; nothing was searched yet.
    const second = await nextPending(engine, { action: PLAN_ACTION });
    expect(second.id).not.toBe(first.id);
    expect(second.revisionOf).toBe(first.id);
    expect(second.allowed).toEqual(["approve", "reject", "select"]);
    expect(second.title).toContain("made for your answers");
    expect(second.summary).toContain(
      "- Which criteria matter most when choosing between SQLite and PostgreSQL: cost, reliability, performance or operations? **reliability and backups matter most**",
    );
    expect(second.summary).not.toContain("Clarifying questions");
    // The answers steer the search: a query focused on them comes first.
    expect(second.items[0]?.label).toBe("SQLite PostgreSQL reliability backups matter cto");
    expect(second.args).toMatchObject({
      clarifications: [
        { question: questions[0], answer: "reliability and backups matter most" },
        { question: questions[2], answer: "the CTO, deciding this quarter" },
      ],
    });
    expect(toolCalls(events).map((e) => e.tool)).toEqual(["decompose_query", "decompose_query"]);
    const waiting = await onDiskWhen((r) => r[0]?.approval?.request_id === second.id);
    expect(waiting[0]).toMatchObject({
      status: "awaiting_approval",
      questions: { request_id: first.id, answered_by: "alice" },
    });

    await engine.decide(second.id, { outcome: "approved", reviewer: "alice" });
    const { session } = await run;
    expect(session.status).toBe("completed");
    expect(session.clarifications).toEqual([
      { question: questions[0], answer: "reliability and backups matter most" },
      { question: questions[2], answer: "the CTO, deciding this quarter" },
    ]);
    expect(toolCalls(events, "web_search")[0]?.args.query).toBe(
      "SQLite PostgreSQL reliability backups matter cto",
    );
    // The report says what it was written for, in the reviewer's words.
    expect(session.report_markdown).toContain(
      "> **Scope, from the reviewer's answers:**\n> - Which criteria matter most",
    );
    expect(session.report_markdown).toContain("**the CTO, deciding this quarter**");
    expect(session.report_markdown).not.toContain("_Pending._");
    expect(session.approval).toMatchObject({ request_id: second.id, status: "approved" });
    // The progress went to the approved plan's request.
    const audit = await engine.audit({ requestId: second.id });
    expect(audit.filter((e) => e.type === "notified").at(-1)?.data).toMatchObject({
      event: "stop",
      status: "completed",
    });
  });

  it("an answered plan that is then rejected searches nothing", async () => {
    const events: ResearchEvent[] = [];
    const run = runResearchTwoPhase({
      airlock: engine,
      researchId: "r-7",
      onEvent: (e) => events.push(e),
    });
    const first = await nextPending(engine, { action: PLAN_ACTION });
    await engine.decide(first.id, {
      outcome: "responded",
      reviewer: "alice",
      response: { answer_2: "a few hundred users" },
    });
    const second = await nextPending(engine, { action: PLAN_ACTION });
    expect(second.revisionOf).toBe(first.id);
    await engine.decide(second.id, { outcome: "rejected", reviewer: "alice", comment: "not now" });
    const { session } = await run;
    expect(session.status).toBe("declined");
    expect(toolCalls(events, "web_search")).toEqual([]);
  });
});
