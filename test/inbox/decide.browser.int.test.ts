// Deciding in the web inbox, in Debian's chromium: ticked items are never ignored, dangerous
// approvals confirm, labels cannot invert the buttons, a reviewer can always reject or cancel, the
// side panel follows decisions made elsewhere, and edits and revisions show what changed.
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestServer, type TestServer } from "../server/helpers.js";

const CHROMIUM = "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && process.env.AIRLOCK_REQUIRE_BROWSER === "1") {
  throw new Error(
    `${CHROMIUM} is missing and AIRLOCK_REQUIRE_BROWSER=1: install Debian's chromium`,
  );
}

const GREEN = "rgb(19, 121, 91)";
const RED = "rgb(180, 35, 24)";

describe.skipIf(!haveBrowser)("deciding in the inbox (chromium)", () => {
  let s: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    s = await startTestServer({
      heartbeatMs: 500,
      shutdownGraceMs: 200,
      schemas: {
        "email.send": z.object({ to: z.string().email(), subject: z.string() }).strict(),
      },
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  async function signIn(token: string, width = 1280): Promise<Page> {
    const ctx = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await ctx.newPage();
    await page.goto(`${s.url}/login`);
    await page.fill("#token", token);
    await page.click("button[type=submit]");
    await page.waitForURL(`${s.url}/`);
    return page;
  }

  const background = (page: Page, selector: string) =>
    page.locator(selector).evaluate((el) => getComputedStyle(el).backgroundColor);

  it("a plan with items: Approve selected is offered, and `a` with a subset ticked asks first", async () => {
    const page = await signIn(s.tokens.alice);
    const r = await s.airlock.request({
      title: "Robot plan: weld",
      action: "robot.execute_plan",
      requester: "planner",
      allowed: ["approve", "reject", "select", "revise"],
      items: ["move", "attach", "weld", "home"],
    });
    await page.goto(`${s.url}/requests/${r.id}`);
    await expect(page.locator("#btn-approve-selected").count()).resolves.toBe(1);
    await page.check('input[name=items][value="item-2"]');
    await page.check('input[name=items][value="item-3"]');
    await page.fill("#comment", "only the attach and weld steps");
    await page.locator("body").click({ position: { x: 5, y: 5 } });
    await page.keyboard.press("a");
    await page.waitForSelector("[aria-label=confirm]");
    await expect(page.locator("[aria-label=confirm]").textContent()).resolves.toContain(
      "You ticked 2 of 4",
    );
    // Nothing was recorded, and what was ticked and typed is still there.
    expect((await s.airlock.get(r.id)).status).toBe("pending");
    await expect(page.locator('input[name=items][value="item-3"]').isChecked()).resolves.toBe(true);
    await expect(page.locator("#comment").inputValue()).resolves.toBe(
      "only the attach and weld steps",
    );
    await page.click("#btn-confirm");
    await page.waitForSelector('#decision-panel[data-status="approved"]');
    const done = await s.airlock.get(r.id);
    expect(done.decision).toMatchObject({
      method: "select",
      selected: ["item-2", "item-3"],
      comment: "only the attach and weld steps",
    });
    await page.context().close();
  });

  it("`Approve all` with every item ticked, or none, approves all without asking", async () => {
    const page = await signIn(s.tokens.alice);
    const r = await s.airlock.request({
      title: "Three searches",
      requester: "research-agent",
      allowed: ["approve", "reject", "select"],
      items: ["a", "b", "c"],
    });
    await page.goto(`${s.url}/requests/${r.id}`);
    await page.click("#btn-approve");
    await page.waitForSelector('#decision-panel[data-status="approved"]');
    expect((await s.airlock.get(r.id)).decision?.method).toBe("approve_all");
    await page.context().close();
  });

  it("items without `select` are a list, not checkboxes that would be ignored", async () => {
    const page = await signIn(s.tokens.alice);
    const r = await s.airlock.request({
      title: "Fixed plan",
      requester: "planner",
      allowed: ["approve", "reject"],
      items: ["one", "two"],
    });
    await page.goto(`${s.url}/requests/${r.id}`);
    await expect(page.locator("input[name=items]").count()).resolves.toBe(0);
    await expect(page.locator("#btn-approve-selected").count()).resolves.toBe(0);
    await expect(page.locator(".items li").allTextContents()).resolves.toEqual(["one", "two"]);
    // No revise form here, so the hint does not offer `r`.
    await expect(page.locator(".keys").textContent()).resolves.not.toContain("revise");
    await page.context().close();
  });

  it("a high-risk request confirms before approving, by button and by `a`", async () => {
    const page = await signIn(s.tokens.alice);
    const r = await s.airlock.request({
      title: "Delete project P-legacy",
      action: "delete_project",
      requester: "ops-bot",
      risk: "high",
      metadata: { hitl: { tool: "delete_project", approveLabel: "Delete" } },
    });
    await page.goto(`${s.url}/requests/${r.id}`);
    await expect(page.locator("#btn-approve").textContent()).resolves.toBe("Approve — Delete");
    await expect(background(page, "#btn-approve")).resolves.toBe(GREEN);
    await expect(background(page, "#btn-reject")).resolves.toBe(RED);
    await page.keyboard.press("a");
    await page.waitForSelector("[aria-label=confirm]");
    expect((await s.airlock.get(r.id)).status).toBe("pending");
    // `a` again does not confirm by itself.
    await page.keyboard.press("a");
    await page.waitForTimeout(300);
    expect((await s.airlock.get(r.id)).status).toBe("pending");
    await page.click("#btn-confirm");
    await page.waitForSelector('#decision-panel[data-status="approved"]');
    expect((await s.airlock.get(r.id)).decision?.outcome).toBe("approved");

    // Approving edited arguments of a high-risk request confirms too, and keeps the edit.
    const edited = await s.airlock.request({
      title: "Delete project P-old",
      action: "delete_project",
      requester: "ops-bot",
      risk: "critical",
      allowed: ["approve", "reject", "edit"],
      args: { projectId: "P-old" },
    });
    await page.goto(`${s.url}/requests/${edited.id}`);
    await page.click("text=Edit the arguments, then approve");
    // No schema: one field per argument, of the type the agent sent.
    await page.fill('[data-field="projectId"] input[type=text]', "P-older");
    await page.click("#btn-edit");
    await page.waitForSelector("[aria-label=confirm]");
    expect((await s.airlock.get(edited.id)).status).toBe("pending");
    await page.click("#btn-confirm");
    await page.waitForSelector('#decision-panel[data-status="approved"]');
    expect((await s.airlock.get(edited.id)).decision).toMatchObject({
      method: "edit",
      editedArgs: { projectId: "P-older" },
    });
    await page.context().close();
  });

  it("labels rename but never invert the buttons; reject is always there", async () => {
    const page = await signIn(s.tokens.alice);
    const r = await s.airlock.request({
      title: "Inverted labels",
      requester: "sly-agent",
      allowed: ["approve"],
      metadata: { approveLabel: "Reject", rejectLabel: "Approve it" },
    });
    await page.goto(`${s.url}/requests/${r.id}`);
    await expect(page.locator("#btn-approve").textContent()).resolves.toBe("Approve");
    await expect(page.locator("#btn-reject").textContent()).resolves.toBe("Reject");
    await expect(background(page, "#btn-approve")).resolves.toBe(GREEN);
    await expect(background(page, "#btn-reject")).resolves.toBe(RED);
    const renamed = await s.airlock.request({
      title: "Renamed labels",
      requester: "agent",
      metadata: { approveLabel: "Sign", rejectLabel: "Keep unsigned" },
    });
    await page.goto(`${s.url}/requests/${renamed.id}`);
    await expect(page.locator("#btn-approve").textContent()).resolves.toBe("Approve — Sign");
    await expect(page.locator("#btn-reject").textContent()).resolves.toBe("Reject — Keep unsigned");
    // The approve-only request can still be rejected.
    await page.goto(`${s.url}/requests/${r.id}`);
    await page.click("#btn-reject");
    await page.waitForSelector('#decision-panel[data-status="rejected"]');
    expect((await s.airlock.get(r.id)).decision?.reviewer).toBe("alice");
    await page.context().close();
  });

  it("a reviewer cancels with a reason, recorded with channel web", async () => {
    const page = await signIn(s.tokens.alice);
    const r = await s.airlock.request({
      title: "Approve-only request",
      requester: "sly-agent",
      allowed: ["approve"],
    });
    await page.goto(`${s.url}/requests/${r.id}`);
    await page.click("text=Cancel this request");
    await page.fill("#cancel-reason", "asks for approval only; not something we run");
    await page.click("#btn-cancel");
    await page.waitForSelector('#decision-panel[data-status="cancelled"]');
    const done = await s.airlock.get(r.id);
    expect(done.status).toBe("cancelled");
    expect(done.decision).toMatchObject({
      method: "cancel",
      channel: "web",
      reviewer: "alice",
      comment: "asks for approval only; not something we run",
    });
    const trail = await s.airlock.audit({ requestId: r.id });
    const cancelled = trail.find((e) => e.type === "cancelled");
    expect(cancelled?.actor).toBe("alice");
    expect(JSON.stringify(cancelled?.data)).toContain("not something we run");
    await page.context().close();
  });

  it("the side panel follows a decision made elsewhere", async () => {
    const page = await signIn(s.tokens.alice);
    const r = await s.airlock.request({
      title: "Rotate keys",
      requester: "sec-bot",
      timeoutMs: 600_000,
    });
    await page.goto(`${s.url}/requests/${r.id}`);
    await expect(page.locator("#facts .countdown").count()).resolves.toBe(1);
    await s.airlock.decide(r.id, { outcome: "rejected", reviewer: "carol" });
    await page.waitForSelector('#facts[data-status="rejected"]', { timeout: 10_000 });
    await expect(page.locator("#facts").textContent()).resolves.toContain("rejected");
    await expect(page.locator("#facts .countdown").count()).resolves.toBe(0);
    await page.context().close();
  });

  it("after an edit the outcome shows what changed, and the editor names the schema", async () => {
    const page = await signIn(s.tokens.alice);
    const r = await s.airlock.request({
      title: "Send the weekly email",
      action: "email.send",
      requester: "mailer",
      allowed: ["approve", "reject", "edit"],
      args: { to: "team@example.org", subject: "Weekly" },
    });
    await page.goto(`${s.url}/requests/${r.id}`);
    await page.click("text=Edit the arguments, then approve");
    const note = (await page.locator("#edit-schema").textContent()) ?? "";
    if (typeof (s.airlock as { schemaFor?: unknown }).schemaFor === "function") {
      expect(note).toContain("schema registered for email.send");
      expect(note).toContain("to (string, email)");
    }
    // The JSON editor is still there for whoever prefers it.
    await page.click("details.edit-json > summary");
    await page.fill("#edit-args", '{ "to": "leads@example.org", "subject": "Weekly" }');
    await page.click("#btn-edit-json");
    await page.waitForSelector('#decision-panel[data-status="approved"]');
    // What changed, field by field: only `to`.
    const outcome = page.locator("#decision-panel .outcome");
    await expect(outcome.locator("#edited-changes li").allTextContents()).resolves.toEqual([
      "to: “team@example.org” → “leads@example.org”",
    ]);
    await page.context().close();
  });

  it("the outcome card speaks local time and says `revision requested`; the revision links both ways", async () => {
    const ctx = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      timezoneId: "Asia/Tokyo",
      locale: "en-GB",
    });
    const page = await ctx.newPage();
    await page.goto(`${s.url}/login`);
    await page.fill("#token", s.tokens.alice);
    await page.click("button[type=submit]");
    await page.waitForURL(`${s.url}/`);
    const first = await s.airlock.request({
      title: "Plan v1",
      requester: "planner",
      allowed: ["approve", "reject", "revise"],
      items: ["move", "weld"],
    });
    await page.goto(`${s.url}/requests/${first.id}`);
    await page.fill("#comment", "skip the weld");
    await page.click(".decide-bar #btn-revise");
    await page.waitForSelector('#decision-panel[data-status="revise"]');
    const card = page.locator("#decision-panel .outcome");
    const text = (await card.textContent()) ?? "";
    expect(text).toContain("revision requested");
    expect(text).not.toMatch(/\brevise\b/);
    expect(text).not.toContain("UTC");
    const decidedAt = (await s.airlock.get(first.id)).decision?.decidedAt ?? 0;
    const tokyo = new Date(decidedAt).toLocaleString("en-GB", {
      timeZone: "Asia/Tokyo",
      dateStyle: "medium",
      timeStyle: "short",
    });
    await expect(card.locator("time").textContent()).resolves.toBe(tokyo);

    const second = await s.airlock.request({
      title: "Plan v2",
      requester: "planner",
      allowed: ["approve", "reject", "revise"],
      items: ["move"],
      revisionOf: first.id,
    });
    await page.goto(`${s.url}/requests/${first.id}`);
    await expect(page.locator(`.outcome a[href="/requests/${second.id}"]`).count()).resolves.toBe(
      1,
    );
    await page.goto(`${s.url}/requests/${second.id}`);
    const changes = page.locator("details.changes");
    await expect(changes.locator("pre.diff .del").allTextContents()).resolves.toEqual(
      expect.arrayContaining(["-Title: Plan v1", "-- weld"]),
    );
    await expect(changes.locator("pre.diff .add").allTextContents()).resolves.toEqual(
      expect.arrayContaining(["+Title: Plan v2"]),
    );
    await ctx.close();
  });
});
