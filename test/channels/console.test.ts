import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operatorDecision, promptOperator, reviewTimeoutMs } from "../../src/channels/console.js";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { captureLogs, PROMPT, terminal } from "./terminal.js";

let engine: Airlock;
let plan: ApprovalRequest;
beforeAll(async () => {
  engine = await createAirlock({ store: sqliteStore(":memory:"), sweeper: false });
  plan = await engine.request({
    title: "Weld plan",
    items: ["Move to Safe_Pos_1", "Move to Pos_1", "Tack Weld at Pos_1"],
    correlationId: "abc-123",
    metadata: { command: "weld at position 1" },
  });
});
afterAll(async () => {
  await engine.close();
});

describe("promptOperator", () => {
  it("approve: shows the box and the prompt, returns approved", async () => {
    const t = terminal();
    const answer = promptOperator(plan, { ...t, timeoutMs: 5000, ownRequest: true });
    await t.waitFor(PROMPT);
    expect(t.text()).toContain("PLAN REVIEW REQUIRED");
    expect(t.text()).toContain("Correlation ID: abc-123");
    expect(t.text()).toContain("Your command: weld at position 1");
    expect(t.text()).toContain("  [3] Tack Weld at Pos_1");
    expect(t.text()).toContain("Timeout: 5 seconds");
    t.type("a");
    expect(await answer).toMatchObject({ outcome: "approved" });
  });

  it("revise: asks what to change and returns the comment", async () => {
    const t = terminal();
    const answer = promptOperator(plan, { ...t, timeoutMs: 5000 });
    await t.waitFor(PROMPT);
    t.type("r");
    await t.waitFor("What changes do you want? ");
    t.type("  Skip position 2, too risky today ");
    expect(await answer).toMatchObject({
      outcome: "revise",
      comment: "Skip position 2, too risky today",
    });
  });

  it("revise with an empty comment is allowed", async () => {
    const t = terminal();
    const answer = promptOperator(plan, { ...t, timeoutMs: 5000 });
    t.type("r");
    t.type("");
    expect(await answer).toMatchObject({ outcome: "revise", comment: "" });
  });

  it("decline: returns rejected", async () => {
    const t = terminal();
    const answer = promptOperator(plan, { ...t, timeoutMs: 5000 });
    await t.waitFor(PROMPT);
    t.type("d");
    expect(await answer).toMatchObject({ outcome: "rejected" });
  });

  it("invalid input re-prompts, then approve", async () => {
    const t = terminal();
    const answer = promptOperator(plan, { ...t, timeoutMs: 5000 });
    await t.waitFor(PROMPT);
    t.type("x");
    await t.waitFor(PROMPT, 2);
    expect(t.text()).toContain("Invalid choice. Please enter 'a', 'r', or 'd'.");
    t.type("a");
    expect(await answer).toMatchObject({ outcome: "approved" });
  });

  it("invalid input does not restart the clock", async () => {
    const t = terminal();
    const answer = promptOperator(plan, { ...t, timeoutMs: 400 });
    await t.waitFor(PROMPT);
    await new Promise((r) => setTimeout(r, 250));
    t.type("x");
    const result = await answer;
    expect(result).toMatchObject({ outcome: "timed_out", during: "choice" });
    // A restarted clock would have run to at least 250 + 400 ms.
    expect(result.elapsedMs).toBeGreaterThanOrEqual(390);
    expect(result.elapsedMs).toBeLessThan(640);
    expect(t.text()).toContain("Invalid choice.");
  });

  it("timeout at the gate's deadline: no answer in time routes to fallback", async () => {
    const due = await engine.request({ title: "Weld plan", timeoutMs: 300 });
    const t = terminal();
    const timeoutMs = (due.deadline as number) - Date.now();
    const result = await promptOperator(due, { ...t, timeoutMs });
    expect(result).toMatchObject({ outcome: "timed_out", during: "choice" });
    expect(result.elapsedMs).toBeGreaterThanOrEqual(timeoutMs - 10);
    expect(t.text()).toContain("Human review timeout exceeded. Routing to fallback.");
  });

  it("timeout of the console alone: says the request stays pending, not that it is routed", async () => {
    const t = terminal();
    const result = await promptOperator(plan, { ...t, timeoutMs: 120 });
    expect(result).toMatchObject({ outcome: "timed_out", during: "choice" });
    expect(result.elapsedMs).toBeGreaterThanOrEqual(110);
    expect(t.text()).toContain("No answer within 1 seconds; the request stays pending.");
    expect(t.text()).not.toContain("Routing to fallback");
    const later = await engine.request({ title: "Later", timeoutMs: 3_600_000 });
    const t2 = terminal();
    await promptOperator(later, { ...t2, timeoutMs: 50 });
    expect(t2.text()).toContain(
      `the request stays pending until its deadline (${new Date(later.deadline as number).toISOString()})`,
    );
  });

  it('says "Your command:" only for the operator\'s own request', async () => {
    const theirs = terminal();
    const answer = promptOperator(plan, { ...theirs, timeoutMs: 5000 });
    await theirs.waitFor(PROMPT);
    theirs.type("a");
    await answer;
    expect(theirs.text()).not.toContain("Your command");
    expect(theirs.text()).toContain("Command: weld at position 1");
    expect(theirs.text()).toContain(`Requested by: ${plan.requester}`);
  });

  it("shows an agent's control characters and escape sequences as harmless stand-ins", async () => {
    const hostile = await engine.request({
      title: "Deploy\u001b[2J\u001b]0;pwned\u0007 now",
      items: ["safe step\rrm -rf /", "\u009b31mred\u202etxt.exe"],
      metadata: { command: "weld\u001b[1A\u001b[2K at 1" },
    });
    const t = terminal();
    const answer = promptOperator(hostile, { ...t, timeoutMs: 5000 });
    await t.waitFor(PROMPT);
    t.type("d");
    await answer;
    const text = t.text();
    expect([...text].filter((c) => "\u001b\u0007\r\u009b\u202e".includes(c))).toEqual([]);
    expect(text).toContain("Command: weld␛[1A␛[2K at 1");
    // A line break inside a label is folded into the one line the box gives it.
    expect(text).toContain("[1] safe step rm -rf /");
    expect(text).toContain("[2] \\u009b31mred\\u202etxt.exe");
  });

  it("timeout while typing a comment is a timeout", async () => {
    const t = terminal();
    const answer = promptOperator(plan, { ...t, timeoutMs: 300 });
    t.type("r");
    await t.waitFor("What changes do you want? ");
    t.input.write("Skip posi"); // never finished with Enter
    const result = await answer;
    expect(result).toMatchObject({ outcome: "timed_out", during: "comment" });
    expect(result.elapsedMs).toBeLessThan(550);
    expect(t.text()).toContain("Timeout exceeded while waiting for comments.");
  });

  it("closed input is not a decision", async () => {
    const t = terminal();
    const answer = promptOperator(plan, { ...t, timeoutMs: 5000 });
    t.input.end();
    expect(await answer).toMatchObject({ outcome: "closed" });
  });

  it("keeps lines that came in one chunk for the next prompt on the same stream", async () => {
    const t = terminal();
    t.input.write("x\nA\n Decline \n");
    expect(await promptOperator(plan, { ...t, timeoutMs: 5000 })).toMatchObject({
      outcome: "approved",
    });
    // Paused between prompts, so a process reading stdin may exit.
    expect(t.input.isPaused()).toBe(true);
    expect(await promptOperator(plan, { ...t, timeoutMs: 5000 })).toMatchObject({
      outcome: "rejected",
    });
  });

  it("offers only what the request allows", async () => {
    const limited = await engine.request({ title: "x", allowed: ["approve", "reject"] });
    const t = terminal();
    const answer = promptOperator(limited, { ...t, timeoutMs: 5000 });
    await t.waitFor("Your decision [a/d]: ");
    t.type("r");
    await t.waitFor("Invalid choice. Please enter 'a' or 'd'.");
    t.type("d");
    expect(await answer).toMatchObject({ outcome: "rejected" });
  });

  it("logs the presentation with the correlation id and timeout", async () => {
    const { logger, lines } = captureLogs();
    const t = terminal();
    const answer = promptOperator(plan, { ...t, timeoutMs: 240_000, logger });
    t.type("a");
    await answer;
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: "Presenting plan for human review",
      correlation_id: "abc-123",
      request_id: plan.id,
      timeout_seconds: 240,
    });
  });
});

describe("operatorDecision", () => {
  it("maps answers to cli decisions, and timeouts to nothing", () => {
    const who = { reviewer: "op" };
    expect(operatorDecision({ outcome: "approved", elapsedMs: 1 }, who)).toEqual({
      reviewer: "op",
      groups: [],
      channel: "cli",
      outcome: "approved",
    });
    expect(operatorDecision({ outcome: "revise", comment: "c", elapsedMs: 1 }, who)).toMatchObject({
      outcome: "revise",
      comment: "c",
      channel: "cli",
    });
    expect(operatorDecision({ outcome: "rejected", elapsedMs: 1 }, who)).toMatchObject({
      outcome: "rejected",
      method: "reject",
    });
    expect(
      operatorDecision({ outcome: "timed_out", during: "choice", elapsedMs: 1 }, who),
    ).toBeUndefined();
    expect(operatorDecision({ outcome: "closed", elapsedMs: 1 }, who)).toBeUndefined();
  });
});

describe("reviewTimeoutMs (HUMAN_REVIEW_TIMEOUT)", () => {
  it("defaults to 120 seconds", () => {
    expect(reviewTimeoutMs({})).toBe(120_000);
    expect(reviewTimeoutMs({ HUMAN_REVIEW_TIMEOUT: "" })).toBe(120_000);
  });

  it("reads whole seconds", () => {
    expect(reviewTimeoutMs({ HUMAN_REVIEW_TIMEOUT: "240" })).toBe(240_000);
    expect(reviewTimeoutMs({ HUMAN_REVIEW_TIMEOUT: " 5 " })).toBe(5000);
  });

  it.each(["abc", "0", "-5", "1.5"])("refuses %j, naming the variable", (value) => {
    expect(() => reviewTimeoutMs({ HUMAN_REVIEW_TIMEOUT: value })).toThrow(
      `Expected \`HUMAN_REVIEW_TIMEOUT\` to be a whole number of seconds from 1 and up, got \`${value}\` (string)`,
    );
  });
});
