// Learned trust in the inbox, in Debian's chromium: a suggested rule appears after N approvals by
// people and auto-approves the next identical call once an admin accepts it, and not before; a call
// with another args shape still waits; reviewers who are not admins see no Accept nor Revoke; a
// revoked rule stops applying.
import { existsSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { createLearnedTrust } from "../../src/policy/learned-trust.js";
import { type AirlockServer, createServer } from "../../src/server/server.js";
import { createToken, memoryTokenStore } from "../../src/server/tokens.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import { call } from "../server/helpers.js";

const CHROMIUM = "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && process.env.AIRLOCK_REQUIRE_BROWSER === "1") {
  throw new Error(
    `${CHROMIUM} is missing and AIRLOCK_REQUIRE_BROWSER=1: install Debian's chromium`,
  );
}

const THRESHOLD = 3;
const deploy = (service: string, extra: Record<string, unknown> = {}) => ({
  title: `deploy ${service}`,
  action: "deploy",
  args: { service, replicas: 2, ...extra },
});

describe.skipIf(!haveBrowser)("learned trust in the inbox (chromium)", () => {
  const t = tempDir("airlock-trust-browser-");
  let airlock: Airlock;
  let server: AirlockServer;
  let browser: Browser;
  let url = "";
  const tok = { agent: "", alice: "", admin: "" };

  beforeAll(async () => {
    const store = sqliteStore(join(t.dir, "airlock.db"));
    const trust = createLearnedTrust({ store, threshold: THRESHOLD });
    airlock = await createAirlock({
      store,
      policy: trust.policy,
      logger: pino({ level: "silent" }),
    });
    const tokens = memoryTokenStore();
    tok.agent = (await createToken(tokens, { name: "bot", roles: ["agent"] })).token;
    tok.alice = (await createToken(tokens, { name: "alice", roles: ["reviewer"] })).token;
    tok.admin = (await createToken(tokens, { name: "root", roles: ["admin"] })).token;
    server = createServer({
      airlock,
      auth: { tokens },
      rateLimit: false,
      trust,
      heartbeatMs: 500,
      shutdownGraceMs: 200,
    });
    url = (await server.listen({ port: 0, host: "127.0.0.1" })).url;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await airlock?.close();
    t.cleanup();
  });

  async function signIn(token: string): Promise<Page> {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    await page.goto(`${url}/login`);
    await page.fill("#token", token);
    await page.click("button[type=submit]");
    await page.waitForURL(`${url}/`);
    return page;
  }

  /** The agent's call over HTTP, as an agent makes it. */
  async function ask(body: ReturnType<typeof deploy>) {
    const r = await call(url, tok.agent, "POST", "/v1/requests", body);
    expect(r.status).toBe(201);
    return r.body as { id: string; status: string; decision?: { comment?: string } };
  }

  it("a suggested rule appears after N approvals and auto-approves the next identical call after it is accepted, and not before", async () => {
    const approvedIds: string[] = [];
    for (const service of ["api", "web", "worker"]) {
      const r = await ask(deploy(service));
      expect(r.status).toBe("pending");
      await airlock.decide(r.id, { outcome: "approved", reviewer: "alice" });
      approvedIds.push(r.id);
    }

    // Suggested now, not accepted yet: the next identical call still waits for a person.
    const before = await ask(deploy("cron"));
    expect(before.status).toBe("pending");

    // The admin's queue says a rule is suggested, and leads to it.
    const admin = await signIn(tok.admin);
    await expect(admin.locator("#trust-hint").textContent()).resolves.toContain("1 suggested rule");
    await admin.click("#trust-hint a[href='/inbox/trust']");
    await admin.waitForURL(`${url}/inbox/trust`);
    const suggestion = admin.locator("#suggested-rules li.trust-suggestion[data-action=deploy]");
    await expect(suggestion.count()).resolves.toBe(1);
    const text = await suggestion.textContent();
    expect(text).toContain('{"replicas":number,"service":string}');
    expect(text).toMatch(/3\s+times in a row/);
    // The distinct people behind the run, and what the rule would approve.
    await expect(suggestion.locator(".trust-reviewers").textContent()).resolves.toMatch(
      /1\s+person: alice/,
    );
    await expect(suggestion.locator(".trust-requesters").textContent()).resolves.toContain("bot");
    await expect(
      suggestion.locator('.trust-value[data-path="/args/service"]').textContent(),
    ).resolves.toContain('one of "api", "web", "worker"');
    // What it would have covered: the three approved calls.
    await suggestion.locator("details summary").click();
    const covered = await suggestion
      .locator("details a")
      .evaluateAll((els) => els.map((el) => el.getAttribute("href")));
    expect(new Set(covered)).toEqual(new Set(approvedIds.map((id) => `/requests/${id}`)));
    await expect(admin.locator("#active-rules li.trust-rule").count()).resolves.toBe(0);

    await suggestion.locator("button", { hasText: "Accept rule" }).click();
    await admin.waitForURL(/\/inbox\/trust\?accepted=trust_/);
    await expect(admin.locator(".notice").textContent()).resolves.toContain("accepted");
    await expect(admin.locator("#suggested-rules li.trust-suggestion").count()).resolves.toBe(0);
    const ruleItem = admin.locator("#active-rules li.trust-rule");
    await expect(ruleItem.count()).resolves.toBe(1);
    const ruleId = (await ruleItem.getAttribute("data-rule-id")) ?? "";
    expect(ruleId).toMatch(/^trust_/);

    // After: the next identical call is approved at once, naming the rule.
    // A service people approved: within the values the rule learned.
    const after = await ask(deploy("web"));
    expect(after.status).toBe("approved");
    expect(after.decision?.comment).toBe(`learned trust rule ${ruleId} (deploy, 3 approvals)`);
    // The call left waiting before is still waiting: a rule applies to new calls only.
    expect((await airlock.get(before.id)).status).toBe("pending");
    // Another args shape is not covered.
    expect((await ask(deploy("search", { force: true }))).status).toBe("pending");

    // A reviewer who is not an admin sees the rule, but no suggestions, Accept or Revoke, and
    // cannot post the form either.
    const alice = await signIn(tok.alice);
    await expect(alice.locator("#trust-hint").count()).resolves.toBe(0);
    await alice.click("nav a[href='/inbox/trust']");
    await alice.waitForURL(`${url}/inbox/trust`);
    await alice.goto(`${url}/inbox/trust`);
    await expect(alice.locator("#active-rules li.trust-rule").count()).resolves.toBe(1);
    await expect(alice.locator("#suggested-rules").count()).resolves.toBe(0);
    await expect(alice.locator("button", { hasText: /Accept|Revoke/ }).count()).resolves.toBe(0);
    const forged = await alice.evaluate(async (id) => {
      const csrf = (document.querySelector("input[name=_csrf]") as HTMLInputElement).value;
      const body = new URLSearchParams({ _csrf: csrf, id });
      const res = await fetch("/inbox/trust/revoke", { method: "POST", body });
      return res.status;
    }, ruleId);
    expect(forged).toBe(403);
    await expect(alice.locator("#active-rules li.trust-rule").count()).resolves.toBe(1);
    await alice.context().close();

    // Revoked: the next identical call waits for a person again.
    await ruleItem.locator("button", { hasText: "Revoke" }).click();
    await admin.waitForURL(/\/inbox\/trust\?revoked=trust_/);
    await expect(admin.locator("#active-rules li.trust-rule").count()).resolves.toBe(0);
    expect((await ask(deploy("web"))).status).toBe("pending");

    const kinds = (await airlock.audit({}))
      .filter((e) => e.requestId === undefined)
      .map((e) => [e.actor, e.data.kind]);
    expect(kinds).toEqual([
      ["root", "trust_rule_accepted"],
      ["root", "trust_rule_revoked"],
    ]);
    await admin.context().close();
  });
});
