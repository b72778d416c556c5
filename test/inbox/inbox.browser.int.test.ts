// The web inbox in a real browser: Debian's chromium driven by playwright-core against a real server
// on loopback. Skips with a message when chromium is missing, unless AIRLOCK_REQUIRE_BROWSER=1.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { type AirlockServer, createServer } from "../../src/server/index.js";
import { createToken, memoryTokenStore } from "../../src/server/tokens.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";

const CHROMIUM = "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && process.env.AIRLOCK_REQUIRE_BROWSER === "1") {
  throw new Error(
    `${CHROMIUM} is missing and AIRLOCK_REQUIRE_BROWSER=1: install Debian's chromium`,
  );
}
if (!haveBrowser) {
  console.warn(`skipping the browser tests: ${CHROMIUM} is missing (apt-get install -y chromium)`);
}
// AIRLOCK_SCREENSHOTS=1 refreshes the README's screenshots in docs/; otherwise they go to the test's
// temporary folder, removed at the end.
let DOCS: URL;

describe.skipIf(!haveBrowser)("web inbox in chromium", () => {
  let airlock: Airlock;
  let server: AirlockServer;
  let base: string;
  let browser: Browser;
  let alice: string;
  let bob: string;
  let cleanup: () => void;

  beforeAll(async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    DOCS =
      process.env.AIRLOCK_SCREENSHOTS === "1"
        ? new URL("../../docs/", import.meta.url)
        : new URL(`file://${t.dir}/shots/`);
    airlock = await createAirlock({ store: sqliteStore(join(t.dir, "airlock.db")) });
    airlock.registerSchema(
      "email.send",
      z.object({ to: z.string().email(), subject: z.string() }).strict(),
    );
    const tokens = memoryTokenStore();
    alice = (await createToken(tokens, { name: "alice", roles: ["reviewer"], groups: ["ops"] }))
      .token;
    bob = (await createToken(tokens, { name: "bob", roles: ["reviewer"], groups: ["ops"] })).token;
    server = createServer({ airlock, auth: { tokens }, heartbeatMs: 1000, shutdownGraceMs: 500 });
    const listening = await server.listen({ port: 0, host: "127.0.0.1" });
    base = listening.url.replace(/\/$/, "");
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-quic",
        "--no-first-run",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await airlock?.close();
    cleanup?.();
  });

  async function signIn(token: string, width = 1200): Promise<{ ctx: BrowserContext; page: Page }> {
    const ctx = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await ctx.newPage();
    await page.goto(`${base}/`);
    await expect(page.url()).toContain("/login");
    await page.fill("#token", token);
    await page.click("button[type=submit]");
    await page.waitForURL(`${base}/`);
    return { ctx, page };
  }

  it("refuses a wrong token and signs in with a reviewer token", async () => {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await page.goto(`${base}/login`);
    await page.fill("#token", "alk_not_a_token");
    await page.click("button[type=submit]");
    await expect(page.locator(".error").textContent()).resolves.toContain(
      "Unknown or revoked token",
    );
    const cookies = await ctx.cookies();
    expect(cookies.find((c) => c.name === "airlock_session")).toBeUndefined();
    await ctx.close();

    const { ctx: ok, page: signed } = await signIn(alice);
    const session = (await ok.cookies()).find((c) => c.name === "airlock_session");
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Strict" });
    await expect(signed.locator("h1").textContent()).resolves.toBe("Inbox");
    await ok.close();
  });

  it("shows a new request live, then approves two of four items for the waiting agent", async () => {
    const { ctx, page } = await signIn(alice);
    const r = await airlock.request({
      title: "Run four extra searches",
      action: "research.search",
      requester: "research-agent",
      approvers: ["ops"],
      risk: "medium",
      confidence: 72,
      timeoutMs: 10 * 60_000,
      items: [
        { id: "q1", label: "solar storage costs 2026" },
        { id: "q2", label: "grid-scale battery safety" },
        { id: "q3", label: "sodium-ion market share" },
        { id: "q4", label: "pumped hydro capacity" },
      ],
    });
    const waiting = airlock.waitFor(r.id, { timeoutMs: 30_000 });
    const row = page.locator(`tr[data-request-id="${r.id}"]`);
    await row.waitFor({ timeout: 10_000 });
    await expect(row.textContent()).resolves.toContain("Run four extra searches");
    await expect
      .poll(() => page.title(), { timeout: 10_000 })
      .toMatch(/^\(\d+\+?\) Airlock inbox$/);
    await expect.poll(() => row.locator(".countdown").textContent()).toMatch(/left$/);
    mkdirSync(DOCS, { recursive: true });
    await page.screenshot({ path: new URL("inbox-queue.png", DOCS).pathname, fullPage: true });

    await row.locator("a").click();
    await page.waitForURL(`${base}/requests/${r.id}`);
    await page.check('input[name=items][value="q2"]');
    await page.check('input[name=items][value="q4"]');
    await page.fill("#comment", "the other two are covered");
    await page.screenshot({ path: new URL("inbox-request.png", DOCS).pathname, fullPage: true });
    await page.click("#btn-approve-selected");
    await page.waitForSelector('#decision-panel[data-status="approved"]');
    await expect(page.locator("#decision-panel").textContent()).resolves.toContain("by alice");

    const done = await waiting;
    expect(done.status).toBe("approved");
    expect(done.decision?.selected).toEqual(["q2", "q4"]);
    expect(done.decision).toMatchObject({
      channel: "web",
      reviewer: "alice",
      comment: "the other two are covered",
    });
    // The page view was audited.
    const trail = await airlock.audit({ requestId: r.id });
    expect(trail.map((e) => e.type)).toEqual(["created", "viewed", "decided"]);
    await ctx.close();
  });

  it("requests a revision with a comment, with the r shortcut", async () => {
    const { ctx, page } = await signIn(alice);
    const r = await airlock.request({
      title: "Weld plan",
      requester: "planner",
      items: ["move", "weld"],
    });
    await page.goto(`${base}/requests/${r.id}`);
    await page.keyboard.press("r");
    // `r` puts the cursor in the comment box, now the revision's: Enter sends it.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("comment");
    await page.keyboard.type("skip position 2");
    await page.keyboard.press("Enter");
    await page.waitForSelector('#decision-panel[data-status="revise"]');
    const done = await airlock.get(r.id);
    expect(done.decision).toMatchObject({
      outcome: "revise",
      comment: "skip position 2",
      channel: "web",
    });
    await ctx.close();
  });

  it("edits args: an invalid value shows the schema error inline, a valid one approves", async () => {
    const { ctx, page } = await signIn(alice);
    const r = await airlock.request({
      title: "Send the weekly email",
      action: "email.send",
      requester: "mailer",
      args: { to: "team@example.org", subject: "Weekly" },
    });
    await page.goto(`${base}/requests/${r.id}`);
    await page.click("details:has(#edit-form) > summary");
    // The form is built from the schema registered for email.send: one field per argument.
    await page.fill('[data-field="to"] input', "not-an-address");
    await page.click("#btn-edit");
    // The engine's refusal, beside the field it is about; what was typed is kept.
    const error = page.locator('[data-field="to"] .field-error');
    await expect(error.textContent()).resolves.toMatch(/\bto\b/);
    await expect(error.isVisible()).resolves.toBe(true);
    await expect(page.locator('[data-field="to"] input').inputValue()).resolves.toBe(
      "not-an-address",
    );
    expect((await airlock.get(r.id)).status).toBe("pending");
    await page.fill('[data-field="to"] input', "leads@example.org");
    await page.click("#btn-edit");
    await page.waitForSelector('#decision-panel[data-status="approved"]');
    const done = await airlock.get(r.id);
    expect(done.decision).toMatchObject({
      method: "edit",
      editedArgs: { to: "leads@example.org", subject: "Weekly" },
    });
    await ctx.close();
  });

  it("a request decided in another browser shows who decided, and the buttons are gone", async () => {
    const first = await signIn(alice);
    const second = await signIn(bob);
    const r = await airlock.request({
      title: "Delete staging project",
      requester: "ops-bot",
      approvers: ["ops"],
    });
    await first.page.goto(`${base}/requests/${r.id}`);
    await second.page.goto(`${base}/requests/${r.id}`);
    await second.page.click("#btn-reject");
    await second.page.waitForSelector('#decision-panel[data-status="rejected"]');
    // The first page learns it live, without a reload.
    await first.page.waitForSelector('#decision-panel[data-status="rejected"]', {
      timeout: 10_000,
    });
    await expect(first.page.locator("#decision-panel").textContent()).resolves.toContain("by bob");
    await expect(first.page.locator("#btn-approve").count()).resolves.toBe(0);
    await first.ctx.close();
    await second.ctx.close();
  });

  it("a stale page that loses the race gets a kind 409, not an error page", async () => {
    const first = await signIn(alice);
    const r = await airlock.request({ title: "Rotate keys", requester: "sec-bot" });
    await first.page.goto(`${base}/requests/${r.id}`);
    await airlock.decide(r.id, { outcome: "approved", reviewer: "carol" });
    // Submit the form that is still on screen (live update raced away by removing the panel first).
    const response = first.page.waitForResponse((res) => res.url().endsWith("/decide"));
    await first.page.evaluate(() => {
      const form = document.getElementById("decide-form") as HTMLFormElement | null;
      const button = document.getElementById("btn-reject") as HTMLButtonElement | null;
      if (form && button) form.requestSubmit(button);
    });
    expect((await response).status()).toBe(409);
    await expect(first.page.locator("#decision-panel").textContent()).resolves.toContain(
      "carol decided this request first",
    );
    await first.ctx.close();
  });

  it("shows an agent's progress on the request page live", async () => {
    const { ctx, page } = await signIn(alice);
    const r = await airlock.request({ title: "Research plan", requester: "research-agent" });
    await page.goto(`${base}/requests/${r.id}`);
    await page.waitForSelector("#trail");
    await airlock.record({
      type: "notified",
      requestId: r.id,
      actor: "research-agent",
      data: { event: "tool_call", tool: "search_documents" },
    });
    await expect
      .poll(() => page.locator("#trail").textContent(), { timeout: 10_000 })
      .toContain("progress from research-agent: tool_call · search_documents");
    await ctx.close();
  });

  it("runs no script from a request's content", async () => {
    const { ctx, page } = await signIn(alice);
    const r = await airlock.request({
      title: "<script>window.__pwned = 1</script>Harmless title",
      requester: "agent",
      summary:
        'Summary <script>window.__pwned = 2</script> <img src=x onerror="window.__pwned = 3"> [x](javascript:window.__pwned=4)',
      preview: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-<script>window.__pwned = 5</script>\n+ok",
    });
    const dialogs: string[] = [];
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(`${base}/requests/${r.id}`);
    await page.waitForSelector("#decision-panel");
    await expect(
      page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned),
    ).resolves.toBeUndefined();
    await expect(page.locator("h1").textContent()).resolves.toContain("<script>");
    await expect(page.locator("pre.diff .del").textContent()).resolves.toContain("<script>");
    expect(await page.locator("main script").count()).toBe(0);
    expect(dialogs).toEqual([]);
    await ctx.close();
  });

  it("refuses a form post without the CSRF token", async () => {
    const { ctx, page } = await signIn(alice);
    const r = await airlock.request({ title: "CSRF target", requester: "agent" });
    const res = await page.request.post(`${base}/requests/${r.id}/decide`, {
      form: { action: "approve" },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(403);
    expect(await res.text()).toContain("CSRF");
    const forged = await page.request.post(`${base}/requests/${r.id}/decide`, {
      form: { action: "approve", _csrf: "forged" },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    expect((await airlock.get(r.id)).status).toBe("pending");
    await ctx.close();
  });

  it("filters the queue as you type (htmx) and by risk", async () => {
    const { ctx, page } = await signIn(alice);
    await airlock.request({ title: "Invoice batch 7", requester: "fin-bot", risk: "high" });
    await airlock.request({ title: "Deploy canary", requester: "ci", risk: "low" });
    await page.reload();
    await page.fill("input[name=q]", "invoice");
    await expect
      .poll(() => page.locator("#queue tbody tr").allTextContents(), { timeout: 5_000 })
      .toEqual([expect.stringContaining("Invoice batch 7")]);
    await page.goto(`${base}/?risk=low`);
    await expect(page.locator("#queue tbody tr").allTextContents()).resolves.toEqual([
      expect.stringContaining("Deploy canary"),
    ]);
    await ctx.close();
  });

  it("works at phone width and shows metrics", async () => {
    const { ctx, page } = await signIn(alice, 390);
    const tableWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(tableWidth).toBeLessThanOrEqual(390);
    await page.goto(`${base}/dashboard`);
    await expect(page.locator("h1").textContent()).resolves.toBe("Review metrics");
    await expect(page.locator("table").textContent()).resolves.toContain("Approval rate");
    await page.click("text=Sign out");
    await page.waitForURL(/\/login$/);
    await ctx.close();
  });
});
