import { afterEach, describe, expect, it, vi } from "vitest";
import { runReview } from "../../src/channels/review.js";
import type { RequestInput } from "../../src/core/schemas.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { captureLogs, REVIEW_PROMPT as PROMPT, terminal } from "./terminal.js";

let engine: Airlock | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  await engine?.close();
  engine = undefined;
});

async function setup() {
  const logs = captureLogs();
  engine = await createAirlock({ store: sqliteStore(":memory:"), logger: logs.logger });
  return { engine, logs };
}

const plan = (n: number, over: Partial<RequestInput> = {}): RequestInput => ({
  title: `Plan ${n}`,
  items: [`step ${n}.1`, `step ${n}.2`],
  correlationId: `corr-${n}`,
  requester: "planner",
  ...over,
});

describe("runReview (airlock review)", () => {
  it("walks the queue oldest first: approve, revise with comment, decline", async () => {
    const { engine: e, logs } = await setup();
    const r1 = await e.request(plan(1));
    const r2 = await e.request(plan(2));
    const r3 = await e.request(plan(3));
    const t = terminal();
    const done = runReview(e, { ...t, reviewer: "op", timeoutMs: 5000 });
    await t.waitFor(PROMPT, 1);
    expect(t.text()).toContain("Correlation ID: corr-1");
    t.type("a");
    await t.waitFor(PROMPT, 2);
    expect(t.text().split("Correlation ID: corr-2").length).toBe(2);
    t.type("r");
    await t.waitFor("What changes do you want? ");
    t.type("Skip position 2, obstruction detected");
    await t.waitFor(PROMPT, 3);
    t.type("d");
    expect(await done).toEqual({ reviewed: 3, stopped: "queue_empty" });

    const [d1, d2, d3] = await Promise.all([e.get(r1.id), e.get(r2.id), e.get(r3.id)]);
    expect(d1.status).toBe("approved");
    expect(d1.decision).toMatchObject({ reviewer: "op", channel: "cli", method: "approve_all" });
    expect(d2.status).toBe("revise");
    expect(d2.decision).toMatchObject({
      channel: "cli",
      comment: "Skip position 2, obstruction detected",
    });
    expect(d3.status).toBe("rejected");
    expect(d3.decision).toMatchObject({ channel: "cli", method: "reject" });
    expect(t.text()).toContain(`Decision recorded: approved (${r1.id}).`);
    expect(t.text()).toContain("No more pending requests to review.");

    // The three JSON log lines of pattern 2, each with its correlation id.
    const byMsg = (msg: string) => logs.lines.filter((l) => l.msg === msg);
    expect(byMsg("Presenting plan for human review").map((l) => l.correlation_id)).toEqual([
      "corr-1",
      "corr-2",
      "corr-3",
    ]);
    expect(byMsg("Human decision recorded")).toEqual([
      expect.objectContaining({ correlation_id: "corr-1", outcome: "approved", channel: "cli" }),
      expect.objectContaining({ correlation_id: "corr-2", outcome: "revise" }),
      expect.objectContaining({ correlation_id: "corr-3", outcome: "rejected" }),
    ]);
  });

  it("re-prompts on invalid input, then records the approval", async () => {
    const { engine: e } = await setup();
    const r = await e.request(plan(1));
    const t = terminal();
    const done = runReview(e, { ...t, reviewer: "op", timeoutMs: 5000 });
    await t.waitFor(PROMPT);
    t.type("maybe");
    await t.waitFor(PROMPT, 2);
    t.type("a");
    expect(await done).toEqual({ reviewed: 1, stopped: "queue_empty" });
    expect((await e.get(r.id)).status).toBe("approved");
    expect(t.text()).toContain("Invalid choice. Please enter 'a', 's', 'r', or 'd'.");
  });

  it("stops on the console's timeout and records nothing when the gate has no deadline", async () => {
    const { engine: e } = await setup();
    const r1 = await e.request(plan(1));
    await e.request(plan(2));
    const t = terminal();
    expect(await runReview(e, { ...t, reviewer: "op", timeoutMs: 150 })).toEqual({
      reviewed: 0,
      stopped: "timeout",
    });
    expect((await e.get(r1.id)).status).toBe("pending");
    expect(t.text().split(PROMPT).length - 1).toBe(1);
  });

  it("a gate whose deadline comes first times out when the console does, logged as such", async () => {
    const { engine: e, logs } = await setup();
    const r = await e.request(plan(1, { timeoutMs: 300 }));
    const t = terminal();
    const started = Date.now();
    const result = await runReview(e, { ...t, reviewer: "op", timeoutMs: 60_000 });
    expect(result).toEqual({ reviewed: 0, stopped: "timeout" });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(t.text()).toContain("Timeout: 1 second\n");
    const timedOut = await e.get(r.id);
    expect(timedOut.status).toBe("timed_out");
    expect(logs.lines.filter((l) => l.msg === "Human review timeout")).toEqual([
      expect.objectContaining({ correlation_id: "corr-1", level: 40 }),
    ]);
  });

  it("a timeout while typing the comment records nothing", async () => {
    const { engine: e } = await setup();
    const r = await e.request(plan(1));
    const t = terminal();
    const done = runReview(e, { ...t, reviewer: "op", timeoutMs: 300 });
    await t.waitFor(PROMPT);
    t.type("r");
    expect(await done).toEqual({ reviewed: 0, stopped: "timeout" });
    expect((await e.get(r.id)).status).toBe("pending");
    expect(t.text()).toContain("Timeout exceeded while waiting for comments.");
  });

  it("reads its default timeout from HUMAN_REVIEW_TIMEOUT", async () => {
    vi.stubEnv("HUMAN_REVIEW_TIMEOUT", "1");
    const { engine: e } = await setup();
    await e.request(plan(1));
    const t = terminal();
    const started = Date.now();
    expect(await runReview(e, { ...t, reviewer: "op" })).toMatchObject({ stopped: "timeout" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(t.text()).toContain("Timeout: 1 second\n");
  });

  it("shows only what this reviewer may decide, never their own requests", async () => {
    const { engine: e } = await setup();
    await e.request(plan(1, { requester: "op" }));
    await e.request(plan(2, { approvers: ["finance"] }));
    const ops = await e.request(plan(3, { approvers: ["ops"] }));
    const t = terminal();
    t.input.write("a\n");
    const result = await runReview(e, { ...t, reviewer: "op", groups: ["ops"], timeoutMs: 5000 });
    expect(result).toEqual({ reviewed: 1, stopped: "queue_empty" });
    expect((await e.get(ops.id)).status).toBe("approved");
    expect(t.text()).not.toContain("corr-1");
    expect(t.text()).not.toContain("corr-2");
  });

  it("says so when someone else decided first, and goes on", async () => {
    const { engine: e } = await setup();
    const r1 = await e.request(plan(1));
    const r2 = await e.request(plan(2));
    const t = terminal();
    const done = runReview(e, { ...t, reviewer: "op", timeoutMs: 5000 });
    await t.waitFor(PROMPT);
    await e.decide(r1.id, { outcome: "rejected", reviewer: "someone-else" });
    t.type("a");
    await t.waitFor(PROMPT, 2);
    t.type("a");
    expect(await done).toEqual({ reviewed: 1, stopped: "queue_empty" });
    expect(t.text()).toMatch(/Not recorded: request .* was already decided by someone-else/);
    expect((await e.get(r1.id)).status).toBe("rejected");
    expect((await e.get(r2.id)).status).toBe("approved");
  });

  it("stops when the input closes, leaving the rest pending", async () => {
    const { engine: e } = await setup();
    const r = await e.request(plan(1));
    const t = terminal();
    t.input.end();
    expect(await runReview(e, { ...t, reviewer: "op", timeoutMs: 5000 })).toEqual({
      reviewed: 0,
      stopped: "input_closed",
    });
    expect((await e.get(r.id)).status).toBe("pending");
  });

  it("after asking for a revision, waits for the revised request instead of exiting just before it", async () => {
    const { engine: e } = await setup();
    const first = await e.request(plan(1));
    // The agent re-plans (slowly) once its plan comes back for revision, as robot-plan does.
    const agent = e.waitFor(first.id).then(async (settled) => {
      await new Promise((r) => setTimeout(r, 400));
      return e.request(plan(2, { revisionOf: settled.id, correlationId: "corr-1" }));
    });
    const t = terminal();
    const done = runReview(e, { ...t, reviewer: "op", timeoutMs: 5000, revisionWaitMs: 5000 });
    await t.waitFor(PROMPT, 1);
    t.type("r");
    await t.waitFor("What changes do you want? ");
    t.type("only step 2");
    await t.waitFor(PROMPT, 2);
    expect(t.text()).toContain("Waiting up to 5 seconds for the revised request...");
    t.type("a");
    expect(await done).toEqual({ reviewed: 2, stopped: "queue_empty" });
    const revised = await agent;
    expect((await e.get(revised.id)).status).toBe("approved");
  });

  it("stops waiting for a revision that does not come", async () => {
    const { engine: e } = await setup();
    await e.request(plan(1));
    const t = terminal();
    const done = runReview(e, { ...t, reviewer: "op", timeoutMs: 5000, revisionWaitMs: 200 });
    await t.waitFor(PROMPT, 1);
    t.type("r");
    t.type("");
    expect(await done).toEqual({ reviewed: 1, stopped: "queue_empty" });
    expect(t.text()).toContain("No revised request arrived.");
  });

  it("says when there is nothing to review", async () => {
    const { engine: e } = await setup();
    const t = terminal();
    expect(await runReview(e, { ...t, reviewer: "op", timeoutMs: 5000 })).toEqual({
      reviewed: 0,
      stopped: "queue_empty",
    });
    expect(t.text()).toBe("No pending requests to review.\n");
  });
});
