// The inbox's bulk form over plain HTTP, on SQLite and on PostgreSQL (issue 31, finding 3): "all
// matching this filter" decides only what the page showed (a request created after the page was
// rendered stays pending and is listed, one decided elsewhere is reported), and approving asks first
// when what will run is destructive, whatever the agent's labels say.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_COOKIE } from "../../src/server/inbox/session.js";
import { MAX_DECISIONS } from "../../src/server/routes/decisions.js";
import { postgresStore } from "../../src/store/postgres.js";
import { describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";
import { startTestServer, type TestServer } from "./helpers.js";

const decode = (v: string) =>
  v
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
const attr = (tag: string, name: string) =>
  new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1] ?? undefined;

/** The fields a browser would post with the bulk form: its own and those tied to it by `form`. */
function bulkFields(html: string): [string, string][] {
  const bulk = /<form id="bulk"[\s\S]*?<\/form>/.exec(html)?.[0] ?? "";
  const tied = (html.match(/<input\b[^>]*>/g) ?? []).filter((t) => attr(t, "form") === "bulk");
  return [...(bulk.match(/<input\b[^>]*>/g) ?? []), ...tied]
    .filter((t) => attr(t, "type") === "hidden" && attr(t, "name"))
    .map((t) => [attr(t, "name") ?? "", decode(attr(t, "value") ?? "")]);
}

/** The ids listed in one section of a bulk page (`#bulk-decided`, `#bulk-left`, …). */
function listed(html: string, id: string): string[] {
  const section = new RegExp(`<section[^>]*id="${id}"[\\s\\S]*?</section>`).exec(html)?.[0] ?? "";
  return [...section.matchAll(/<li data-request-id="([^"]+)"/g)].map((m) => m[1] as string);
}
const section = (html: string, id: string) =>
  new RegExp(`<section[^>]*id="${id}"[\\s\\S]*?</section>`).exec(html)?.[0] ?? "";

function bulkSuite(name: string, start: () => Promise<TestServer>, stop: () => Promise<void>) {
  describe(name, () => {
    let s: TestServer;
    let cookie: string;
    beforeAll(async () => {
      s = await start();
      cookie = await signIn(s, s.tokens.alice);
    });
    afterAll(async () => {
      await s?.close();
      await stop();
    });

    const get = async (path: string) => {
      const res = await fetch(s.url + path, { headers: { cookie } });
      expect(res.status, path).toBe(200);
      return res.text();
    };
    const post = async (fields: [string, string][]) => {
      const res = await fetch(`${s.url}/inbox/decisions`, {
        method: "POST",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields).toString(),
        redirect: "manual",
      });
      return { status: res.status, html: await res.text() };
    };
    const gates = async (action: string, n: number, extra: Record<string, unknown> = {}) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const r = await s.airlock.request({
          title: `${action} #${i}`,
          action,
          requester: "bot",
          ...extra,
        });
        ids.push(r.id);
      }
      return ids;
    };
    const status = async (id: string) => (await s.airlock.get(id)).status;

    it("“all matching” decides what the page showed; one created after it stays pending and is listed", async () => {
      const shown = await gates("shown.match", 3);
      await gates("shown.other", 1);
      const html = await get("/?action=shown.match");
      const fields = bulkFields(html);

      // After the page was rendered: a new request matching the filter, and bob decides one.
      const [late] = await gates("shown.match", 1);
      const raced = shown[1] as string;
      await s.airlock.decide(raced, { outcome: "approved", reviewer: "bob", comment: "mine" });

      const res = await post([
        ...fields,
        ["scope", "filter"],
        ["comment", "batch"],
        ["action", "reject"],
      ]);
      expect(res.status).toBe(200);
      expect(await status(late as string)).toBe("pending");
      expect(new Set(listed(res.html, "bulk-decided"))).toEqual(
        new Set(shown.filter((id) => id !== raced)),
      );
      expect(listed(res.html, "bulk-first")).toEqual([raced]);
      expect(listed(res.html, "bulk-left")).toEqual([late]);
      expect(section(res.html, "bulk-left")).toContain("new since the page was shown");
      expect(res.html).toMatch(
        /The page showed 3 pending requests matching this filter; since then: 1 decided elsewhere, 1 you were not shown now match \(left pending\)/,
      );
      expect((await s.airlock.get(raced)).decision).toMatchObject({ reviewer: "bob" });
      for (const id of shown.filter((x) => x !== raced)) {
        expect((await s.airlock.get(id)).decision).toMatchObject({
          outcome: "rejected",
          reviewer: "alice",
          comment: "batch",
        });
      }
      // The form stood for exactly what the page showed, and said how many.
      expect(new Map(fields).get("shown_ids")?.split(" ").sort()).toEqual([...shown].sort());
      expect(new Map(fields).get("shown_count")).toBe("3");
      expect(html).toContain('<span id="match-count">3</span>');
    });

    it("decides at most MAX_DECISIONS of what was shown and lists the rest as left pending", async () => {
      const ids = await gates("shown.many", MAX_DECISIONS + 2);
      const fields = bulkFields(await get("/?action=shown.many"));
      expect(new Map(fields).get("shown_count")).toBe(String(MAX_DECISIONS + 2));
      const res = await post([...fields, ["scope", "filter"], ["action", "reject"]]);
      expect(res.status).toBe(200);
      expect(listed(res.html, "bulk-decided")).toHaveLength(MAX_DECISIONS);
      const left = listed(res.html, "bulk-left");
      expect(left).toHaveLength(2);
      expect(section(res.html, "bulk-left")).toContain(`over ${MAX_DECISIONS} in one form`);
      for (const id of ids) {
        expect(await status(id)).toBe(left.includes(id) ? "pending" : "rejected");
      }
    });

    it("refuses an “all matching” form that does not say what the page showed, deciding nothing", async () => {
      const ids = await gates("shown.stale", 2);
      const fields = bulkFields(await get("/?action=shown.stale")).filter(
        ([n]) => !n.startsWith("shown_"),
      );
      const res = await post([...fields, ["scope", "filter"], ["action", "reject"]]);
      expect(res.status).toBe(422);
      expect(res.html).toContain("Reload the inbox");
      for (const id of ids) expect(await status(id)).toBe("pending");
      // Nor one whose count does not match its ids (an altered form).
      const all = bulkFields(await get("/?action=shown.stale")).map(([n, v]): [string, string] =>
        n === "shown_count" ? [n, "3"] : [n, v],
      );
      expect((await post([...all, ["scope", "filter"], ["action", "reject"]])).status).toBe(422);
      for (const id of ids) expect(await status(id)).toBe("pending");
    });

    it("asks to confirm DELETE FROM customers under db.maintenance and risk low; “the others only” leaves it", async () => {
      const [plain] = await gates("db.maintenance", 1, { args: { sql: "VACUUM sessions" } });
      const [wipe] = await gates("db.maintenance", 1, {
        risk: "low",
        args: { sql: "DELETE FROM customers" },
      });
      const html = await get("/?action=db.maintenance");
      const csrf = new Map(bulkFields(html)).get("_csrf") as string;
      const ticked: [string, string][] = [
        ["_csrf", csrf],
        ["ids", plain as string],
        ["ids", wipe as string],
        ["action", "approve"],
      ];
      const asked = await post(ticked);
      expect(asked.status).toBe(200);
      expect(asked.html).toContain("Approve 2 requests?");
      expect(listed(asked.html, "bulk-risky")).toEqual([wipe]);
      expect(section(asked.html, "bulk-risky")).toContain(
        "args.sql: SQL DELETE FROM customers without WHERE (deletes every row)",
      );
      expect(await status(plain as string)).toBe("pending");
      expect(await status(wipe as string)).toBe("pending");

      // The confirmation screen's "others only" form, as a browser would post it.
      const safeForm =
        /<form[^>]*>(?:(?!<\/form>)[\s\S])*id="bulk-confirm-safe"[\s\S]*?<\/form>/.exec(
          asked.html,
        )?.[0];
      expect(safeForm).toBeDefined();
      const safe = (safeForm?.match(/<input\b[^>]*>/g) ?? []).map((tag): [string, string] => [
        attr(tag, "name") ?? "",
        decode(attr(tag, "value") ?? ""),
      ]);
      const done = await post([...safe, ["action", "approve"]]);
      expect(done.status).toBe(200);
      expect(listed(done.html, "bulk-decided")).toEqual([plain]);
      expect(listed(done.html, "bulk-left")).toEqual([wipe]);
      expect(await status(plain as string)).toBe("approved");
      expect(await status(wipe as string)).toBe("pending");
    });

    it("the request page asks by the same rule, and reads edited args anew", async () => {
      const [wipe] = await gates("db.maintenance", 1, {
        risk: "low",
        args: { sql: "DELETE FROM customers" },
      });
      const [tidy] = await gates("db.maintenance", 1, {
        risk: "low",
        allowed: ["approve", "reject", "edit"],
        args: { sql: "VACUUM sessions" },
      });
      const csrf = new Map(bulkFields(await get("/"))).get("_csrf") as string;
      const decide = async (id: string, fields: Record<string, string>) => {
        const res = await fetch(`${s.url}/requests/${id}/decide`, {
          method: "POST",
          headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
          redirect: "manual",
        });
        return { status: res.status, html: decode(await res.text()) };
      };
      const asked = await decide(wipe as string, { action: "approve" });
      expect(asked.status).toBe(200);
      expect(asked.html).toContain(
        "This asks to confirm first: args.sql: SQL DELETE FROM customers without WHERE (deletes every row).",
      );
      expect(await status(wipe as string)).toBe("pending");
      // A harmless request approved with arguments edited into a DROP asks too.
      const edited = await decide(tidy as string, {
        action: "edit",
        args: JSON.stringify({ sql: "DROP TABLE sessions" }),
      });
      expect(edited.status).toBe(200);
      expect(edited.html).toContain("args.sql: SQL DROP TABLE");
      expect(await status(tidy as string)).toBe("pending");
      const confirmed = await decide(tidy as string, {
        action: "edit",
        confirmed: "yes",
        args: JSON.stringify({ sql: "VACUUM sessions; DROP TABLE sessions" }),
      });
      expect(confirmed.status).toBe(303);
      expect((await s.airlock.get(tidy as string)).decision?.editedArgs).toEqual({
        sql: "VACUUM sessions; DROP TABLE sessions",
      });
    });

    it("“all matching” through the confirmation decides nothing that arrived after the page", async () => {
      const shown = await gates("shown.confirm", 2, { args: { amount: 25_000 } });
      const fields = bulkFields(await get("/?action=shown.confirm"));
      const asked = await post([...fields, ["scope", "filter"], ["action", "approve"]]);
      expect(asked.status).toBe(200);
      expect(new Set(listed(asked.html, "bulk-risky"))).toEqual(new Set(shown));
      expect(section(asked.html, "bulk-risky")).toContain("args.amount: amount 25000 is over 1000");
      // Another arrives while the reviewer reads the confirmation, then they confirm all.
      const [late] = await gates("shown.confirm", 1, { args: { amount: 25_000 } });
      const allForm =
        /<form[^>]*>(?:(?!<\/form>)[\s\S])*id="bulk-confirm-all"[\s\S]*?<\/form>/.exec(
          asked.html,
        )?.[0];
      const all = (allForm?.match(/<input\b[^>]*>/g) ?? []).map((tag): [string, string] => [
        attr(tag, "name") ?? "",
        decode(attr(tag, "value") ?? ""),
      ]);
      const done = await post([...all, ["action", "approve"]]);
      expect(done.status).toBe(200);
      expect(new Set(listed(done.html, "bulk-decided"))).toEqual(new Set(shown));
      expect(listed(done.html, "bulk-left")).toEqual([late]);
      for (const id of shown) expect(await status(id)).toBe("approved");
      expect(await status(late as string)).toBe("pending");
    });
  });
}

/** Signs in through the form (its CSRF cookie and field); returns the session cookie. */
async function signIn(s: TestServer, token: string): Promise<string> {
  const form = await fetch(`${s.url}/login`);
  const html = await form.text();
  const loginCookie = (form.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
  const res = await fetch(`${s.url}/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: loginCookie },
    body: new URLSearchParams({ token, next: "/", _csrf: csrf }).toString(),
    redirect: "manual",
  });
  await res.text();
  const session = res.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  expect(session, "signed in").toBeDefined();
  return session?.split(";")[0] ?? "";
}

bulkSuite(
  "inbox bulk form on SQLite",
  () => startTestServer(),
  async () => {},
);

await describePg("inbox bulk form on PostgreSQL", ({ url }) => {
  const schema = freshSchema("airlock_bulk");
  bulkSuite(
    "shows and decides",
    () => startTestServer({ store: postgresStore(url, { schema }) }),
    () => dropSchema(url, schema),
  );
});
