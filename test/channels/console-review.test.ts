// The reviewer's console (`airlock review`): the renderer of a review view (console-view.ts) and the
// keys of promptReviewer, on a real engine and SQLite, through the scripted terminal.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { operatorDecision, promptReviewer } from "../../src/channels/console.js";
import {
  type ConsoleShown,
  colourFor,
  consoleShownOf,
  consoleViewLines,
  parseSelection,
} from "../../src/channels/console-view.js";
import { runReview } from "../../src/channels/review.js";
import { reviewViewOf, viewDigestOf } from "../../src/core/review-view.js";
import type { ApprovalRequest, RequestInput } from "../../src/core/schemas.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { REVIEW_PROMPT, terminal } from "./terminal.js";

let engine: Airlock;
beforeEach(async () => {
  engine = await createAirlock({ store: sqliteStore(":memory:"), sweeper: false });
});
afterEach(async () => {
  await engine.close();
});

const ESC = "\u001b";
const shownOf = (r: ApprovalRequest, extra: Partial<ConsoleShown> = {}): ConsoleShown => ({
  ...consoleShownOf(r, { viewDigest: viewDigestOf(r) }),
  ...extra,
});
const render = (r: ApprovalRequest, colour = false, extra: Partial<ConsoleShown> = {}) =>
  consoleViewLines(shownOf(r, extra), { colour, timeoutMs: 5000 }).join("\n");

const invoice: RequestInput = {
  title: "Pay the $5 coffee invoice",
  action: "invoice.pay",
  summary: "A small coffee invoice, routine.",
  args: { amount: 50_000, to: "IBAN-ATTACKER-777" },
  requester: "bot",
};

const dropTable: RequestInput = {
  title: "Drop table legacy_sessions",
  action: "db.drop_table",
  risk: "critical",
  args: { sql: "DROP TABLE legacy_sessions" },
  requester: "dba-bot",
};

describe("the console's view (consoleViewLines)", () => {
  it("heads a request by its kind and action, not as a plan review, with no empty details", async () => {
    const plain = render(await engine.request({ title: "Rotate keys", action: "keys.rotate" }));
    expect(plain).toContain("APPROVAL REQUESTED · keys.rotate\nRotate keys\n");
    expect(plain).not.toContain("PLAN REVIEW REQUIRED");
    expect(plain).not.toContain("Details:");
    expect(plain).not.toContain("{}");
    expect(plain).toContain("Exact arguments (what runs if approved): none");
    expect(plain).toContain("Risk: not stated by the agent");

    const plan = render(
      await engine.request({
        title: "Weld plan",
        action: "robot.plan",
        items: ["Move to Safe_Pos_1", "Tack Weld at Pos_1"],
        labels: { itemNoun: "steps", items: "Generated plan" },
      }),
    );
    expect(plan).toContain("REVIEW OF 2 STEPS · robot.plan\nWeld plan\n");
    expect(plan).toContain(
      "Generated plan (2):\n  [1] Move to Safe_Pos_1\n  [2] Tack Weld at Pos_1",
    );
    expect(plan).toContain("[a] Approve (all 2 steps)");
    expect(plan).toContain("[s] Approve only some steps (you give their numbers)");

    const command = render(await engine.request({ title: "Run it", command: "make deploy" }));
    expect(command).toContain("COMMAND REVIEW · generic");
    expect(command).toContain("Command:\n  make deploy");
  });

  it("shows the agent's words labelled as its own beside the exact args", async () => {
    const text = render(await engine.request(invoice));
    expect(text).toContain(
      "The agent says (its own words, not checked by Airlock):\n  A small coffee invoice, routine.",
    );
    expect(text).toContain(
      'Exact arguments (what runs if approved):\n  {\n    "amount": 50000,\n    "to": "IBAN-ATTACKER-777"\n  }',
    );
    // What the amount would do is pointed out, as the inbox does.
    expect(text).toContain("Approving asks to confirm first:");
    expect(text).toContain("amount 50000 is over 1000");
  });

  it("shows the risk, coloured on a terminal and plain otherwise", async () => {
    const r = await engine.request(dropTable);
    const plain = render(r);
    expect(plain).toContain("Risk: CRITICAL (the agent's own label)");
    expect(plain).not.toContain(ESC);
    const coloured = render(r, true);
    expect(coloured).toContain(`${ESC}[1;37;41m CRITICAL ${ESC}[0m`);
    const high = render(await engine.request({ ...dropTable, risk: "high" }), true);
    expect(high).toContain(`Risk: ${ESC}[1m${ESC}[31mHIGH${ESC}[39m${ESC}[22m`);
    const low = render(await engine.request({ title: "x", risk: "low" }), true);
    expect(low).toContain(`Risk: ${ESC}[32mLOW${ESC}[39m`);
  });

  it("colours a diff preview: + green, - red", async () => {
    const r = await engine.request({
      title: "Edit config",
      preview:
        "--- a/app.yml\n+++ b/app.yml\n@@ -1,2 +1,2 @@\n name: app\n-replicas: 2\n+replicas: 5",
    });
    const coloured = render(r, true);
    expect(coloured).toContain(`${ESC}[32m+replicas: 5${ESC}[39m`);
    expect(coloured).toContain(`${ESC}[31m-replicas: 2${ESC}[39m`);
    expect(coloured).toContain(`${ESC}[36m@@ -1,2 +1,2 @@${ESC}[39m`);
    const plain = render(r);
    expect(plain).toContain("  -replicas: 2\n  +replicas: 5");
    expect(plain).not.toContain(ESC);
    // Inside a hunk, a removed line that reads like a file header is a removal.
    const tricky = render(
      await engine.request({
        title: "Edit docs",
        preview:
          "--- a/notes.md\n+++ b/notes.md\n@@ -1,2 +1,2 @@\n---- old rule\n+++ new heading\n keep",
      }),
      true,
    );
    expect(tricky).toContain(`${ESC}[1m--- a/notes.md${ESC}[22m`);
    expect(tricky).toContain(`${ESC}[31m---- old rule${ESC}[39m`);
    expect(tricky).toContain(`${ESC}[32m+++ new heading${ESC}[39m`);
    // A preview that is not a diff is shown as it is, uncoloured.
    const prose = render(await engine.request({ title: "x", preview: "+1 for this\n-- me" }), true);
    expect(prose).toContain("  +1 for this\n  -- me");
    expect(prose).not.toContain(`${ESC}[32m+1`);
  });

  it("marks a revision and shows what changed since the previous version, and the comment", async () => {
    const first = await engine.request({
      ...dropTable,
      items: ["Back up", "Drop"],
      summary: "Unused since 2023.",
    });
    await engine.decide(first.id, {
      outcome: "revise",
      reviewer: "op",
      comment: "back up to cold storage first",
    });
    const second = await engine.request({
      ...dropTable,
      risk: "high",
      args: { sql: "DROP TABLE legacy_sessions", backup: "s3://cold/legacy" },
      items: ["Back up to s3://cold/legacy", "Drop"],
      summary: "Unused since 2023.",
      revisionOf: first.id,
    });
    const t = terminal();
    const done = runReview(engine, { ...t, reviewer: "op2", timeoutMs: 5000, colour: true });
    await t.waitFor(REVIEW_PROMPT);
    t.type("d");
    await done;
    const text = t.text();
    expect(text).toContain(`REVISION of ${first.id}; asked for: “back up to cold storage first”`);
    expect(text).toContain("What changed since the previous version: risk, arguments, items.");
    expect(text).toContain(`${ESC}[31m-Risk: critical${ESC}[39m`);
    expect(text).toContain(`${ESC}[32m+Risk: high${ESC}[39m`);
    expect(text).toContain(`${ESC}[32m+  "backup": "s3://cold/legacy",${ESC}[39m`);
    expect(text).toContain(`${ESC}[31m-1. Back up${ESC}[39m`);
    expect(text).toContain(`${ESC}[32m+1. Back up to s3://cold/legacy${ESC}[39m`);
    expect((await engine.get(second.id)).status).toBe("rejected");
  });

  it("says when the previous version cannot be shown", async () => {
    const r = await engine.request({ title: "x" });
    const text = render(r, false, {
      revision: { of: "req_gone", unavailable: "the previous version is no longer stored" },
    });
    expect(text).toContain("REVISION of req_gone");
    expect(text).toContain(
      "What changed cannot be shown: the previous version is no longer stored.",
    );
    // Unchanged: says so.
    const same = render(r, false, { revision: { of: "req_prev", previous: reviewViewOf(r) } });
    expect(same).toContain("What changed since the previous version: nothing it shows.");
  });

  it("shows an agent's escape sequences as stand-ins, whether coloured or not", async () => {
    const r = await engine.request({
      title: "Deploy\u001b[2J now",
      summary: "ok\u001b]0;pwned\u0007",
      args: { cmd: "echo\u001b[31m red" },
      preview: "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+\u001b[2Jy",
      items: ["step\rrm -rf /"],
    });
    for (const colour of [false, true]) {
      const text = render(r, colour);
      // Every ESC left is one of the console's own colour codes.
      const foreign = text.replace(new RegExp(`${ESC}\\[[0-9;]*m`, "g"), "");
      expect([...foreign].filter((c) => "\u001b\u0007\r".includes(c))).toEqual([]);
      expect(text).toContain("Deploy␛[2J now");
    }
  });

  it("colours a terminal unless NO_COLOR, never a pipe unless FORCE_COLOR", () => {
    const tty = { isTTY: true } as unknown as NodeJS.WritableStream;
    const pipe = {} as NodeJS.WritableStream;
    expect(colourFor(tty, {})).toBe(true);
    expect(colourFor(tty, { NO_COLOR: "1" })).toBe(false);
    expect(colourFor(tty, { TERM: "dumb" })).toBe(false);
    expect(colourFor(pipe, {})).toBe(false);
    expect(colourFor(pipe, { FORCE_COLOR: "1" })).toBe(true);
    expect(colourFor(pipe, { FORCE_COLOR: "0" })).toBe(false);
  });
});

describe("parseSelection", () => {
  const items = [{ id: "i1" }, { id: "i2" }, { id: "i3" }, { id: "i4" }];
  it("reads positions and ranges, in order, once each", () => {
    expect(parseSelection("3,1", items)).toEqual({ ids: ["i1", "i3"] });
    expect(parseSelection("2-4 1", items)).toEqual({ ids: ["i1", "i2", "i3", "i4"] });
    expect(parseSelection(" 2, 2 ", items)).toEqual({ ids: ["i2"] });
  });
  it.each(["0", "5", "3-2", "x", "1;2", "-1", "2-9"])("refuses %j in words", (answer) => {
    const got = parseSelection(answer, items);
    expect(got).toHaveProperty("error");
    expect((got as { error: string }).error).toMatch(/not a position from 1 to 4|numbers/);
  });
});

describe("promptReviewer (the keys)", () => {
  it("[a] on a low-risk request approves at once", async () => {
    const r = await engine.request({ title: "Rotate keys", action: "keys.rotate", risk: "low" });
    const t = terminal();
    const answer = promptReviewer(shownOf(r), { ...t, timeoutMs: 5000, colour: false });
    await t.waitFor("Your decision [a/r/d]: ");
    t.type("a");
    expect(await answer).toMatchObject({ outcome: "approved" });
    expect(t.text()).not.toContain("confirm");
  });

  it("a critical approval asks to type yes, as the inbox confirms; anything else goes back", async () => {
    const r = await engine.request(dropTable);
    const t = terminal();
    const answer = promptReviewer(shownOf(r), { ...t, timeoutMs: 5000, colour: false });
    await t.waitFor("Your decision [a/r/d]: ");
    t.type("a");
    await t.waitFor("Type yes to approve “Drop table legacy_sessions” (anything else goes back): ");
    expect(t.text()).toContain(
      "This asks to confirm first: critical risk (the agent's own label); action db.drop_table is hard to undo",
    );
    t.type("a");
    await t.waitFor("Not approved.\n");
    await t.waitFor("Your decision [a/r/d]: ", 2);
    t.type("a");
    await t.waitFor("Type yes to approve", 2);
    t.type("YES");
    expect(await answer).toMatchObject({ outcome: "approved" });
  });

  it("[s] asks which items, re-asks on a bad answer, and approves those", async () => {
    const r = await engine.request({
      title: "Queries",
      items: ["q one", "q two", "q three"],
      labels: { itemNoun: "queries" },
    });
    const t = terminal();
    const answer = promptReviewer(shownOf(r), { ...t, timeoutMs: 5000, colour: false });
    await t.waitFor(REVIEW_PROMPT);
    t.type("s");
    const which =
      "Which queries do you approve? Numbers from 1 to 3, like 1,3 or 2-4 (empty goes back): ";
    await t.waitFor(which);
    t.type("7");
    await t.waitFor("`7` is not a position from 1 to 3");
    await t.waitFor(which, 2);
    t.type("3,1");
    const got = await answer;
    expect(got).toMatchObject({ outcome: "approved", selected: ["item-1", "item-3"] });
    expect(operatorDecision(got, { reviewer: "op" })).toMatchObject({
      outcome: "approved",
      selected: ["item-1", "item-3"],
    });
  });

  it("[s] on a risky request confirms the chosen items; an empty answer goes back", async () => {
    const r = await engine.request({ ...dropTable, items: ["Back up", "Drop"] });
    const t = terminal();
    const answer = promptReviewer(shownOf(r), { ...t, timeoutMs: 5000, colour: false });
    await t.waitFor(REVIEW_PROMPT);
    t.type("s");
    await t.waitFor("(empty goes back): ");
    t.type("");
    await t.waitFor(REVIEW_PROMPT, 2);
    t.type("s");
    await t.waitFor("(empty goes back): ", 2);
    t.type("1");
    await t.waitFor("Type yes to approve the 1 chosen items (1) (anything else goes back): ");
    t.type("y");
    expect(await answer).toMatchObject({ outcome: "approved", selected: ["item-1"] });
  });

  it("offers only what the request allows; no [s] without items or without select", async () => {
    const r = await engine.request({
      title: "x",
      items: ["a", "b"],
      allowed: ["approve", "reject"],
    });
    const t = terminal();
    const answer = promptReviewer(shownOf(r), { ...t, timeoutMs: 5000, colour: false });
    await t.waitFor("Your decision [a/d]: ");
    t.type("s");
    await t.waitFor("Invalid choice. Please enter 'a' or 'd'.");
    t.type("d");
    expect(await answer).toMatchObject({ outcome: "rejected" });
  });

  it("[r] asks again for a comment the request requires", async () => {
    const r = await engine.request({ title: "Plan", revisionCommentRequired: true });
    const t = terminal();
    const answer = promptReviewer(shownOf(r), { ...t, timeoutMs: 5000, colour: false });
    await t.waitFor("Your decision [a/r/d]: ");
    t.type("r");
    await t.waitFor("What changes do you want? ");
    t.type("  ");
    await t.waitFor("Say what should change: this request needs a comment.\n");
    await t.waitFor("What changes do you want? ", 2);
    t.type("smaller steps");
    expect(await answer).toMatchObject({ outcome: "revise", comment: "smaller steps" });
  });

  it("a timeout while confirming is a timeout, and nothing is approved", async () => {
    const r = await engine.request(dropTable);
    const t = terminal();
    const answer = promptReviewer(shownOf(r), { ...t, timeoutMs: 300, colour: false });
    await t.waitFor("Your decision [a/r/d]: ");
    t.type("a");
    expect(await answer).toMatchObject({ outcome: "timed_out", during: "choice" });
    expect(t.text()).toContain("No answer within 1 seconds; the request stays pending.");
  });
});

describe("runReview with the console's view", () => {
  it("skips a request that allows only what the console does not take, saying so", async () => {
    const question = await engine.request({
      title: "Which region?",
      allowed: ["respond"],
      requester: "bot",
    });
    const t = terminal();
    const result = await runReview(engine, { ...t, reviewer: "op", timeoutMs: 5000 });
    expect(result).toEqual({ reviewed: 0, stopped: "queue_empty" });
    expect(t.text()).toContain(
      `Skipped ${question.id}: it asks for a decision the console does not take (respond); decide it in the inbox.`,
    );
    expect((await engine.get(question.id)).status).toBe("pending");
  });

  it("records a chosen selection and a confirmed critical approval, bound to the view shown", async () => {
    const queries = await engine.request({
      title: "Queries",
      items: ["q one", "q two", "q three"],
      requester: "bot",
    });
    const drop = await engine.request(dropTable);
    const t = terminal();
    const done = runReview(engine, { ...t, reviewer: "op", timeoutMs: 5000, colour: false });
    await t.waitFor(REVIEW_PROMPT);
    t.type("s");
    await t.waitFor("(empty goes back): ");
    t.type("2-3");
    await t.waitFor("Your decision [a/r/d]: ");
    t.type("a");
    await t.waitFor("Type yes to approve");
    t.type("yes");
    expect(await done).toEqual({ reviewed: 2, stopped: "queue_empty" });
    const q = await engine.get(queries.id);
    expect(q.status).toBe("approved");
    expect(q.decision).toMatchObject({
      reviewer: "op",
      channel: "cli",
      selected: ["item-2", "item-3"],
      viewDigest: viewDigestOf(queries),
    });
    const d = await engine.get(drop.id);
    expect(d.status).toBe("approved");
    expect(d.decision?.viewDigest).toBe(viewDigestOf(drop));
  });
});
