// The approval card's buttons in Debian's chromium (issue 31, finding 4): the card once checked a short
// regex of its own, so its green button read "No, stop" and its red one "Yes, proceed". Now the
// server words the buttons with the core's one rule (core/labels.ts) and the card shows its words:
// the verb first, an inverting label never, the approve verb on the green button, and a click on it
// approves.
import { existsSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
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

/** The card's green (approve) colour, from its stylesheet. */
const GREEN = "rgb(19, 121, 91)";

describe.skipIf(!haveBrowser)("the approval card's buttons (chromium)", () => {
  let s: TestServer;
  let chat: Server;
  let chatOrigin = "";
  let browser: Browser;

  beforeAll(async () => {
    // The chat app: another origin, serving a page that embeds the card.
    chat = createHttpServer((req, res) => {
      const url = new URL(req.url ?? "/", chatOrigin);
      const q = (k: string) => escapeAttr(url.searchParams.get(k) ?? "");
      res
        .writeHead(200, { "content-type": "text/html; charset=utf-8" })
        .end(
          `<!doctype html><html><body><script src="${escapeAttr(s.url)}/embed/airlock-approval.js"></script><airlock-approval request-id="${q("id")}" token="${q("token")}"></airlock-approval></body></html>`,
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

  /** A pending request labelled by its agent, shown in a card alice may decide with. */
  async function cardFor(labels: { approve?: string; reject?: string }): Promise<{
    page: Page;
    id: string;
  }> {
    const r = await s.airlock.request({
      title: "Pay invoice 42",
      requester: "bot",
      approvers: ["alice"],
      labels,
    });
    const minted = await s.call(s.tokens.admin, "POST", `/v1/requests/${r.id}/embed-token`, {
      reviewer: "alice",
    });
    expect(minted.status).toBe(201);
    const page = await browser.newPage();
    await page.goto(
      `${chatOrigin}/card?id=${encodeURIComponent(r.id)}&token=${encodeURIComponent(minted.body.token)}`,
    );
    await page.waitForSelector("airlock-approval[status=pending]");
    return { page, id: r.id };
  }

  /** Each button's text and background colour, in the order shown. */
  async function buttons(page: Page) {
    const card = page.locator("airlock-approval");
    const all = card.locator("button");
    const out: { action: string | null; text: string; background: string }[] = [];
    for (let i = 0; i < (await all.count()); i++) {
      const b = all.nth(i);
      out.push({
        action: await b.getAttribute("data-action"),
        text: (await b.textContent()) ?? "",
        background: await b.evaluate((el) => getComputedStyle(el).backgroundColor),
      });
    }
    return out;
  }

  it.each([
    // [approve label, reject label, approve button, reject button]
    ["No, stop", "Yes, proceed", "Approve", "Reject"],
    ["Cancel the transfer", "Send it", "Approve", "Reject"],
    ["Don't pay", "Confirm payment", "Approve", "Reject"],
    ["Ｎｏ，ｓｔｏｐ", "ＹＥＳ", "Approve", "Reject"],
    ["Send it", "Don't pay", "Approve — Send it", "Reject — Don't pay"],
  ])("approve %j, reject %j: the buttons read %j and %j", async (approve, reject, a, r) => {
    const { page } = await cardFor({ approve, reject });
    const shown = await buttons(page);
    expect(shown.map((b) => [b.action, b.text])).toEqual([
      ["approve", a],
      ["reject", r],
      ["revise", "Revise"],
    ]);
    // The approve verb is on the green button.
    expect(shown[0]?.background).toBe(GREEN);
    await page.close();
  });

  it("the green button, whatever the agent wrote, approves", async () => {
    const { page, id } = await cardFor({ approve: "No, stop", reject: "Yes, proceed" });
    const green = page.locator("airlock-approval button[data-action=approve]");
    await expect(green.textContent()).resolves.toBe("Approve");
    await green.click();
    await page.waitForSelector("airlock-approval[status=approved]");
    expect((await s.airlock.get(id)).decision).toMatchObject({
      outcome: "approved",
      reviewer: "alice",
      channel: "chat",
    });
    await page.close();
  });
});
