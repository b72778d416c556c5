// The request page as a reviewer uses it (issue 33), in Debian's chromium at a phone's width (390 x
// 844) and a laptop's (1366 x 768): the edit form built from the request's argsSchema (a file's
// content edited as text, the outcome showing the diff of what will be written, the schema's
// refusal beside its field), the agent's report growing live with its tool calls folded, `d`
// asking before it rejects, and Request revision in the button bar, in view without scrolling.
//
// AIRLOCK_SCREENSHOTS=1 writes the screenshots the docs show (docs/inbox-*.png) from this run.
import { existsSync, mkdirSync } from "node:fs";
import { createTwoFilesPatch } from "diff";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers.js";
import { startTestServer, type TestServer } from "../server/helpers.js";

const CHROMIUM = "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && process.env.AIRLOCK_REQUIRE_BROWSER === "1") {
  throw new Error(
    `${CHROMIUM} is missing and AIRLOCK_REQUIRE_BROWSER=1: install Debian's chromium`,
  );
}

const WIDTHS = [
  { name: "phone", width: 390, height: 844 },
  { name: "laptop", width: 1366, height: 768 },
] as const;

const FILE_SCHEMA = {
  type: "object",
  properties: {
    operation: { type: "string", enum: ["write", "delete"] },
    file_path: { type: "string", description: "where the file goes" },
    content: { type: "string" },
  },
  required: ["operation", "file_path", "content"],
  additionalProperties: false,
};

const EXPENSE_SCHEMA = {
  type: "object",
  properties: {
    expenseId: { type: "string" },
    amount: { type: "integer", minimum: 1, maximum: 5000 },
    currency: { type: "string", enum: ["EUR", "USD"] },
    urgent: { type: "boolean" },
  },
  required: ["expenseId", "amount", "currency"],
  additionalProperties: false,
};

const OLD_FILE = "# Notes\n\n- buy milk\n- call Sam\n";
const NEW_FILE = "# Notes\n\n- buy milk\n- call Sam\n- book the train\n- pay rent\n";

describe.skipIf(!haveBrowser)("the request page as a reviewer uses it (chromium)", () => {
  let s: TestServer;
  let browser: Browser;
  let shots: URL;
  let cleanup: () => void;

  beforeAll(async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    shots =
      process.env.AIRLOCK_SCREENSHOTS === "1"
        ? new URL("../../docs/", import.meta.url)
        : new URL(`file://${t.dir}/shots/`);
    mkdirSync(shots, { recursive: true });
    s = await startTestServer({ heartbeatMs: 500, shutdownGraceMs: 200 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await s?.close();
    cleanup?.();
  });

  async function signIn(width: number, height: number): Promise<Page> {
    const ctx = await browser.newContext({ viewport: { width, height } });
    const page = await ctx.newPage();
    await page.goto(`${s.url}/login`);
    await page.fill("#token", s.tokens.alice);
    await page.click("button[type=submit]");
    await page.waitForURL(`${s.url}/`);
    return page;
  }

  const fileWrite = (path: string) =>
    s.airlock.request({
      title: `Modify ${path}`,
      action: "files.write",
      requester: "file-agent",
      summary: "Add two items to the list.",
      args: { operation: "write", file_path: path, content: NEW_FILE },
      argsSchema: FILE_SCHEMA,
      preview: createTwoFilesPatch(`a/${path}`, `b/${path}`, OLD_FILE, NEW_FILE),
      allowed: ["approve", "reject", "edit"],
    });

  for (const size of WIDTHS) {
    it(`${size.name}: a file write is edited as text and the outcome shows the diff of what will be written`, async () => {
      const page = await signIn(size.width, size.height);
      const path = `notes/${size.name}.md`;
      const r = await fileWrite(path);
      await page.goto(`${s.url}/requests/${r.id}`);
      await page.click("details#edit > summary");
      // One field per argument: the content is a text box holding the text itself (real line
      // breaks, no \n escapes), the operation a list, the path a text input.
      const content = page.locator('[data-field="content"] textarea');
      await expect(content.inputValue()).resolves.toBe(NEW_FILE);
      await expect(page.locator('[data-field="operation"] select').count()).resolves.toBe(1);
      await expect(
        page.locator('[data-field="file_path"] input[type=text]').inputValue(),
      ).resolves.toBe(path);
      await expect(page.locator("#edit-args").isVisible()).resolves.toBe(false);
      const edited = NEW_FILE.replace("- pay rent\n", "- pay the rent on the 1st\n");
      await content.fill(edited);
      if (size.name === "laptop") {
        await page.screenshot({ path: new URL("inbox-edit-form.png", shots).pathname });
      }
      await page.click("#btn-edit");
      await page.waitForSelector('#decision-panel[data-status="approved"]');
      const done = await s.airlock.get(r.id);
      // What runs is the text as typed, with the file's own line ends (not the browser's CRLF).
      expect(done.decision).toMatchObject({
        method: "edit",
        editedArgs: { operation: "write", file_path: path, content: edited },
      });
      // The outcome: the diff from the file as it is now to what will be written, not a JSON line.
      const changes = page.locator("#edited-changes");
      await expect(changes.textContent()).resolves.toContain(`what will be written to ${path}`);
      await expect(changes.textContent()).resolves.toContain("diff from the file as it is now");
      const added = await changes.locator("pre.diff span.add").allTextContents();
      const removed = await changes.locator("pre.diff span.del").allTextContents();
      expect(added).toEqual(
        expect.arrayContaining(["+- book the train", "+- pay the rent on the 1st"]),
      );
      expect(added.join("\n")).not.toContain("\\n");
      expect(removed.filter((l) => !l.startsWith("---"))).toEqual([]);
      // The agent's proposal is still there, folded and named for what it is.
      await expect(page.locator("details.superseded > summary").textContent()).resolves.toContain(
        "before the edit",
      );
      if (size.name === "laptop") {
        await page.screenshot({
          path: new URL("inbox-edit-outcome.png", shots).pathname,
          fullPage: true,
        });
      }
      await page.context().close();
    });
  }

  it("the schema's refusal shows beside its field, the fields keep what was typed; an edited amount reads old → new", async () => {
    const page = await signIn(1366, 768);
    const r = await s.airlock.request({
      title: "Approve expense EXP-311",
      action: "expenses.approve",
      requester: "finance-bot",
      args: { expenseId: "EXP-311", amount: 4800, currency: "EUR" },
      argsSchema: EXPENSE_SCHEMA,
      allowed: ["approve", "reject", "edit"],
    });
    await page.goto(`${s.url}/requests/${r.id}`);
    await page.click("details#edit > summary");
    await expect(
      page.locator('[data-field="amount"] input[type=number]').inputValue(),
    ).resolves.toBe("4800");
    await expect(
      page.locator('[data-field="urgent"] input[type=checkbox]').isChecked(),
    ).resolves.toBe(false);
    // Over the schema's maximum: a large amount confirms first (core/danger.ts), then the engine
    // refuses (422) and the page says so beside the amount.
    await page.fill('[data-field="amount"] input', "6000");
    await page.click("#btn-edit");
    await page.waitForSelector("[aria-label=confirm]");
    await expect(page.locator("[aria-label=confirm]").textContent()).resolves.toContain(
      "amount 6000 is over 1000",
    );
    const response = page.waitForResponse((res) => res.url().endsWith("/decide"));
    await page.click("#btn-confirm");
    expect((await response).status()).toBe(422);
    await expect(page.locator("details#edit").getAttribute("open")).resolves.toBe("");
    const error = page.locator('[data-field="amount"] .field-error');
    await expect(error.textContent()).resolves.toMatch(/amount/);
    await expect(error.textContent()).resolves.not.toContain("`");
    await expect(
      page.locator('[data-field="amount"] input').getAttribute("aria-invalid"),
    ).resolves.toBe("true");
    await expect(page.locator('[data-field="amount"] input').inputValue()).resolves.toBe("6000");
    expect((await s.airlock.get(r.id)).status).toBe("pending");

    // Enter in a field does not send the approval.
    await page.fill('[data-field="amount"] input', "4000");
    await page.press('[data-field="amount"] input', "Enter");
    await page.waitForTimeout(300);
    expect((await s.airlock.get(r.id)).status).toBe("pending");
    await page.selectOption('[data-field="currency"] select', { label: "USD" });
    await page.check('[data-field="urgent"] input');
    await page.click("#btn-edit");
    await page.waitForSelector("[aria-label=confirm]");
    await page.click("#btn-confirm");
    await page.waitForSelector('#decision-panel[data-status="approved"]');
    expect((await s.airlock.get(r.id)).decision?.editedArgs).toEqual({
      expenseId: "EXP-311",
      amount: 4000,
      currency: "USD",
      urgent: true,
    });
    const amount = page.locator('#edited-changes li[data-field="amount"]');
    await expect(amount.textContent()).resolves.toBe("amount: 4800 → 4000");
    await expect(
      page.locator('#edited-changes li[data-field="currency"]').textContent(),
    ).resolves.toBe("currency: “EUR” → “USD”");
    await page.context().close();
  });

  for (const size of WIDTHS) {
    it(`${size.name}: the agent's report grows live, the latest tool calls open and older ones folded`, async () => {
      const page = await signIn(size.width, size.height);
      const r = await s.airlock.request({
        title: "Research plan: SQLite vs PostgreSQL",
        action: "research.plan",
        requester: "research-agent",
        summary: "Plan: three searches, then a report in three sections.",
      });
      await s.airlock.decide(r.id, { outcome: "approved", reviewer: "bob" });
      await page.goto(`${s.url}/requests/${r.id}`);
      await expect(page.locator("#live-report").isHidden()).resolves.toBe(true);
      const progress = (data: Record<string, unknown>) =>
        s.airlock.record({
          type: "notified",
          requestId: r.id,
          actor: "research-agent",
          data: { channel: "research-events", ...data },
        });
      for (const q of [
        "sqlite wal",
        "postgres mvcc",
        "sqlite limits",
        "pg listen notify",
        "bench",
      ]) {
        await progress({ event: "tool_call", tool: "web_search", args: { query: q } });
        await progress({ event: "tool_result", tool: "web_search" });
      }
      await progress({
        event: "report_updated",
        section: "SQLite",
        report_markdown: "# Research report\n\n## SQLite\n\nSQLite keeps a **write-ahead log**.\n",
      });
      const report = page.locator("#live-report");
      await expect
        .poll(() => report.locator(".markdown").textContent(), { timeout: 10_000 })
        .toContain("SQLite keeps a write-ahead log.");
      await expect(report.locator(".markdown strong").textContent()).resolves.toBe(
        "write-ahead log",
      );
      // The latest three tool calls open, the two before them folded.
      await expect(report.locator("#latest-calls li").allTextContents()).resolves.toEqual([
        'web_search {"query":"bench"}',
        'web_search {"query":"pg listen notify"}',
        'web_search {"query":"sqlite limits"}',
      ]);
      await expect(report.locator("#older-calls").getAttribute("open")).resolves.toBeNull();
      await expect(report.locator("#older-calls > summary").textContent()).resolves.toBe(
        "2 earlier tool calls",
      );
      // The reviewer opens the fold; it stays open as the report grows.
      await page.click("#older-calls > summary");
      await progress({
        event: "report_updated",
        section: "PostgreSQL",
        report_markdown:
          "# Research report\n\n## SQLite\n\nSQLite keeps a **write-ahead log**.\n\n## PostgreSQL\n\nPostgreSQL uses MVCC. <script>window.pwned=1</script>\n",
      });
      await expect
        .poll(() => report.locator(".markdown").textContent(), { timeout: 10_000 })
        .toContain("PostgreSQL uses MVCC.");
      await expect(report.locator("#older-calls").getAttribute("open")).resolves.toBe("");
      // Markdown from an agent runs no script.
      await expect(page.evaluate(() => "pwned" in window)).resolves.toBe(false);
      await progress({
        event: "stop",
        status: "completed",
        message: "report of 2 sections",
        report_markdown: "# Research report\n\n## SQLite\n\nDone.\n\n## PostgreSQL\n\nDone too.\n",
      });
      await expect
        .poll(() => report.getAttribute("data-state"), { timeout: 10_000 })
        .toBe("completed");
      // The audit trail keeps the raw events, folded into one line.
      const run = page.locator("#trail li.progress-run");
      await expect(run.count()).resolves.toBe(1);
      await expect(run.locator("summary").textContent()).resolves.toMatch(
        /13 progress events from research-agent/,
      );
      await expect(run.locator("details").getAttribute("open")).resolves.toBeNull();
      const box = await page.locator("#trail").boundingBox();
      expect(box?.height ?? 0).toBeLessThan(400);
      if (size.name === "laptop") {
        await page.screenshot({
          path: new URL("inbox-report.png", shots).pathname,
          fullPage: true,
        });
      }
      await page.context().close();
    });
  }

  const longPlan = () =>
    s.airlock.request({
      title: "Robot plan: pick and place",
      action: "robot.execute_plan",
      requester: "planner",
      summary: `The plan, step by step.\n\n${Array.from({ length: 14 }, (_, i) => `${i + 1}. Step ${i + 1}: move the arm to station ${i + 1} and check the gripper.`).join("\n")}`,
      items: Array.from({ length: 12 }, (_, i) => `step ${i + 1}`),
      allowed: ["approve", "reject", "revise", "select"],
    });

  for (const size of WIDTHS) {
    it(`${size.name}: Request revision is in the button bar, in view without scrolling`, async () => {
      const page = await signIn(size.width, size.height);
      const r = await longPlan();
      await page.goto(`${s.url}/requests/${r.id}`);
      const button = page.locator(".decide-bar #btn-revise");
      await expect(button.count()).resolves.toBe(1);
      const box = await button.boundingBox();
      expect(box).not.toBeNull();
      expect((box?.y ?? 0) + (box?.height ?? 0)).toBeLessThanOrEqual(size.height);
      expect(box?.y ?? -1).toBeGreaterThanOrEqual(0);
      expect(box?.height ?? 0).toBeGreaterThanOrEqual(32);
      if (size.name === "phone") {
        await page.screenshot({ path: new URL("inbox-request-phone.png", shots).pathname });
      }
      // `r` puts the cursor in the comment box; Enter sends the revision with it.
      await page.locator("body").click({ position: { x: 2, y: 2 } });
      await page.keyboard.press("r");
      await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe("comment");
      await page.keyboard.type("skip steps 3 and 4");
      await page.keyboard.press("Enter");
      await page.waitForSelector('#decision-panel[data-status="revise"]');
      expect((await s.airlock.get(r.id)).decision).toMatchObject({
        outcome: "revise",
        comment: "skip steps 3 and 4",
        channel: "web",
      });
      await page.context().close();
    });
  }

  it("`d` asks before rejecting: Escape goes back, and nothing is decided until confirmed", async () => {
    const page = await signIn(390, 844);
    const r = await longPlan();
    await page.goto(`${s.url}/requests/${r.id}`);
    await page.locator("body").click({ position: { x: 2, y: 2 } });
    await page.keyboard.press("d");
    const ask = page.locator("#reject-confirm");
    await expect(ask.isVisible()).resolves.toBe(true);
    await expect(ask.textContent()).resolves.toContain("Reject “Robot plan: pick and place”?");
    await expect(page.locator("#btn-approve").isVisible()).resolves.toBe(false);
    expect((await s.airlock.get(r.id)).status).toBe("pending");
    await page.keyboard.press("Escape");
    await expect(ask.isVisible()).resolves.toBe(false);
    await expect(page.locator("#btn-approve").isVisible()).resolves.toBe(true);
    expect((await s.airlock.get(r.id)).status).toBe("pending");

    await page.fill("#comment", "not this week");
    await page.locator("body").click({ position: { x: 2, y: 2 } });
    await page.keyboard.press("d");
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe(
      "btn-reject-confirm",
    );
    await page.keyboard.press("Enter");
    await page.waitForSelector('#decision-panel[data-status="rejected"]');
    expect((await s.airlock.get(r.id)).decision).toMatchObject({
      outcome: "rejected",
      comment: "not this week",
    });
    await page.context().close();
  });

  it("a reviewer answers the agent's questions: as text, or in the fields of its responseSchema", async () => {
    const page = await signIn(390, 844);
    const plain = await s.airlock.request({
      title: "Research plan: which databases?",
      action: "research.plan",
      requester: "research-agent",
      summary: "Before I search: which databases matter to you, and how recent?",
      allowed: ["approve", "reject", "respond"],
    });
    await page.goto(`${s.url}/requests/${plain.id}`);
    // The bar points to the answer form.
    await page.click("#btn-respond-open");
    await page.fill("#response", "SQLite and PostgreSQL only.\nSince 2023.");
    await page.click("#btn-respond");
    await page.waitForSelector('#decision-panel[data-status="responded"]');
    expect((await s.airlock.get(plain.id)).decision).toMatchObject({
      outcome: "responded",
      response: "SQLite and PostgreSQL only.\nSince 2023.",
      channel: "web",
    });
    await expect(page.locator("#response").textContent()).resolves.toContain("Since 2023.");

    const typed = await s.airlock.request({
      title: "Research plan: scope",
      action: "research.plan",
      requester: "research-agent",
      allowed: ["approve", "reject", "respond"],
      responseSchema: {
        type: "object",
        properties: {
          databases: { type: "string" },
          sinceYear: { type: "integer", minimum: 2000 },
        },
        required: ["databases", "sinceYear"],
        additionalProperties: false,
      },
    });
    await page.goto(`${s.url}/requests/${typed.id}`);
    await page.fill('#respond-form [data-field="databases"] input', "SQLite");
    await page.fill('#respond-form [data-field="sinceYear"] input', "1999");
    const refused = page.waitForResponse((res) => res.url().endsWith("/decide"));
    await page.click("#btn-respond");
    expect((await refused).status()).toBe(422);
    await expect(
      page.locator('#respond-form [data-field="sinceYear"] .field-error').textContent(),
    ).resolves.toMatch(/sinceYear/);
    expect((await s.airlock.get(typed.id)).status).toBe("pending");
    await page.fill('#respond-form [data-field="sinceYear"] input', "2023");
    await page.click("#btn-respond");
    await page.waitForSelector('#decision-panel[data-status="responded"]');
    expect((await s.airlock.get(typed.id)).decision?.response).toEqual({
      databases: "SQLite",
      sinceYear: 2023,
    });
    await page.context().close();
  });
});
