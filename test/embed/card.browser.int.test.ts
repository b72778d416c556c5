// The approval card in Debian's chromium, on a plain page served from another 127.0.0.1 origin (the
// "chat app"): the <airlock-approval> element approves a `quick` hitlTool gate and the waiting agent
// resumes; it follows a decision made elsewhere; its token opens nothing but its own request; and the
// `airlock/react` hook (bundled with react-dom/client) shows, decides, follows and aborts on unmount.
import { existsSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/client/index.js";
import { hitlTool } from "../../src/tools/hitl-tool.js";
import { isHitlPending } from "../../src/tools/results.js";
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

/** The test component: the hook's state as text, and buttons. Tracks every signal the hook's
 * fetches carry, so the test can see them aborted on unmount. */
const REACT_APP = `
import { createElement as h, useState } from "react";
import { createRoot } from "react-dom/client";
import { useApproval } from ${JSON.stringify(fileURLToPath(new URL("../../src/adapters/react.ts", import.meta.url)))};
const cfg = document.getElementById("root").dataset;
const signals = [];
window.__signals = signals;
const trackedFetch = (input, init) => {
  if (init && init.signal) signals.push(init.signal);
  return fetch(input, init);
};
function Card() {
  const a = useApproval(cfg.id, { baseUrl: cfg.base, token: cfg.token, fetch: trackedFetch });
  return h("div", null,
    h("p", { id: "status" }, a.status),
    a.request ? h("h3", { id: "title" }, a.request.title) : null,
    a.request && a.request.decision ? h("p", { id: "decided-by" }, a.request.decision.reviewer + " via " + a.request.decision.channel) : null,
    h("button", { id: "approve", disabled: a.status !== "pending" || a.deciding, onClick: () => a.approve({ comment: "from react" }).catch(() => {}) }, "Approve"),
    h("button", { id: "reject", disabled: a.status !== "pending", onClick: () => a.reject().catch(() => {}) }, "Reject"),
    a.error ? h("p", { id: "error" }, a.error.message) : null);
}
function App() {
  const [shown, setShown] = useState(true);
  return h("div", null,
    h("button", { id: "unmount", onClick: () => setShown(false) }, "hide"),
    shown ? h(Card) : h("p", { id: "gone" }, "gone"));
}
createRoot(document.getElementById("root")).render(h(App));
`;

describe.skipIf(!haveBrowser)("the approval card (chromium)", () => {
  let s: TestServer;
  let chat: Server;
  let chatOrigin: string;
  let browser: Browser;
  let reactBundle = "";

  beforeAll(async () => {
    // The chat app: another origin, serving plain pages that embed the card.
    chat = createHttpServer((req, res) => {
      const url = new URL(req.url ?? "/", chatOrigin);
      const q = (k: string) => escapeAttr(url.searchParams.get(k) ?? "");
      if (url.pathname === "/react.js") {
        res.writeHead(200, { "content-type": "text/javascript" }).end(reactBundle);
        return;
      }
      const body =
        url.pathname === "/react"
          ? `<div id="root" data-id="${q("id")}" data-token="${q("token")}" data-base="${escapeAttr(s.url)}"></div><script src="/react.js"></script>`
          : `<p>Chat</p><script src="${escapeAttr(s.url)}/embed/airlock-approval.js"></script>
<airlock-approval request-id="${q("id")}" token="${q("token")}"></airlock-approval>`;
      res
        .writeHead(200, { "content-type": "text/html; charset=utf-8" })
        .end(`<!doctype html><html><body>${body}</body></html>`);
    });
    await new Promise<void>((resolve) => chat.listen(0, "127.0.0.1", resolve));
    chatOrigin = `http://127.0.0.1:${(chat.address() as AddressInfo).port}`;
    s = await startTestServer({ embedOrigins: [chatOrigin], shutdownGraceMs: 200 });
    const bundled = await build({
      stdin: { contents: REACT_APP, resolveDir: process.cwd(), loader: "js" },
      bundle: true,
      format: "esm",
      platform: "browser",
      write: false,
      logLevel: "silent",
      define: { "process.env.NODE_ENV": '"production"' },
    });
    reactBundle = bundled.outputFiles[0]?.text ?? "";
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

  async function openCard(id: string, token: string): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(`${chatOrigin}/card?id=${encodeURIComponent(id)}&token=${token}`);
    await page.waitForSelector("airlock-approval[status=pending]");
    return page;
  }

  it("approves a quick hitlTool gate inline, and the waiting agent resumes", async () => {
    const agent = createClient({ url: s.url, token: s.tokens.agent });
    let ran: { expenseId: string } | undefined;
    const approveExpense = hitlTool(
      async (args: { expenseId: string; amount: number }) => {
        ran = { expenseId: args.expenseId };
        return { paid: args.expenseId };
      },
      {
        name: "approve_expense",
        airlock: agent,
        requester: "bot",
        approvers: ["alice"],
        // Scored between the quick and auto thresholds: a quick, inline approval.
        confidence: () => 70,
        descriptionTemplate: "Pay expense {expenseId}",
        timeoutMs: 600_000,
      },
    );
    const pending = await approveExpense({ expenseId: "EXP-7", amount: 240 });
    if (!isHitlPending(pending)) throw new Error("expected a pending marker");
    expect(pending.hitl_result.approvalLevel).toBe("quick");
    const id = pending.hitl_result.approvalId ?? "";
    const resumed = s.airlock.waitFor(id, { timeoutMs: 60_000 });

    const page = await openCard(id, await mint(id));
    const card = page.locator("airlock-approval");
    await expect(card.locator("h3").textContent()).resolves.toBe("Pay expense EXP-7");
    await expect(card.locator("pre.args").textContent()).resolves.toContain('"EXP-7"');
    await expect(card.locator(".countdown").textContent()).resolves.toMatch(/^Decide within /);
    await card.locator("textarea").fill("fine, small amount");
    await card.locator("button[data-action=approve]").click();

    const settled = await resumed;
    expect(settled.status).toBe("approved");
    expect(settled.decision).toMatchObject({
      reviewer: "alice",
      channel: "chat",
      comment: "fine, small amount",
    });
    await page.waitForSelector("airlock-approval[status=approved]");
    await expect(card.locator(".status").textContent()).resolves.toBe("Approved by alice (chat)");
    // The agent resumes the call with the approval: the tool runs, once.
    await expect(approveExpense.resume(id)).resolves.toEqual({ paid: "EXP-7" });
    expect(ran).toEqual({ expenseId: "EXP-7" });
    await page.close();
  });

  it("shows the exact args beside the agent's words, even when they say otherwise and a preview is given", async () => {
    const r = await s.airlock.request({
      title: "Pay the coffee invoice",
      summary: "Pay the $5 coffee invoice",
      preview: "Coffee: $5",
      args: { amount: 50000, to: "IBAN-ATTACKER-777" },
      requester: "bot",
      approvers: ["alice"],
    });
    const page = await openCard(r.id, await mint(r.id));
    const card = page.locator("airlock-approval");
    const labels = await card.locator(".label").allTextContents();
    expect(labels).toEqual(["The agent says:", "Exact arguments (what runs if approved):"]);
    await expect(card.locator(".summary").textContent()).resolves.toBe("Pay the $5 coffee invoice");
    const args = await card.locator("pre.args").textContent();
    expect(args).toContain('"amount": 50000');
    expect(args).toContain('"to": "IBAN-ATTACKER-777"');
    await expect(card.locator("pre.diff").textContent()).resolves.toContain("Coffee: $5");
    await page.close();
  });

  it("shows agent text as text, lets a subset of items be approved", async () => {
    const r = await s.airlock.request({
      title: "<b>bold</b> title",
      summary: '<img src=x onerror="window.__owned=1"> look',
      requester: "bot",
      approvers: ["alice"],
      allowed: ["approve", "reject", "select", "revise"],
      items: ["first query", "second query", "third query"],
    });
    const page = await openCard(r.id, await mint(r.id));
    const card = page.locator("airlock-approval");
    await expect(card.locator("h3").textContent()).resolves.toBe("<b>bold</b> title");
    await expect(card.locator(".summary").textContent()).resolves.toContain("<img src=x");
    await expect(card.locator("img").count()).resolves.toBe(0);
    expect(await page.evaluate(() => (window as { __owned?: number }).__owned)).toBeUndefined();
    await expect(card.locator("button[data-action=revise]").count()).resolves.toBe(1);
    await card.locator('input[type=checkbox][value="item-2"]').uncheck();
    await card.locator("button[data-action=approve]").click();
    await page.waitForSelector("airlock-approval[status=approved]");
    const decided = await s.airlock.get(r.id);
    expect(decided.decision?.selected).toEqual(["item-1", "item-3"]);
    await page.close();
  });

  it("updates live when the request is decided elsewhere", async () => {
    const r = await s.airlock.request({
      title: "Send newsletter",
      requester: "bot",
      approvers: ["alice", "bob"],
    });
    const page = await openCard(r.id, await mint(r.id));
    // The page listens before the decision is made.
    await page.evaluate(() => {
      document.querySelector("airlock-approval")?.addEventListener("airlock-decided", (e) => {
        (window as { __decided?: string }).__decided = (e as CustomEvent).detail.request.status;
      });
    });
    await s.airlock.decide(r.id, { outcome: "rejected", reviewer: "bob", channel: "web" });
    await page.waitForSelector("airlock-approval[status=rejected]");
    await page.waitForFunction(() => (window as { __decided?: string }).__decided === "rejected");
    const card = page.locator("airlock-approval");
    await expect(card.locator(".status").textContent()).resolves.toBe("Rejected by bob (web)");
    await expect(card.locator("button").count()).resolves.toBe(0);
    await page.close();
  });

  it("keeps following after a partial approval towards a quorum", async () => {
    const r = await s.airlock.request({
      title: "Two keys",
      requester: "bot",
      approvers: ["alice", "bob"],
      quorum: 2,
    });
    const page = await openCard(r.id, await mint(r.id));
    const card = page.locator("airlock-approval");
    await card.locator("button[data-action=approve]").click();
    await page.waitForFunction(async (id) => {
      const el = document.querySelector("airlock-approval") as HTMLElement & {
        request?: { decisions: unknown[]; id: string };
      };
      return el.request?.id === id && el.request.decisions.length === 1;
    }, r.id);
    expect(await card.getAttribute("status")).toBe("pending");
    await s.airlock.decide(r.id, { outcome: "approved", reviewer: "bob", channel: "web" });
    await page.waitForSelector("airlock-approval[status=approved]");
    await expect(card.locator(".status").textContent()).resolves.toBe("Approved by bob (web)");
    await page.close();
  });

  it("its token cannot read or decide another request from the page, nor reach the API", async () => {
    const mine = await s.airlock.request({ title: "mine", requester: "bot", approvers: ["alice"] });
    const other = await s.airlock.request({
      title: "other",
      requester: "bot",
      approvers: ["alice"],
    });
    const token = await mint(mine.id);
    const page = await openCard(mine.id, token);
    const results = await page.evaluate(
      async ({ base, token, other }) => {
        const auth = { authorization: `Bearer ${token}` };
        const status = async (path: string, init: RequestInit = {}) => {
          try {
            return (await fetch(base + path, { ...init, headers: { ...auth, ...init.headers } }))
              .status;
          } catch {
            return "blocked";
          }
        };
        return {
          read: await status(`/v1/embed/requests/${other}`),
          decide: await status(`/v1/embed/requests/${other}/decisions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ outcome: "approved" }),
          }),
          list: await status("/v1/requests"),
          api: await status(`/v1/requests/${other}`),
        };
      },
      { base: s.url, token, other: other.id },
    );
    expect(results).toEqual({ read: 403, decide: 403, list: "blocked", api: "blocked" });
    expect((await s.airlock.get(other.id)).status).toBe("pending");
    // And on the server side (no browser in the way) the API answers 403 to it.
    expect((await s.call(token, "GET", "/v1/requests")).status).toBe(403);
    await page.close();
  });

  it("useApproval (airlock/react) shows, approves, and follows a decision made elsewhere", async () => {
    const a = await s.airlock.request({
      title: "React gate",
      requester: "bot",
      approvers: ["alice"],
    });
    const page = await browser.newPage();
    await page.goto(`${chatOrigin}/react?id=${a.id}&token=${await mint(a.id)}`);
    await page.waitForSelector("#status:text-is('pending')");
    await expect(page.locator("#title").textContent()).resolves.toBe("React gate");
    const resumed = s.airlock.waitFor(a.id, { timeoutMs: 60_000 });
    await page.click("#approve");
    await expect(resumed).resolves.toMatchObject({
      status: "approved",
      decision: { reviewer: "alice", channel: "chat", comment: "from react" },
    });
    await page.waitForSelector("#status:text-is('approved')");
    await expect(page.locator("#decided-by").textContent()).resolves.toBe("alice via chat");

    const b = await s.airlock.request({
      title: "React gate 2",
      requester: "bot",
      approvers: ["alice"],
    });
    await page.goto(`${chatOrigin}/react?id=${b.id}&token=${await mint(b.id)}`);
    await page.waitForSelector("#status:text-is('pending')");
    await s.airlock.decide(b.id, { outcome: "rejected", reviewer: "alice", channel: "web" });
    await page.waitForSelector("#status:text-is('rejected')");
    await page.close();
  });

  it("useApproval aborts its long-poll on unmount, and reports a refused token as error", async () => {
    const r = await s.airlock.request({
      title: "Unmounted",
      requester: "bot",
      approvers: ["alice"],
    });
    const page = await browser.newPage();
    await page.goto(`${chatOrigin}/react?id=${r.id}&token=${await mint(r.id)}`);
    await page.waitForSelector("#status:text-is('pending')");
    // The long-poll is under way (a second fetch after the first read).
    await page.waitForFunction(
      () => (window as { __signals?: AbortSignal[] }).__signals?.length === 2,
    );
    await page.click("#unmount");
    await page.waitForSelector("#gone");
    await page.waitForFunction(() =>
      ((window as { __signals?: AbortSignal[] }).__signals ?? []).every((sig) => sig.aborted),
    );

    const other = await s.airlock.request({
      title: "Other",
      requester: "bot",
      approvers: ["alice"],
    });
    await page.goto(`${chatOrigin}/react?id=${other.id}&token=${await mint(r.id)}`);
    await page.waitForSelector("#status:text-is('error')");
    await expect(page.locator("#error").textContent()).resolves.toContain("opens only");
    await page.close();
  });
});
