// The approval card as a reviewer uses it (issue 33), in Debian's chromium on a page of another
// 127.0.0.1 origin (the "chat app"), at 390 and 1366 px: the edit form built from the request's
// argsSchema (a file's content edited as text; the outcome shows the diff of what will be written;
// a wrong type refused by the engine), an answer sent instead of a decision, and the agent's report
// growing live after the approval, as a document (no markup from it runs).
//
// AIRLOCK_SCREENSHOTS=1 writes the card's screenshot the docs show (docs/card-edit.png).
import { existsSync, mkdirSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createTwoFilesPatch } from "diff";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../server/helpers.js";

const CHROMIUM = "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && process.env.AIRLOCK_REQUIRE_BROWSER === "1") {
  throw new Error(
    `${CHROMIUM} is missing and AIRLOCK_REQUIRE_BROWSER=1: install Debian's chromium`,
  );
}

const escapeAttr = (v: string) =>
  v.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

const OLD_FILE = "# Notes\n\n- buy milk\n";
const NEW_FILE = "# Notes\n\n- buy milk\n- call Sam\n";

describe.skipIf(!haveBrowser)("the approval card as a reviewer uses it (chromium)", () => {
  let s: TestServer;
  let chat: Server;
  let chatOrigin: string;
  let browser: Browser;

  beforeAll(async () => {
    chat = createHttpServer((req, res) => {
      const url = new URL(req.url ?? "/", chatOrigin);
      const q = (k: string) => escapeAttr(url.searchParams.get(k) ?? "");
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(
        `<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1"></head><body><p>Chat</p><script src="${escapeAttr(s.url)}/embed/airlock-approval.js"></script>
<airlock-approval request-id="${q("id")}" token="${q("token")}"></airlock-approval></body></html>`,
      );
    });
    await new Promise<void>((resolve) => chat.listen(0, "127.0.0.1", resolve));
    chatOrigin = `http://127.0.0.1:${(chat.address() as AddressInfo).port}`;
    s = await startTestServer({ embedOrigins: [chatOrigin], shutdownGraceMs: 200 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await s?.close();
    if (chat) {
      chat.closeAllConnections();
      await new Promise<void>((resolve) => chat.close(() => resolve()));
    }
  });

  async function mint(id: string, reviewer = "alice"): Promise<string> {
    const r = await s.call(s.tokens.app, "POST", `/v1/requests/${id}/embed-token`, { reviewer });
    expect(r.status).toBe(201);
    return r.body.token;
  }

  async function openCard(id: string, width: number, status = "pending"): Promise<Page> {
    const page = await browser.newPage({ viewport: { width, height: 844 } });
    await page.goto(`${chatOrigin}/card?id=${encodeURIComponent(id)}&token=${await mint(id)}`);
    await page.waitForSelector(`airlock-approval[status=${status}]`);
    return page;
  }

  for (const width of [390, 1366]) {
    it(`${width} px: a file write is edited as text, and the outcome shows the diff of what will be written`, async () => {
      const path = `notes/card-${width}.md`;
      const r = await s.airlock.request({
        title: `Modify ${path}`,
        action: "files.write",
        requester: "file-agent",
        args: { operation: "write", file_path: path, content: NEW_FILE },
        argsSchema: {
          type: "object",
          properties: {
            operation: { type: "string", enum: ["write", "delete"] },
            file_path: { type: "string" },
            content: { type: "string" },
          },
          required: ["operation", "file_path", "content"],
          additionalProperties: false,
        },
        preview: createTwoFilesPatch(`a/${path}`, `b/${path}`, OLD_FILE, NEW_FILE),
        allowed: ["approve", "reject", "edit"],
      });
      const page = await openCard(r.id, width);
      const card = page.locator("airlock-approval");
      await card.locator("button[data-action=edit]").click();
      const content = card.locator('textarea[data-field="content"]');
      await expect(content.inputValue()).resolves.toBe(NEW_FILE);
      const edited = `${NEW_FILE}- water the plants\n`;
      await content.fill(edited);
      if (width === 390 && process.env.AIRLOCK_SCREENSHOTS === "1") {
        const docs = new URL("../../docs/", import.meta.url);
        mkdirSync(docs, { recursive: true });
        await page.screenshot({ path: new URL("card-edit.png", docs).pathname, fullPage: true });
      }
      await card.locator(".edit-form button[data-action=approve-edit]").click();
      await page.waitForSelector("airlock-approval[status=approved]");
      expect((await s.airlock.get(r.id)).decision).toMatchObject({
        method: "edit",
        channel: "chat",
        editedArgs: { operation: "write", file_path: path, content: edited },
      });
      await expect(card.locator(".changes").textContent()).resolves.toContain(
        `what will be written to ${path}`,
      );
      await expect(card.locator(".changes pre.diff span.add").allTextContents()).resolves.toEqual(
        expect.arrayContaining(["+- call Sam", "+- water the plants"]),
      );
      // Buttons a thumb can hit.
      await page.close();
    });
  }

  it("a wrongly typed edit is refused by the engine (the request's schema), and nothing is decided", async () => {
    const r = await s.airlock.request({
      title: "Approve expense EXP-9",
      action: "expenses.approve",
      requester: "finance-bot",
      args: { expenseId: "EXP-9", amount: 480 },
      argsSchema: {
        type: "object",
        properties: { expenseId: { type: "string" }, amount: { type: "integer", minimum: 1 } },
        required: ["expenseId", "amount"],
        additionalProperties: false,
      },
      allowed: ["approve", "reject", "edit"],
    });
    const page = await openCard(r.id, 390);
    const card = page.locator("airlock-approval");
    await expect(
      card
        .locator("button[data-action=approve]")
        .first()
        .evaluate((b) => b.getBoundingClientRect().height),
    ).resolves.toBeGreaterThanOrEqual(44);
    await card.locator("button[data-action=edit]").click();
    await card.locator('input[data-field="amount"]').fill("12.5");
    await card.locator(".edit-form button[data-action=approve-edit]").click();
    await expect
      .poll(() => card.locator(".error").textContent(), { timeout: 10_000 })
      .toMatch(/amount: expected an int/);
    expect((await s.airlock.get(r.id)).status).toBe("pending");
    await card.locator('input[data-field="amount"]').fill("400");
    await card.locator(".edit-form button[data-action=approve-edit]").click();
    await page.waitForSelector("airlock-approval[status=approved]");
    await expect(card.locator('.changes li[data-field="amount"]').textContent()).resolves.toBe(
      "amount: 480 → 400",
    );
    // The agent's arguments are no longer called what runs.
    await expect(card.locator(".label").allTextContents()).resolves.toContain(
      "The arguments the agent asked for (the approval edited them: see below):",
    );
    await page.close();
  });

  it("sends an answer instead of a decision", async () => {
    const r = await s.airlock.request({
      title: "Research plan: which databases?",
      requester: "research-agent",
      summary: "Which databases matter to you?",
      allowed: ["approve", "reject", "respond"],
    });
    const page = await openCard(r.id, 390);
    const card = page.locator("airlock-approval");
    await card.locator("textarea.response").fill("SQLite and PostgreSQL.");
    await card.locator("button[data-action=respond]").click();
    await page.waitForSelector("airlock-approval[status=responded]");
    expect((await s.airlock.get(r.id)).decision).toMatchObject({
      outcome: "responded",
      response: "SQLite and PostgreSQL.",
      channel: "chat",
    });
    await expect(card.locator("pre.response").textContent()).resolves.toBe(
      "SQLite and PostgreSQL.",
    );
    await page.close();
  });

  it("after the approval, the agent's report grows live as a document, the latest tool calls listed", async () => {
    const r = await s.airlock.request({
      title: "Research plan: SQLite vs PostgreSQL",
      requester: "research-agent",
      approvers: ["alice"],
    });
    const page = await openCard(r.id, 1366);
    const card = page.locator("airlock-approval");
    await card.locator("button[data-action=approve]").click();
    await page.waitForSelector("airlock-approval[status=approved]");
    const progress = (data: Record<string, unknown>) =>
      s.airlock.record({ type: "notified", requestId: r.id, actor: "research-agent", data });
    for (const q of ["a", "b", "c", "d"]) {
      await progress({ event: "tool_call", tool: "web_search", args: { query: q } });
    }
    await progress({
      event: "report_updated",
      section: "SQLite",
      report_markdown:
        "# Report\n\n## SQLite\n\nSQLite keeps a **write-ahead log**. <img src=x onerror=window.pwned=1>\n",
    });
    await expect
      .poll(() => card.locator(".report").textContent(), { timeout: 15_000 })
      .toContain("SQLite keeps a write-ahead log.");
    await expect(card.locator(".report h2").textContent()).resolves.toBe("SQLite");
    await expect(card.locator(".report strong").textContent()).resolves.toBe("write-ahead log");
    await expect(card.locator(".report img").count()).resolves.toBe(0);
    await expect(card.locator(".calls li").count()).resolves.toBe(3);
    await expect(card.locator(".progress").textContent()).resolves.toContain(
      "1 earlier ones folded",
    );
    await progress({
      event: "stop",
      status: "completed",
      message: "done",
      report_markdown: "# Report\n\n## SQLite\n\nWAL.\n\n## PostgreSQL\n\nMVCC.\n",
    });
    await expect
      .poll(() => card.locator(".report").textContent(), { timeout: 15_000 })
      .toContain("MVCC.");
    await expect(card.locator(".progress .badge").first().textContent()).resolves.toBe(
      "completed: done",
    );
    await expect(page.evaluate(() => "pwned" in window)).resolves.toBe(false);
    await page.close();
  });
});
