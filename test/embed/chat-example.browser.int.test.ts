// examples/chat end to end in chromium: the quick call is approved inline through the card and the
// tool runs; the full call is not offered a card, waits in the review queue, and runs once a finance
// reviewer approves it there.
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChatExample, startChatExample } from "../../examples/chat/app.js";
import { tempDir } from "../helpers.js";

const CHROMIUM = "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM);

describe.skipIf(!haveBrowser)("examples/chat (chromium)", () => {
  let example: ChatExample;
  let browser: Browser;
  const tmp = tempDir("airlock-chat-test-");

  beforeAll(async () => {
    example = await startChatExample({ dir: tmp.dir });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await example?.close();
    tmp.cleanup();
  });

  it("approves the quick call inline and sends the full one to the inbox", async () => {
    const page = await browser.newPage();
    await page.goto(example.chatUrl);
    await page.click("#ask-expense");
    const card = page.locator("airlock-approval");
    await page.waitForSelector("airlock-approval[status=pending]");
    await expect(card.locator("h3").textContent()).resolves.toContain("EXP-310");
    await card.locator("button[data-action=approve]").click();
    await page.waitForSelector("text=Result:");
    await expect(page.locator("#log").textContent()).resolves.toContain('"expenseId":"EXP-310"');
    const [expense] = (await example.airlock.list({ action: "approve_expense" })).items;
    expect(expense?.decision).toMatchObject({ reviewer: "dana", channel: "chat" });
    expect(expense?.level).toBe("quick");

    await page.click("#ask-contract");
    await page.waitForSelector("text=open in the inbox");
    await expect(page.locator("airlock-approval").count()).resolves.toBe(1);
    const [contract] = (await example.airlock.list({ action: "sign_contract" })).items;
    expect(contract?.level).toBe("full");
    const href = await page.locator("a", { hasText: "open in the inbox" }).getAttribute("href");
    expect(href).toBe(`${example.airlockUrl}/requests/${contract?.id}`);
    // A finance reviewer decides it in the review queue (here through the API with the same token).
    const decided = await fetch(`${example.airlockUrl}/v1/requests/${contract?.id}/decisions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${example.inboxToken}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ outcome: "approved" }),
    });
    expect(decided.status).toBe(200);
    await page.waitForFunction(() =>
      (document.querySelector("#log")?.textContent ?? "").includes('"status":"signed"'),
    );
    await page.close();
  });
});
