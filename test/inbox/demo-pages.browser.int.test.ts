// The five demo agents' requests as a reviewer sees them, in Debian's chromium at desktop and phone
// width: no page scrolls sideways, and the decision (title, risk, countdown, the buttons) is in the
// first screen. The agents are the real examples, started as `airlock serve --demo` starts them.
// Then two of them decided as a reviewer would (issue 33): pattern 4's file write edited as text,
// with the diff of what will be written; pattern 5's questions answered, the agent's plan for the
// answers approved, and its report growing live on the page, quoting the answer.
// AIRLOCK_SCREENSHOTS=1 writes the screenshots to docs/; otherwise to the test's temporary folder.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoPolicy } from "../../examples/index.js";
import { type DemoAgents, startDemoAgents } from "../../src/cli/demo.js";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { type AirlockServer, createServer } from "../../src/server/index.js";
import { memoryTokenStore } from "../../src/server/tokens.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";

const CHROMIUM = "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && process.env.AIRLOCK_REQUIRE_BROWSER === "1") {
  throw new Error(
    `${CHROMIUM} is missing and AIRLOCK_REQUIRE_BROWSER=1: install Debian's chromium`,
  );
}
let DOCS: URL;

/** The five patterns' gates, by action. */
const PATTERNS: Record<string, string> = {
  "research.search": "research-reflection",
  "robot.execute_plan": "robot-plan",
  "files.write": "file-approval",
  "files.delete": "file-approval",
  "research.execute_plan": "research-two-phase",
};

describe.skipIf(!haveBrowser)("the demo requests in chromium", () => {
  let airlock: Airlock;
  let server: AirlockServer;
  let demo: DemoAgents;
  let base: string;
  let browser: Browser;
  let cleanup: () => void;
  let pending: ApprovalRequest[] = [];

  beforeAll(async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    DOCS =
      process.env.AIRLOCK_SCREENSHOTS === "1"
        ? new URL("../../docs/", import.meta.url)
        : new URL(`file://${t.dir}/shots/`);
    airlock = await createAirlock({
      store: sqliteStore(join(t.dir, "airlock.db")),
      policy: demoPolicy(),
    });
    const tokens = memoryTokenStore();
    server = createServer({ airlock, auth: { tokens }, heartbeatMs: 1000, shutdownGraceMs: 200 });
    base = (await server.listen({ port: 0, host: "127.0.0.1" })).url.replace(/\/$/, "");
    demo = await startDemoAgents({ url: base, tokens, print: () => {} });
    // Each of the five agents opens one gate (the hitl tools one per tool call that needs a person).
    for (let i = 0; i < 200; i++) {
      pending = (await airlock.list({ status: "pending", limit: 100 })).items;
      const kinds = new Set(pending.map((r) => PATTERNS[r.action] ?? "hitl-tools"));
      if (kinds.size >= 5) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await demo?.stop();
    await server?.close();
    await airlock?.close();
    cleanup?.();
  });

  async function signedIn(width: number, height: number): Promise<Page> {
    const ctx = await browser.newContext({ viewport: { width, height } });
    const page = await ctx.newPage();
    await page.goto(`${base}/login`);
    await page.fill("#token", demo.reviewerToken);
    await page.click("button[type=submit]");
    await page.waitForURL(`${base}/`);
    return page;
  }

  it("has a pending request from each of the five patterns", () => {
    const kinds = new Set(pending.map((r) => PATTERNS[r.action] ?? "hitl-tools"));
    expect([...kinds].sort()).toEqual([
      "file-approval",
      "hitl-tools",
      "research-reflection",
      "research-two-phase",
      "robot-plan",
    ]);
  });

  for (const [width, height] of [
    [1280, 900],
    [390, 844],
  ] as const) {
    it(`never scrolls sideways and shows the buttons in the first screen at ${width} px`, async () => {
      const page = await signedIn(width, height);
      mkdirSync(DOCS, { recursive: true });
      const seen = new Set<string>();
      const problems: string[] = [];
      for (const r of pending) {
        const kind = PATTERNS[r.action] ?? "hitl-tools";
        await page.goto(`${base}/requests/${r.id}`);
        await page.waitForSelector("#decision-panel");
        const m = await page.evaluate(() => {
          const b = document.getElementById("btn-approve")?.getBoundingClientRect();
          return {
            scrollWidth: document.documentElement.scrollWidth,
            innerWidth: window.innerWidth,
            approveTop: b ? b.top : null,
            approveBottom: b ? b.bottom : null,
            innerHeight: window.innerHeight,
          };
        });
        if (m.scrollWidth > m.innerWidth) {
          problems.push(`${kind} ${r.id}: ${m.scrollWidth} px wide in a ${m.innerWidth} px window`);
        }
        if (m.approveTop === null || m.approveBottom === null) {
          problems.push(`${kind} ${r.id}: no approve button`);
        } else if (m.approveTop < 0 || m.approveBottom > m.innerHeight) {
          problems.push(`${kind} ${r.id}: approve button at y=${m.approveTop}`);
        }
        if (!seen.has(kind)) {
          seen.add(kind);
          await page.screenshot({
            path: new URL(`inbox-${kind}-${width}.png`, DOCS).pathname,
            fullPage: false,
          });
        }
      }
      // The queue and the metrics page fit too.
      for (const path of ["/", "/dashboard?window=week"]) {
        await page.goto(`${base}${path}`);
        const wide = await page.evaluate(() => document.documentElement.scrollWidth);
        if (wide > width) problems.push(`${path}: ${wide} px wide in a ${width} px window`);
        await page.screenshot({
          path: new URL(`inbox-${path === "/" ? "queue" : "dashboard"}-${width}.png`, DOCS)
            .pathname,
        });
      }
      expect(problems).toEqual([]);
      await page.context().close();
    }, 60_000);
  }

  it("shows pattern 1's main question, estimates and critiques, and each item once", async () => {
    const r = pending.find((x) => x.action === "research.search");
    expect(r).toBeDefined();
    if (!r) return;
    const page = await signedIn(1280, 900);
    await page.goto(`${base}/requests/${r.id}`);
    const main = page.locator("#decision-panel");
    const text = (await main.textContent()) ?? "";
    expect(text).toContain(String(r.metadata.mainQuery));
    expect(text).toMatch(/about \d+ min/);
    expect(text).toMatch(/\$\d/);
    const research = r.metadata.research as { critiques: { issue: string }[] };
    for (const c of research.critiques) expect(text).toContain(c.issue);
    // The items are checkboxes, once; the exact arguments (what runs, which may hold them too) are
    // shown apart, as such.
    const first = r.items[0]?.label ?? "";
    const visibleCount = await page.evaluate((label) => {
      let n = 0;
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const el = node.parentElement;
        if (el?.closest("details.args")) continue;
        if (el?.checkVisibility() && node.textContent?.includes(label)) n++;
      }
      return n;
    }, first);
    expect(visibleCount).toBe(1);
    await expect(page.locator("details.args summary").textContent()).resolves.toContain(
      "Exact arguments",
    );
    await page.context().close();
  });

  /** Presses approve on the request page, and confirms when the page asks first. */
  async function approveOnPage(page: Page, button = "#btn-approve"): Promise<void> {
    await page.click(button);
    await page.waitForSelector('#decision-panel[data-status="approved"], [aria-label=confirm]');
    if ((await page.locator("[aria-label=confirm]").count()) > 0) await page.click("#btn-confirm");
    await page.waitForSelector('#decision-panel[data-status="approved"]');
  }

  it("pattern 4: the file write is edited as text, and the outcome shows the diff of what will be written", async () => {
    const r = pending.find((x) => x.action === "files.write");
    expect(r).toBeDefined();
    if (!r) return;
    const page = await signedIn(1366, 768);
    await page.goto(`${base}/requests/${r.id}`);
    await page.click("details#edit > summary");
    const content = page.locator('[data-field="content"] textarea');
    const before = await content.inputValue();
    expect(before).toBe(String(r.args.content));
    expect(before).not.toContain("\\n");
    await content.fill(`${before.replace(/\n$/, "")}\nEdited by the reviewer.\n`);
    await approveOnPage(page, "#btn-edit");
    const changes = page.locator("#edited-changes");
    await expect(changes.textContent()).resolves.toContain("what will be written to");
    await expect(changes.locator("pre.diff span.add").allTextContents()).resolves.toContain(
      "+Edited by the reviewer.",
    );
    await page.context().close();
  });

  it("pattern 5: the reviewer answers the questions, the agent plans for the answers, and its report grows on the page", async () => {
    const r = pending.find((x) => x.action === "research.execute_plan");
    expect(r).toBeDefined();
    if (!r) return;
    const page = await signedIn(1366, 768);
    await page.goto(`${base}/requests/${r.id}`);
    let planId = r.id;
    // The demo plan asks clarifying questions, so it may be answered.
    await expect(page.locator("#respond-form").count()).resolves.toBe(1);
    {
      // One field per clarifying question, titled with it; one answer is enough.
      await page
        .locator('#respond-form [data-field="answer_1"] :is(input, textarea)')
        .fill("Embedded use only: SQLite");
      await page.click("#btn-respond");
      await page.waitForSelector('#decision-panel[data-status="responded"]');
      // The agent plans again for the answer and asks for approval of that plan.
      let next: ApprovalRequest | undefined;
      for (let i = 0; i < 300 && !next; i++) {
        next = (await airlock.list({ status: "pending", limit: 100 })).items.find(
          (x) => x.revisionOf === r.id,
        );
        if (!next) await new Promise((done) => setTimeout(done, 100));
      }
      expect(next).toBeDefined();
      if (!next) return;
      planId = next.id;
      await page.goto(`${base}/requests/${planId}`);
    }
    await approveOnPage(page);
    // Phase B runs: the report shows and grows without a reload, then the run ends.
    const report = page.locator("#live-report");
    await expect
      .poll(() => report.getAttribute("data-state"), { timeout: 60_000 })
      .toBe("completed");
    const text = (await report.locator(".markdown").textContent()) ?? "";
    expect(text).toContain("Research report");
    // The agent used the answer: its report quotes it.
    expect(text).toContain("Embedded use only: SQLite");
    await expect(report.locator("#latest-calls li").count()).resolves.toBe(3);
    // The trail folds the run's raw events.
    await expect(page.locator("#trail li.progress-run").count()).resolves.toBeGreaterThan(0);
    await page.screenshot({
      path: new URL("inbox-research-two-phase-report-1366.png", DOCS).pathname,
      fullPage: true,
    });
    await page.context().close();
  }, 90_000);
});
