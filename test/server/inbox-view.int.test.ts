// The inbox's request page and the review view (issue 33) over plain HTTP: the page renders the view
// (the agent's words labelled as such, the exact args as canonical pretty JSON), every decision form
// carries the view's digest, a decision carrying it is bound to it, one carrying a digest of another
// view is refused with the page shown again (409), and arguments too large for the page to show whole
// are not approved there.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { viewDigestOf } from "../../src/core/review-view.js";
import { MAX_SHOWN_CHARS } from "../../src/server/inbox/markdown.js";
import { SESSION_COOKIE } from "../../src/server/inbox/session.js";
import { startTestServer, type TestServer } from "./helpers.js";

let s: TestServer;
let cookie: string;
beforeAll(async () => {
  s = await startTestServer();
  cookie = await signIn(s.tokens.alice);
});
afterAll(async () => {
  await s?.close();
});

async function signIn(token: string): Promise<string> {
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
  return session?.split(";")[0] ?? "";
}

const page = async (id: string) =>
  (await fetch(`${s.url}/requests/${id}`, { headers: { cookie } })).text();

async function decide(id: string, fields: Record<string, string>) {
  const html = await page(id);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
  const res = await fetch(`${s.url}/requests/${id}/decide`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
    redirect: "manual",
  });
  return { status: res.status, html: await res.text() };
}

describe("the inbox request page and the review view", () => {
  it("renders the view, and every decision form carries its digest", async () => {
    const r = await s.airlock.request({
      title: "Pay the coffee invoice",
      summary: "Pay the $5 coffee invoice",
      args: { to: "IBAN-ATTACKER-777", amount: 50000 },
      requester: "bot",
      approvers: ["ops"],
      allowed: ["approve", "reject", "revise", "edit"],
    });
    const html = await page(r.id);
    expect(html).toContain("The agent says (its own words, not checked by Airlock):");
    // Open, canonical (keys sorted), pretty-printed.
    expect(html).toMatch(/<details class="card args" open="">/);
    expect(html).toContain(
      "{\n  &quot;amount&quot;: 50000,\n  &quot;to&quot;: &quot;IBAN-ATTACKER-777&quot;\n}",
    );
    const digest = viewDigestOf(r);
    // Request revision is a button of the decide form (in its bar), so it carries the same digest.
    for (const form of ["decide-form", "edit-form"]) {
      const body = new RegExp(`<form[^>]*id="${form}"[\\s\\S]*?</form>`).exec(html)?.[0] ?? "";
      expect(body, form).toContain(`name="viewDigest" value="${digest}"`);
      if (form === "decide-form") expect(body).toContain('id="btn-revise"');
    }
  });

  it("binds a decision to the digest it carries, and refuses one of another view (409, shown again)", async () => {
    const r = await s.airlock.request({ title: "Deploy", args: { v: 2 }, requester: "bot" });
    const other = viewDigestOf({ ...r, args: { v: 1 } });
    const stale = await decide(r.id, { action: "approve", viewDigest: other });
    expect(stale.status).toBe(409);
    expect(stale.html).toContain("This request changed since your page showed it");
    expect(stale.html).toContain(`name="viewDigest" value="${viewDigestOf(r)}"`);
    expect((await s.airlock.get(r.id)).decisions).toEqual([]);

    const ok = await decide(r.id, { action: "approve", viewDigest: viewDigestOf(r) });
    expect(ok.status).toBe(303);
    const decided = await s.airlock.get(r.id);
    expect(decided.decision).toMatchObject({ outcome: "approved", viewDigest: viewDigestOf(r) });
    const event = (await s.airlock.audit({ requestId: r.id })).find((e) => e.type === "decided");
    expect(event?.data.viewDigest).toBe(viewDigestOf(r));
  });

  it("offers no approval of arguments too large to show whole, and refuses a crafted one", async () => {
    const r = await s.airlock.request({
      title: "Import everything",
      args: { rows: "r".repeat(MAX_SHOWN_CHARS) },
      requester: "bot",
      allowed: ["approve", "reject", "edit"],
    });
    const html = await page(r.id);
    expect(html).not.toContain('id="btn-approve"');
    expect(html).not.toContain('id="edit-form"');
    expect(html).toContain('id="btn-reject"');
    expect(html).toContain("cannot be approved in the inbox");
    const crafted = await decide(r.id, { action: "approve", viewDigest: viewDigestOf(r) });
    expect(crafted.status).toBe(422);
    expect((await s.airlock.get(r.id)).decisions).toEqual([]);
    const rejected = await decide(r.id, { action: "reject", viewDigest: viewDigestOf(r) });
    expect(rejected.status).toBe(303);
    expect((await s.airlock.get(r.id)).decision).toMatchObject({ outcome: "rejected" });
  });
});
