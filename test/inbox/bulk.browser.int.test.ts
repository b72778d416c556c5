// Bulk review in the inbox, in Debian's chromium: many pending requests selected and decided at once,
// each on its own; the result page names exactly those someone else decided first; shift-click
// ranges, "all matching this filter" (only what the page showed), the confirmation on what will run
// (every bulk approval shows each request's view first and is bound to it), grouping, the queue's
// keys, and phone width.
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { viewDigestOf } from "../../src/core/review-view.js";
import { startTestServer, type TestServer } from "../server/helpers.js";

const CHROMIUM = "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && process.env.AIRLOCK_REQUIRE_BROWSER === "1") {
  throw new Error(
    `${CHROMIUM} is missing and AIRLOCK_REQUIRE_BROWSER=1: install Debian's chromium`,
  );
}

describe.skipIf(!haveBrowser)("bulk review in the inbox (chromium)", () => {
  let s: TestServer;
  let browser: Browser;

  beforeAll(async () => {
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

  async function gates(action: string, n: number, requester = "bot"): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push((await s.airlock.request({ title: `${action} #${i}`, action, requester })).id);
    }
    return ids;
  }

  const listed = (page: Page, selector: string) =>
    page
      .locator(`${selector} li[data-request-id]`)
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-request-id")));

  it("approves 50 at once and reports exactly the 3 someone else decided meanwhile", async () => {
    const ids = await gates("bulk.notify", 50);
    const page = await signIn(s.tokens.alice);
    await page.goto(`${s.url}/?action=bulk.notify`);
    await expect(page.locator("#queue input.pick").count()).resolves.toBe(50);
    await page.click("#pick-shown");
    await expect(page.locator("#picked-count").textContent()).resolves.toBe("50 selected");

    // Meanwhile bob decides three of them through the engine.
    const raced = [ids[3], ids[17], ids[41]] as string[];
    for (const id of raced) {
      await s.airlock.decide(id, { outcome: "rejected", reviewer: "bob", comment: "mine" });
    }
    // The live queue drops them, and the selection keeps them.
    await expect.poll(() => page.locator("#queue tr.row").count(), { timeout: 10_000 }).toBe(47);
    await expect(page.locator("#picked-count").textContent()).resolves.toBe("50 selected");

    await page.fill("#bulk-comment", "release train 12");
    await page.click("#bulk-approve");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    // First what each would run (the 47 still pending), then the approval.
    await expect(page.locator("h1").textContent()).resolves.toBe("Approve 47 requests?");
    await expect(page.locator("#bulk-views li[data-request-id]").count()).resolves.toBe(47);
    await page.click("#bulk-confirm-all");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    await expect(page.locator("h1").textContent()).resolves.toMatch(/Approved 47 of 50/);
    expect(new Set(await listed(page, "#bulk-first"))).toEqual(new Set(raced));
    await expect(page.locator("#bulk-first").textContent()).resolves.toContain("rejected by bob");
    expect(new Set(await listed(page, "#bulk-decided"))).toEqual(
      new Set(ids.filter((id) => !raced.includes(id))),
    );
    await expect(page.locator("#bulk-failed").count()).resolves.toBe(0);

    for (const id of ids) {
      const r = await s.airlock.get(id);
      if (raced.includes(id)) {
        expect(r.decision).toMatchObject({ outcome: "rejected", reviewer: "bob" });
      } else {
        expect(r.decision).toMatchObject({
          outcome: "approved",
          reviewer: "alice",
          channel: "web",
          comment: "release train 12",
          // Bound to the view the confirmation showed.
          viewDigest: viewDigestOf(r),
        });
        const events = await s.airlock.audit({ requestId: id });
        expect(events.filter((e) => e.type === "decided")).toHaveLength(1);
      }
    }
    await page.context().close();
  });

  it("keys: j/k move, x selects, a approves the selection, ? shows the keys, d opens details", async () => {
    const ids = await gates("kbd.test", 4);
    const page = await signIn(s.tokens.alice);
    await page.goto(`${s.url}/?action=kbd.test&sort=newest`);
    const order = await page
      .locator("#queue tr.row")
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-request-id")));
    expect(new Set(order)).toEqual(new Set(ids));
    const focusedId = () => page.locator("#queue tr.row.focused").getAttribute("data-request-id");

    await page.keyboard.press("j");
    await expect(focusedId()).resolves.toBe(order[0]);
    await page.keyboard.press("j");
    await page.keyboard.press("j");
    await expect(focusedId()).resolves.toBe(order[2]);
    await page.keyboard.press("k");
    await expect(focusedId()).resolves.toBe(order[1]);
    await page.keyboard.press("x");
    await page.keyboard.press("k");
    await page.keyboard.press("x");
    await expect(page.locator("#queue input.pick:checked").count()).resolves.toBe(2);
    await page.keyboard.press("x"); // unselects
    await page.keyboard.press("j");
    await page.keyboard.press("j");
    await page.keyboard.press("x");
    const chosen = [order[1], order[2]] as string[];
    await expect(
      page
        .locator("#queue input.pick:checked")
        .evaluateAll((els) => els.map((el) => (el as HTMLInputElement).value)),
    ).resolves.toEqual(chosen);

    await page.keyboard.press("?");
    await expect(page.locator("#keys-help").isVisible()).resolves.toBe(true);
    await expect(page.locator("#keys-help").textContent()).resolves.toContain("approve");
    await page.keyboard.press("Escape");
    await expect(page.locator("#keys-help").isVisible()).resolves.toBe(false);

    await page.keyboard.press("a");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    await page.click("#bulk-confirm-all");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    expect(new Set(await listed(page, "#bulk-decided"))).toEqual(new Set(chosen));
    for (const id of ids) {
      expect((await s.airlock.get(id)).status).toBe(chosen.includes(id) ? "approved" : "pending");
    }

    // Nothing selected: `r` rejects the request under the cursor; `d` opens one.
    await page.goto(`${s.url}/?action=kbd.test&sort=newest`);
    const left = await page
      .locator("#queue tr.row")
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-request-id")));
    expect(left).toHaveLength(2);
    await page.keyboard.press("j");
    await page.keyboard.press("r");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    expect(await listed(page, "#bulk-decided")).toEqual([left[0]]);
    expect((await s.airlock.get(left[0] as string)).status).toBe("rejected");
    await page.goto(`${s.url}/?action=kbd.test&sort=newest`);
    await page.keyboard.press("j");
    await page.keyboard.press("d");
    await page.waitForURL(`${s.url}/requests/${left[1]}`);
    await page.context().close();
  });

  it("shift-click selects a range; own requests have no checkbox; grouping puts gates side by side", async () => {
    await gates("range.a", 3, "bot");
    await gates("range.a", 3, "bot2");
    const own = await s.airlock.request({
      title: "alice's own",
      action: "range.a",
      requester: "alice",
    });
    const page = await signIn(s.tokens.alice);
    await page.goto(`${s.url}/?action=range.a&group=requester`);
    const heads = await page.locator("#queue tr.group-head").allTextContents();
    expect(heads.map((h) => h.replace(/\s+/g, " ").trim()).sort()).toEqual([
      "requester: alice (1)",
      "requester: bot (3)",
      "requester: bot2 (3)",
    ]);
    // Each group's rows follow its heading.
    const byRow = await page
      .locator("#queue tbody tr")
      .evaluateAll((els) =>
        els.map((el) =>
          el.classList.contains("group-head")
            ? `# ${el.textContent?.split(":")[1]?.trim().split(" ")[0]}`
            : (el.querySelector("td[data-label=Requester]")?.textContent ?? ""),
        ),
      );
    let group = "";
    for (const cell of byRow) {
      if (cell.startsWith("# ")) group = cell.slice(2);
      else expect(cell).toBe(group);
    }
    await expect(page.locator(`tr[data-request-id="${own.id}"] input.pick`).count()).resolves.toBe(
      0,
    );

    const boxes = page.locator("#queue input.pick");
    await expect(boxes.count()).resolves.toBe(6);
    await boxes.nth(0).click();
    await boxes.nth(4).click({ modifiers: ["Shift"] });
    await expect(page.locator("#queue input.pick:checked").count()).resolves.toBe(5);
    await expect(page.locator("#picked-count").textContent()).resolves.toBe("5 selected");
    // Shift-click on a ticked box unticks the range from the last one clicked.
    await boxes.nth(2).click({ modifiers: ["Shift"] });
    await expect(page.locator("#queue input.pick:checked").count()).resolves.toBe(2);
    await page.context().close();
  });

  it("“all matching this filter” decides every pending match, not only the rows shown", async () => {
    const match = await gates("filter.match", 5);
    const other = await gates("filter.other", 2);
    const page = await signIn(s.tokens.alice);
    await page.goto(`${s.url}/?action=filter.match&q=%232`);
    // The search narrows what is shown to one row; the filter itself is action + search.
    await expect(page.locator("#queue tr.row").count()).resolves.toBe(1);
    await page.goto(`${s.url}/?action=filter.match`);
    await page.check("#scope-filter");
    await expect(page.locator("#picked-count").textContent()).resolves.toContain(
      "matching this filter",
    );
    await page.fill("#bulk-comment", "not this week");
    await page.click("#bulk-reject");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    expect(new Set(await listed(page, "#bulk-decided"))).toEqual(new Set(match));
    for (const id of match) expect((await s.airlock.get(id)).status).toBe("rejected");
    for (const id of other) expect((await s.airlock.get(id)).status).toBe("pending");

    // Without a selection nothing is decided, and the page says what to do.
    await page.goto(`${s.url}/`);
    await page.click("#bulk-approve");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    await expect(page.locator(".error").textContent()).resolves.toContain("Select at least one");
    for (const id of other) expect((await s.airlock.get(id)).status).toBe("pending");
    await page.context().close();
  });

  it("approving a high-risk request in bulk asks first: all, or all but the risky ones", async () => {
    const plain = await gates("risk.mix", 2);
    const risky = await s.airlock.request({
      title: "Drop table users",
      action: "risk.mix",
      requester: "bot",
      risk: "high",
    });
    const page = await signIn(s.tokens.alice);
    await page.goto(`${s.url}/?action=risk.mix`);
    await page.click("#pick-shown");
    await page.fill("#bulk-comment", "checked");
    await page.click("#bulk-approve");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    expect(await listed(page, "#bulk-risky")).toEqual([risky.id]);
    await expect(page.locator("#bulk-risky").textContent()).resolves.toContain("high risk");
    for (const id of [...plain, risky.id]) expect((await s.airlock.get(id)).status).toBe("pending");
    await page.click("#bulk-confirm-safe");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    expect(new Set(await listed(page, "#bulk-decided"))).toEqual(new Set(plain));
    expect((await s.airlock.get(risky.id)).status).toBe("pending");
    expect((await s.airlock.get(plain[0] as string)).decision?.comment).toBe("checked");

    await page.goto(`${s.url}/?action=risk.mix`);
    await page.keyboard.press("j");
    await page.keyboard.press("a");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    await page.click("#bulk-confirm-all");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    expect(await listed(page, "#bulk-decided")).toEqual([risky.id]);
    expect((await s.airlock.get(risky.id)).status).toBe("approved");
    await page.context().close();
  });

  it("“all matching” decides what the page showed: one created after it stays pending and is listed", async () => {
    const shown = await gates("shown.late", 3);
    const page = await signIn(s.tokens.alice);
    // As on a page whose live refresh has not come yet: the queue's rows are not read again.
    await page.route(/\/inbox\/queue/, (route) => route.abort());
    await page.goto(`${s.url}/?action=shown.late`);
    await page.check("#scope-filter");
    const said = await page.locator("#picked-count").textContent();
    const late = await s.airlock.request({
      title: "late #3",
      action: "shown.late",
      requester: "bot",
    });
    await page.click("#bulk-reject");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    expect((await s.airlock.get(late.id)).status).toBe("pending");
    expect(said).toBe("All 3 pending requests matching this filter");
    expect(new Set(await listed(page, "#bulk-decided"))).toEqual(new Set(shown));
    expect(await listed(page, "#bulk-left")).toEqual([late.id]);
    await expect(page.locator("#bulk-left").textContent()).resolves.toContain(
      "new since the page was shown",
    );
    await expect(page.locator(".error").textContent()).resolves.toContain(
      "1 you were not shown now match",
    );
    for (const id of shown) expect((await s.airlock.get(id)).status).toBe("rejected");
    expect((await s.airlock.get(late.id)).status).toBe("pending");

    // With live updates on, the count the form stands for follows the rows.
    await page.unroute(/\/inbox\/queue/);
    await page.goto(`${s.url}/?action=shown.late`);
    await expect(page.locator("#match-count").textContent()).resolves.toBe("1");
    await s.airlock.request({ title: "later #4", action: "shown.late", requester: "bot" });
    await expect
      .poll(() => page.locator("#match-count").textContent(), { timeout: 10_000 })
      .toBe("2");
    await page.context().close();
  });

  it("bulk approval asks first on what will run: DELETE FROM customers under db.maintenance, risk low", async () => {
    const plain = await s.airlock.request({
      title: "Vacuum sessions",
      action: "db.maintenance",
      requester: "bot",
      risk: "low",
      args: { sql: "VACUUM sessions" },
    });
    const wipe = await s.airlock.request({
      title: "Routine cleanup",
      action: "db.maintenance",
      requester: "bot",
      risk: "low",
      args: { sql: "DELETE FROM customers" },
    });
    const page = await signIn(s.tokens.alice);
    await page.goto(`${s.url}/?action=db.maintenance`);
    await page.click("#pick-shown");
    await page.click("#bulk-approve");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    expect(await listed(page, "#bulk-risky")).toEqual([wipe.id]);
    await expect(page.locator("#bulk-risky").textContent()).resolves.toContain(
      "args.sql: SQL DELETE FROM customers without WHERE (deletes every row)",
    );
    for (const r of [plain, wipe]) expect((await s.airlock.get(r.id)).status).toBe("pending");
    await page.click("#bulk-confirm-safe");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    expect(await listed(page, "#bulk-decided")).toEqual([plain.id]);
    expect(await listed(page, "#bulk-left")).toEqual([wipe.id]);
    expect((await s.airlock.get(plain.id)).status).toBe("approved");
    expect((await s.airlock.get(wipe.id)).status).toBe("pending");
    await page.context().close();
  });

  it("approving “all matching” says so and counts them, and names each request it means", async () => {
    const ids = await gates("scope.count", 4);
    const page = await signIn(s.tokens.alice);
    await page.goto(`${s.url}/?action=scope.count`);
    await page.check("#scope-filter");
    await page.click("#bulk-approve");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    await expect(page.locator("h1").textContent()).resolves.toBe(
      "Approve all 4 pending requests matching this filter?",
    );
    await expect(page.locator("#bulk-scope").textContent()).resolves.toContain(
      "the 4 pending requests the inbox showed you for action scope.count",
    );
    const named = await page.locator("#bulk-views li[data-request-id] > a").allTextContents();
    expect(named.sort()).toEqual([
      "scope.count #0",
      "scope.count #1",
      "scope.count #2",
      "scope.count #3",
    ]);
    for (const id of ids) expect((await s.airlock.get(id)).status).toBe("pending");
    await page.click("#bulk-confirm-all");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    for (const id of ids) expect((await s.airlock.get(id)).status).toBe("approved");
    await page.context().close();
  });

  it("refuses a bulk form without the session's CSRF token", async () => {
    const [id] = await gates("csrf.bulk", 1);
    const page = await signIn(s.tokens.alice);
    const forged = await page.request.post(`${s.url}/inbox/decisions`, {
      form: { action: "approve", ids: id as string, _csrf: "forged" },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    expect((await s.airlock.get(id as string)).status).toBe("pending");
    await page.context().close();
  });

  it("works at 390 px: no horizontal scroll on the queue, the keys or the result page", async () => {
    await gates("phone.width.with.a.rather.long.action.name", 4);
    const page = await signIn(s.tokens.alice, 390);
    const fits = async () => {
      const w = await page.evaluate(() => ({
        doc: document.documentElement.scrollWidth,
        body: document.body.scrollWidth,
      }));
      expect(w.doc).toBeLessThanOrEqual(390);
      expect(w.body).toBeLessThanOrEqual(390);
    };
    await page.goto(`${s.url}/?action=phone.width.with.a.rather.long.action.name&group=action`);
    await expect(page.locator("#queue input.pick").count()).resolves.toBe(4);
    await fits();
    await expect(page.locator("#bulk-approve").isVisible()).resolves.toBe(true);
    await page.keyboard.press("?");
    await fits();
    await page.keyboard.press("Escape");
    await page.locator("#queue input.pick").first().click();
    await page.click("#bulk-approve");
    await page.waitForURL(`${s.url}/inbox/decisions`);
    await fits();
    await page.context().close();
  });
});
