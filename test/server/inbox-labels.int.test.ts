// The one label rule at the inbox and the console (issue 31, finding 4): the request page's buttons,
// fetched over HTTP from a real server, and the operator's terminal prompt, each show the verb first
// and drop an agent's label that inverts it, however it is disguised.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promptOperator } from "../../src/channels/console.js";
import { SESSION_COOKIE } from "../../src/server/inbox/session.js";
import { PROMPT, terminal } from "../channels/terminal.js";
import { startTestServer, type TestServer } from "./helpers.js";

let s: TestServer;
let cookie = "";

beforeAll(async () => {
  s = await startTestServer();
  const form = await fetch(`${s.url}/login`);
  const html = await form.text();
  const res = await fetch(`${s.url}/login`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      cookie: (form.headers.get("set-cookie") ?? "").split(";")[0] ?? "",
    },
    body: new URLSearchParams({
      token: s.tokens.alice,
      next: "/",
      _csrf: /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "",
    }).toString(),
    redirect: "manual",
  });
  await res.text();
  const session = res.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  cookie = session?.split(";")[0] ?? "";
  expect(cookie).not.toBe("");
});

afterAll(async () => {
  await s?.close();
});

/** The text of a button of the request page, by its id. */
async function pageButtons(id: string): Promise<{ approve?: string; reject?: string }> {
  const res = await fetch(`${s.url}/requests/${id}`, { headers: { cookie } });
  expect(res.status).toBe(200);
  const html = await res.text();
  const text = (button: string) =>
    new RegExp(`<button class="(approve|reject)" id="${button}"[^>]*>([^<]*)</button>`).exec(
      html,
    )?.[2];
  const out: { approve?: string; reject?: string } = {};
  const approve = text("btn-approve");
  const reject = text("btn-reject");
  if (approve !== undefined) out.approve = approve;
  if (reject !== undefined) out.reject = reject;
  return out;
}

const decode = (s: string | undefined) =>
  s
    ?.replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");

describe("the inbox request page", () => {
  it.each([
    // [approve label, reject label, approve button, reject button]
    ["N\u200bo, stop", "Send it", "Approve", "Reject"],
    ["S T O P", "ＹＥＳ", "Approve", "Reject"],
    ["Don\u2019t pay", "Confirm payment", "Approve", "Reject"],
    ["Cancel the transfer", "👍 go ahead", "Approve", "Reject"],
    ["Confirm payment", "Don't pay", "Approve — Confirm payment", "Reject — Don't pay"],
  ])("approve %j, reject %j: the buttons read %j and %j", async (approve, reject, a, r) => {
    const request = await s.airlock.request({
      title: "Pay invoice",
      requester: "bot",
      labels: { approve, reject },
    });
    const shown = await pageButtons(request.id);
    expect(decode(shown.approve)).toBe(a);
    expect(decode(shown.reject)).toBe(r);
  });

  it("reads hitlTool's labels on requests stored with the old metadata keys the same way", async () => {
    const request = await s.airlock.request({
      title: "Old keys",
      requester: "bot",
      metadata: { approveLabel: "st0p", hitl: { tool: "pay", rejectLabel: "proceed" } },
    });
    expect(await pageButtons(request.id)).toEqual({ approve: "Approve", reject: "Reject" });
  });
});

describe("the operator's console", () => {
  it("shows the verbs without an inverting label, and a fitting one after the verb", async () => {
    const inverted = await s.airlock.request({
      title: "Deploy",
      labels: { approve: "Ａｂｏｒｔ", reject: "Ship it" },
    });
    const t = terminal();
    const answer = promptOperator(inverted, { ...t, timeoutMs: 5000 });
    await t.waitFor(PROMPT);
    expect(t.text()).toContain("  [a] Approve - Execute this plan\n");
    expect(t.text()).toContain("  [d] Decline - Cancel this task\n");
    expect(t.text()).not.toMatch(/Abort|Ａｂｏｒｔ|Ship it/);
    t.type("d");
    expect(await answer).toMatchObject({ outcome: "rejected" });

    const fitting = await s.airlock.request({
      title: "Deploy",
      labels: { approve: "Ship it", reject: "Keep the old build" },
    });
    const u = terminal();
    const second = promptOperator(fitting, { ...u, timeoutMs: 5000 });
    await u.waitFor(PROMPT);
    expect(u.text()).toContain("  [a] Approve — Ship it\n");
    expect(u.text()).toContain("  [d] Decline — Keep the old build\n");
    u.type("a");
    expect(await second).toMatchObject({ outcome: "approved" });
  });
});
