// Learned trust's scope over real HTTP (issue 31, finding 2): after five approvals of `ls -la` by
// two people, the suggestion and the rule name them; the attack (another agent, `rm -rf /`,
// risk critical, other approvers, quorum 3) waits for a person while the same call is approved; a
// field that took too many values needs the admin to widen it (422 otherwise), and a widening is in
// the audit log.
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAirlock } from "../../src/engine/engine.js";
import { argsShapeHash } from "../../src/policy/args-shape.js";
import { createLearnedTrust } from "../../src/policy/learned-trust.js";
import { type AirlockServer, createServer } from "../../src/server/server.js";
import { createToken, memoryTokenStore } from "../../src/server/tokens.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import { call, type Reply } from "./helpers.js";

const shell = (cmd: string, extra: Record<string, unknown> = {}) => ({
  title: `run ${cmd}`,
  action: "shell.exec",
  args: { cmd },
  ...extra,
});
const SHAPE = argsShapeHash({ cmd: "" });

describe("/v1/trust scopes over HTTP", () => {
  const t = tempDir("airlock-trust-scope-");
  let server: AirlockServer;
  let close: () => Promise<void>;
  let url: string;
  const tok = { bot: "", bot2: "", alice: "", bob: "", admin: "" };
  const as = (token: string, method: string, path: string, body?: unknown): Promise<Reply> =>
    call(url, token, method, path, body);

  beforeAll(async () => {
    const store = sqliteStore(join(t.dir, "airlock.db"));
    const trust = createLearnedTrust({ store, threshold: 5 });
    const airlock = await createAirlock({
      store,
      policy: trust.policy,
      logger: pino({ level: "silent" }),
    });
    const tokens = memoryTokenStore();
    tok.bot = (await createToken(tokens, { name: "bot", roles: ["agent"] })).token;
    tok.bot2 = (await createToken(tokens, { name: "bot2", roles: ["agent"] })).token;
    tok.alice = (await createToken(tokens, { name: "alice", roles: ["reviewer"] })).token;
    tok.bob = (await createToken(tokens, { name: "bob", roles: ["reviewer"] })).token;
    tok.admin = (await createToken(tokens, { name: "root", roles: ["admin"] })).token;
    server = createServer({ airlock, auth: { tokens }, rateLimit: false, trust });
    url = (await server.listen({ port: 0, host: "127.0.0.1" })).url;
    close = async () => {
      await server.close();
      await airlock.close();
      t.cleanup();
    };
  });
  afterAll(async () => {
    await close?.();
  });

  async function create(token: string, body: unknown) {
    const r = await as(token, "POST", "/v1/requests", body);
    expect(r.status).toBe(201);
    return r.body as { id: string; status: string; decision?: { comment?: string } };
  }
  async function approvedBy(reviewerToken: string, body: unknown) {
    const r = await create(tok.bot, body);
    expect(r.status).toBe("pending");
    const d = await as(reviewerToken, "POST", `/v1/requests/${r.id}/decisions`, {
      outcome: "approved",
    });
    expect(d.status).toBe(200);
  }

  it("names the people behind a run; the attack waits for a person, the same call is approved", async () => {
    for (const who of [tok.alice, tok.bob, tok.alice, tok.bob, tok.alice]) {
      await approvedBy(who, shell("ls -la"));
    }
    const suggestions = await as(tok.admin, "GET", "/v1/trust/suggestions");
    expect(suggestions.status).toBe(200);
    expect(suggestions.body.items).toHaveLength(1);
    expect(suggestions.body.items[0]).toMatchObject({
      action: "shell.exec",
      shapeHash: SHAPE,
      streak: 5,
      scope: {
        requesters: ["bot"],
        reviewers: ["alice", "bob"],
        maxQuorum: 1,
        approverSets: [[]],
        values: [{ path: "/args/cmd", oneOf: ["ls -la"] }, { path: "/items" }],
      },
    });

    const accepted = await as(tok.admin, "POST", "/v1/trust/rules", {
      action: "shell.exec",
      shapeHash: SHAPE,
    });
    expect(accepted.status).toBe(201);
    expect(accepted.body.scope).toMatchObject({ reviewers: ["alice", "bob"], requesters: ["bot"] });
    expect(accepted.body.scope.anyRequester).toBeUndefined();
    const listed = await as(tok.alice, "GET", "/v1/trust/rules");
    expect(listed.body.items).toEqual([accepted.body]);

    // The attack, from another agent: a person decides.
    const attack = await create(
      tok.bot2,
      shell("rm -rf / --no-preserve-root", { risk: "critical", approvers: ["ops"], quorum: 3 }),
    );
    expect(attack.status).toBe("pending");
    // The same command from that other agent, and the attack's command from the earning one.
    expect((await create(tok.bot2, shell("ls -la"))).status).toBe("pending");
    expect((await create(tok.bot, shell("rm -rf / --no-preserve-root"))).status).toBe("pending");
    // The honest case: the same call from the same agent.
    const same = await create(tok.bot, shell("ls -la"));
    expect(same.status).toBe("approved");
    expect(same.decision?.comment).toBe(
      `learned trust rule ${accepted.body.id} (shell.exec, 5 approvals)`,
    );
  });

  it("refuses a rule whose field varies unless widened (422), checks the widening's form, and audits it", async () => {
    const paths = ["/a", "/b", "/c", "/d", "/e", "/f"];
    for (const [i, p] of paths.entries()) {
      await approvedBy(i % 2 ? tok.bob : tok.alice, {
        title: `read ${p}`,
        action: "files.read",
        args: { path: p },
      });
    }
    const shapeHash = argsShapeHash({ path: "" });
    const items = (await as(tok.admin, "GET", "/v1/trust/suggestions")).body.items;
    const read = items.find((s: { action: string }) => s.action === "files.read");
    expect(read.scope.values[0]).toEqual({
      path: "/args/path",
      varies: "more than 5 distinct values",
    });

    const plain = await as(tok.admin, "POST", "/v1/trust/rules", {
      action: "files.read",
      shapeHash,
    });
    expect(plain.status).toBe(422);
    expect(plain.headers.get("content-type")).toContain("application/problem+json");
    expect(plain.body.detail).toMatch(/`\/args\/path` took more than 5 distinct values/);
    const unknownField = await as(tok.admin, "POST", "/v1/trust/rules", {
      action: "files.read",
      shapeHash,
      widen: { anyValue: ["/args/nope"] },
    });
    expect(unknownField.status).toBe(422);
    expect(unknownField.body.detail).toMatch(/`\/args\/nope` is not a field of this call/);
    const badForm = await as(tok.admin, "POST", "/v1/trust/rules", {
      action: "files.read",
      shapeHash,
      widen: { everything: true },
    });
    expect(badForm.status).toBe(400);
    expect(badForm.headers.get("content-type")).toContain("application/problem+json");

    const widened = await as(tok.admin, "POST", "/v1/trust/rules", {
      action: "files.read",
      shapeHash,
      widen: { anyRequester: true, anyValue: ["/args/path"] },
    });
    expect(widened.status).toBe(201);
    expect(widened.body.scope).toMatchObject({ anyRequester: true, requesters: ["bot"] });
    const read2 = { title: "read /z", action: "files.read", args: { path: "/z" } };
    expect((await create(tok.bot2, read2)).status).toBe("approved");
    expect((await create(tok.bot2, { ...read2, risk: "high" })).status).toBe("pending");

    const audit = await as(tok.admin, "GET", "/v1/audit");
    const event = audit.body.items.find(
      (e: { data: { kind?: string; ruleId?: string } }) =>
        e.data.kind === "trust_rule_accepted" && e.data.ruleId === widened.body.id,
    );
    expect(event).toMatchObject({
      actor: "root",
      data: {
        requesters: "any",
        reviewers: ["alice", "bob"],
        widened: { anyRequester: true, anyValue: ["/args/path"] },
      },
    });
  });
  it("in the inbox, the page names the people behind a run, and ticked boxes widen the accepted rule", async () => {
    const mail = (i: number) => ({
      title: `mail ${i}`,
      action: "mail.send",
      args: { to: `user${i}@example.com`, subject: `report ${i}`, urgent: false },
    });
    for (let i = 0; i < 6; i++) await approvedBy(i % 2 ? tok.bob : tok.alice, mail(i));

    // Signed in as the admin, as a browser would: the sign-in form's CSRF, then the session's.
    const loginPage = await fetch(`${url}/login`);
    const loginCookie = (loginPage.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const loginCsrf = /name="_csrf" value="([^"]+)"/.exec(await loginPage.text())?.[1] ?? "";
    const signedIn = await fetch(`${url}/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: loginCookie },
      body: new URLSearchParams({ token: tok.admin, next: "/", _csrf: loginCsrf }).toString(),
      redirect: "manual",
    });
    expect(signedIn.status).toBe(303);
    const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const page = await fetch(`${url}/inbox/trust`, { headers: { cookie } });
    const html = await page.text();
    // The mail.send suggestion, up to the end of its form.
    const from = html.indexOf('data-action="mail.send"');
    expect(from).toBeGreaterThan(-1);
    const item = html.slice(from, html.indexOf("</form>", from));
    expect(item).toMatch(/<strong>2<\/strong>\s*distinct people: alice, bob/);
    expect(item).toContain('name="anyValue" value="/args/to"');
    expect(item).toContain('name="anyRequester"');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";

    const post = (fields: [string, string][]) =>
      fetch(`${url}/inbox/trust/accept`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
        body: new URLSearchParams([
          ["_csrf", csrf],
          ["action", "mail.send"],
          ["shapeHash", argsShapeHash(mail(0).args)],
          ...fields,
        ]).toString(),
        redirect: "manual",
      });
    // One varying field left narrow: refused, saying which.
    const half = await post([["anyValue", "/args/to"]]);
    expect(half.status).toBe(422);
    expect(await half.text()).toContain("/args/subject");
    const both = await post([
      ["anyValue", "/args/to"],
      ["anyValue", "/args/subject"],
    ]);
    expect(both.status).toBe(303);
    const rules = (await as(tok.admin, "GET", "/v1/trust/rules")).body.items;
    const rule = rules.find((r: { action: string }) => r.action === "mail.send");
    expect(rule.scope.anyRequester).toBeUndefined();
    expect(rule.scope.values).toEqual([
      { path: "/args/subject", varies: "more than 5 distinct values", any: true },
      { path: "/args/to", varies: "more than 5 distinct values", any: true },
      { path: "/args/urgent", oneOf: [false] },
      { path: "/items", length: { min: 0, max: 0 } },
    ]);
    const next = { ...mail(9), args: { ...mail(9).args, to: "someone@example.com" } };
    expect((await create(tok.bot, next)).status).toBe("approved");
    expect((await create(tok.bot, { ...next, args: { ...next.args, urgent: true } })).status).toBe(
      "pending",
    );
    expect((await create(tok.bot2, next)).status).toBe("pending");
  });
});
