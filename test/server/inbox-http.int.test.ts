// The inbox's sign-in and forms, over plain HTTP (the browser tests cover the pages themselves).
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markdownRenders } from "../../src/server/inbox/markdown.js";
import { type InboxDeps, inboxRoutes } from "../../src/server/inbox/routes.js";
import { SESSION_COOKIE } from "../../src/server/inbox/session.js";
import { createToken } from "../../src/server/tokens.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { startTestServer, type TestServer } from "./helpers.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

/** Fetches the sign-in form as a browser would: its CSRF cookie and the matching hidden field. */
async function loginForm(): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${s.url}/login`);
  const html = await res.text();
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
  return { cookie, csrf };
}

async function login(token: string, headers: Record<string, string> = {}, withCsrf = true) {
  const form = withCsrf ? await loginForm() : { cookie: "", csrf: "" };
  return fetch(`${s.url}/login`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(form.cookie ? { cookie: form.cookie } : {}),
      ...headers,
    },
    body: new URLSearchParams({ token, next: "/", _csrf: form.csrf }).toString(),
    redirect: "manual",
  });
}

describe("inbox sign-in", () => {
  it("needs the sign-in form's CSRF token (no login CSRF), then sets the session cookie", async () => {
    const forged = await login(s.tokens.alice, {}, false);
    expect(forged.status).toBe(403);
    expect(forged.headers.get("set-cookie") ?? "").not.toContain("airlock_session=");
    const ok = await login(s.tokens.alice);
    expect(ok.status).toBe(303);
    expect(ok.headers.get("set-cookie") ?? "").toContain("airlock_session=");
  });

  it("limits failed attempts by the peer's address, whatever X-Forwarded-For claims", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) {
      const res = await login(`alk_wrong_${i}`, { "x-forwarded-for": `203.0.113.${i}` });
      await res.text();
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 20).every((st) => st === 401)).toBe(true);
    expect(statuses.slice(20)).toEqual([429, 429, 429, 429, 429]);
  });
});

describe("inbox forms", () => {
  it("refuses a form over the body limit even when it comes without Content-Length", async () => {
    const small = await startTestServer({ bodyLimitBytes: 1000 });
    try {
      const chunk = new TextEncoder().encode(`token=${"x".repeat(4000)}`);
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(chunk);
          controller.close();
        },
      });
      const res = await fetch(`${small.url}/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body,
        duplex: "half",
        redirect: "manual",
      } as RequestInit);
      await res.text();
      expect(res.status).toBe(413);
    } finally {
      await small.close();
    }
  });
});

// --- sessions, streams, dashboard, views and rendering (issues 10, 11 and 12) ----------------------

type Fetcher = (path: string, init?: RequestInit) => Promise<Response>;

/** Signs in through the form (CSRF cookie and field included); returns the session cookie. */
async function signIn(fetcher: Fetcher, token: string, headers: Record<string, string> = {}) {
  const form = await fetcher("/login", { headers });
  const html = await form.text();
  const loginCookie = (form.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
  const res = await fetcher("/login", {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      cookie: loginCookie,
      ...headers,
    },
    body: new URLSearchParams({ token, next: "/", _csrf: csrf }).toString(),
    redirect: "manual",
  });
  await res.text();
  const setCookies = res.headers.getSetCookie();
  const session = setCookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  return { status: res.status, cookie: session?.split(";")[0] ?? "", setCookie: session ?? "" };
}

/** The CSRF token of a signed-in page. */
async function pageCsrf(fetcher: Fetcher, cookie: string): Promise<string> {
  const html = await (await fetcher("/", { headers: { cookie } })).text();
  return /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
}

const viaServer =
  (server: TestServer): Fetcher =>
  (path, init) =>
    fetch(server.url + path, init);

function directInbox(extra: Partial<InboxDeps> = {}): Fetcher {
  const app = inboxRoutes({
    airlock: s.airlock,
    tokens: s.tokenStore,
    logger: pino({ level: "silent" }),
    shutdown: new AbortController().signal,
    heartbeatMs: 1000,
    bodyLimitBytes: 100_000,
    ...extra,
  });
  return async (path, init) => app.request(`http://inbox.test${path}`, init);
}

async function reviewer(name: string, groups: string[] = ["ops"]): Promise<string> {
  return (await createToken(s.tokenStore, { name, roles: ["reviewer"], groups })).token;
}

describe("inbox sessions (issue 11 item 4)", () => {
  it("caps sessions per token: one reviewer signing in again and again never signs out others", async () => {
    const inbox = directInbox({
      sessionsPerToken: 3,
      maxSessions: 5,
      signInLimit: { max: 100, windowMs: 60_000 },
    });
    const bob = await signIn(inbox, s.tokens.bob);
    const first = await signIn(inbox, s.tokens.alice);
    for (let i = 0; i < 10; i++) expect((await signIn(inbox, s.tokens.alice)).status).toBe(303);
    // Bob is still signed in; Alice's oldest session made room for her newer ones.
    expect((await inbox("/", { headers: { cookie: bob.cookie } })).status).toBe(200);
    expect(
      (await inbox("/", { headers: { cookie: first.cookie }, redirect: "manual" })).status,
    ).toBe(303);
    // The process-wide cap refuses newcomers instead of evicting anyone.
    await signIn(inbox, s.tokens.admin);
    const extra = await signIn(inbox, await reviewer("dora"));
    expect(extra.status).toBe(503);
    expect((await inbox("/", { headers: { cookie: bob.cookie } })).status).toBe(200);
  });

  it("limits successful sign-ins per token too", async () => {
    const inbox = directInbox({ signInLimit: { max: 3, windowMs: 60_000 } });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await signIn(inbox, s.tokens.alice)).status);
    expect(statuses).toEqual([303, 303, 303, 429, 429]);
    // Another reviewer is not affected.
    expect((await signIn(inbox, s.tokens.bob)).status).toBe(303);
  });
});

describe("inbox cookies behind a TLS proxy (issue 11 item 17)", () => {
  it("sets Secure when told to, or from X-Forwarded-Proto only with trustProxy", async () => {
    const https = { "x-forwarded-proto": "https" };
    const plain = await signIn(directInbox(), s.tokens.alice, https);
    expect(plain.setCookie).not.toMatch(/;\s*Secure/i);
    const proxied = await signIn(directInbox({ trustProxy: true }), s.tokens.alice, https);
    expect(proxied.setCookie).toMatch(/;\s*Secure/i);
    const always = await signIn(directInbox({ secureCookies: true }), s.tokens.alice);
    expect(always.setCookie).toMatch(/;\s*Secure/i);
    const never = await signIn(
      directInbox({ secureCookies: false, trustProxy: true }),
      s.tokens.alice,
      https,
    );
    expect(never.setCookie).not.toMatch(/;\s*Secure/i);
  });
});

describe("createServer passes the inbox settings through", () => {
  it("sets Secure on the session cookie with inbox.secureCookies", async () => {
    const secure = await startTestServer({ inbox: { secureCookies: true } });
    try {
      const page = await fetch(`${secure.url}/login`);
      const html = await page.text();
      const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
      const res = await fetch(`${secure.url}/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
        body: new URLSearchParams({
          token: secure.tokens.alice,
          next: "/",
          _csrf: csrf,
        }).toString(),
        redirect: "manual",
      });
      expect(res.status).toBe(303);
      expect(res.headers.get("set-cookie") ?? "").toMatch(/airlock_session=[^;]+;.*Secure/i);
    } finally {
      await secure.close();
    }
  });
});

/** Reads an SSE response until it ends; true when it ended within `ms`. */
async function endsWithin(res: Response, ms: number, meanwhile: () => Promise<void>) {
  const reader = res.body?.getReader();
  if (!reader) throw new Error("no body");
  const first = await reader.read(); // "ready"
  expect(new TextDecoder().decode(first.value)).toContain("ready");
  const done = (async () => {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return true;
    }
  })();
  await meanwhile();
  let timeout: NodeJS.Timeout | undefined;
  const timer = new Promise<boolean>((r) => {
    timeout = setTimeout(() => r(false), ms);
  });
  const ended = await Promise.race([done, timer]);
  clearTimeout(timeout);
  if (!ended) await reader.cancel();
  return ended;
}

describe("/inbox/stream ends with its credentials (issue 11 item 3)", () => {
  let live: TestServer;
  beforeAll(async () => {
    live = await startTestServer({ heartbeatMs: 200 });
  });
  afterAll(async () => {
    await live.close();
  });

  it("ends at sign-out", async () => {
    const inbox = viaServer(live);
    const { cookie } = await signIn(inbox, live.tokens.alice);
    const csrf = await pageCsrf(inbox, cookie);
    const stream = await inbox("/inbox/stream", { headers: { cookie } });
    expect(stream.status).toBe(200);
    const ended = await endsWithin(stream, 5000, async () => {
      const out = await inbox("/logout", {
        method: "POST",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ _csrf: csrf }).toString(),
        redirect: "manual",
      });
      expect(out.status).toBe(303);
    });
    expect(ended).toBe(true);
  });

  it("ends when the token behind the session is revoked, delivering nothing after", async () => {
    const inbox = viaServer(live);
    const created = await createToken(live.tokenStore, {
      name: "erin",
      roles: ["reviewer"],
      groups: ["ops"],
    });
    const { cookie } = await signIn(inbox, created.token);
    const stream = await inbox("/inbox/stream", { headers: { cookie } });
    const reader = stream.body?.getReader();
    if (!reader) throw new Error("no body");
    await reader.read();
    await live.tokenStore.revoke(created.record.id, Date.now());
    await live.airlock.request({ title: "After revocation", requester: "bot", approvers: ["ops"] });
    const seen: string[] = [];
    const deadline = Date.now() + 5000;
    let ended = false;
    while (Date.now() < deadline) {
      let timeout: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        reader.read(),
        new Promise<{ done: boolean; value?: Uint8Array }>((r) => {
          timeout = setTimeout(() => r({ done: false }), deadline - Date.now());
        }),
      ]);
      clearTimeout(timeout);
      if (chunk.done) {
        ended = true;
        break;
      }
      if (chunk.value) seen.push(new TextDecoder().decode(chunk.value));
    }
    expect(ended).toBe(true);
    expect(seen.join("")).not.toContain("created");
  });
});

// The sign-in tests above used up this address's failed sign-ins on `s`: these use their own server.
let t: TestServer;
async function reviewerOn(server: TestServer, name: string): Promise<string> {
  return (await createToken(server.tokenStore, { name, roles: ["reviewer"], groups: ["ops"] }))
    .token;
}

describe("the dashboard respects visibility (issue 11 item 12)", () => {
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });
  it("shows a reviewer only figures of requests it may see", async () => {
    const hidden = await t.airlock.request({
      title: "Secret",
      action: "secret.project.x",
      requester: "bot",
      approvers: ["secret-team"],
    });
    await t.airlock.decide(hidden.id, {
      outcome: "approved",
      reviewer: "sam",
      groups: ["secret-team"],
    });
    const open = await t.airlock.request({
      title: "Open",
      action: "ops.visible",
      requester: "bot",
    });
    await t.airlock.decide(open.id, { outcome: "approved", reviewer: "bob" });
    // Withdrawn, not decided: counted apart, and not in the approval rate.
    const withdrawn = await t.airlock.request({
      title: "Withdrawn",
      action: "ops.visible",
      requester: "bot",
    });
    await t.airlock.cancel(withdrawn.id, { reason: "demo restart" });
    const inbox = viaServer(t);
    const alice = await signIn(inbox, await reviewerOn(t, "frank"));
    const mine = await (await inbox("/dashboard", { headers: { cookie: alice.cookie } })).text();
    expect(mine).toContain("ops.visible");
    expect(mine).not.toContain("secret.project.x");
    const opsRow = /<tr><td class="name">ops\.visible<\/td>(.*?)<\/tr>/.exec(mine)?.[1] ?? "";
    expect(opsRow).toContain('<td data-label="Decided">1</td>');
    expect(opsRow).toContain('<td data-label="Cancelled">1</td>');
    expect(opsRow).toContain('<td data-label="Approval rate">100.0%</td>');
    const root = await signIn(inbox, t.tokens.admin);
    const all = await (await inbox("/dashboard", { headers: { cookie: root.cookie } })).text();
    expect(all).toContain("secret.project.x");
  });
});

describe("request pages (issues 11 and 12)", () => {
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });
  it("audits a reviewer's repeated views of a request once", async () => {
    const r = await t.airlock.request({ title: "Viewed once", requester: "bot" });
    const inbox = viaServer(t);
    const name = "gina";
    const token = await reviewerOn(t, name);
    const one = await signIn(inbox, token);
    const two = await signIn(inbox, token);
    for (const cookie of [one.cookie, one.cookie, two.cookie]) {
      expect((await inbox(`/requests/${r.id}`, { headers: { cookie } })).status).toBe(200);
    }
    const other = await signIn(inbox, await reviewerOn(t, "hank"));
    await inbox(`/requests/${r.id}`, { headers: { cookie: other.cookie } });
    const views = (await t.airlock.audit({ requestId: r.id })).filter((e) => e.type === "viewed");
    expect(views.map((e) => e.actor)).toEqual([name, "hank"]);
  });

  it("renders a huge markdown preview bounded, with a notice, once per request version", async () => {
    const r = await t.airlock.request({
      title: "Brackets",
      requester: "bot",
      summary: "Short *summary*.",
      preview: "[".repeat(1_000_000),
      args: { blob: "x".repeat(300_000) },
    });
    const inbox = viaServer(t);
    const { cookie } = await signIn(inbox, await reviewerOn(t, "ivan"));
    const before = markdownRenders();
    const html = await (await inbox(`/requests/${r.id}`, { headers: { cookie } })).text();
    // Both the preview (markdown) and the arguments (JSON) are cut, each with a notice.
    expect(html.match(/more characters not shown/g)).toHaveLength(2);
    expect(html.length).toBeLessThan(300_000);
    expect(markdownRenders() - before).toBe(2);
    await (await inbox(`/requests/${r.id}`, { headers: { cookie } })).text();
    await (await inbox(`/inbox/requests/${r.id}/panel`, { headers: { cookie } })).text();
    expect(markdownRenders() - before).toBe(2);
  });
});

describe("revision comments", () => {
  let u: TestServer;
  beforeAll(async () => {
    u = await startTestServer();
  });
  afterAll(async () => {
    await u.close();
  });

  it("are required only where the request says `revisionCommentRequired`", async () => {
    const inbox = viaServer(u);
    const { cookie } = await signIn(inbox, u.tokens.alice);
    const csrf = await pageCsrf(inbox, cookie);
    const revise = (id: string) =>
      inbox(`/requests/${id}/decide`, {
        method: "POST",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ _csrf: csrf, action: "revise", comment: "" }).toString(),
        redirect: "manual",
      });
    const strict = await u.airlock.request({
      title: "Needs a why",
      requester: "bot",
      revisionCommentRequired: true,
    });
    const page = await (await inbox(`/requests/${strict.id}`, { headers: { cookie } })).text();
    expect(page).toContain("(comment required)");
    const refused = await revise(strict.id);
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain("needs a comment");
    expect((await u.airlock.get(strict.id)).status).toBe("pending");

    const lenient = await u.airlock.request({ title: "Send it back", requester: "bot" });
    const lenientPage = await (
      await inbox(`/requests/${lenient.id}`, { headers: { cookie } })
    ).text();
    expect(lenientPage).not.toContain("(comment required)");
    const sent = await revise(lenient.id);
    expect(sent.status).toBe(303);
    expect((await u.airlock.get(lenient.id)).status).toBe("revise");
  });
});

describe("cancelling in the inbox (issue 11 item 2)", () => {
  it("is for reviewers who may decide the request, with a reason", async () => {
    const v = await startTestServer();
    try {
      const inbox = viaServer(v);
      const post = async (token: string, id: string, reason: string) => {
        const { cookie } = await signIn(inbox, token);
        const csrf = await pageCsrf(inbox, cookie);
        return inbox(`/requests/${id}/decide`, {
          method: "POST",
          headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ _csrf: csrf, action: "cancel", reason }).toString(),
          redirect: "manual",
        });
      };
      // Its own request: visible to "olga", but not for her to decide, so not to cancel either.
      const own = await v.airlock.request({ title: "Mine", requester: "olga", approvers: ["ops"] });
      const refused = await post(v.tokens.ops2, own.id, "changed my mind");
      expect(refused.status).toBe(403);
      expect((await v.airlock.get(own.id)).status).toBe("pending");
      const r = await v.airlock.request({ title: "Theirs", requester: "bot", approvers: ["ops"] });
      const empty = await post(v.tokens.alice, r.id, "  ");
      expect(empty.status).toBe(422);
      expect(await empty.text()).toContain("Say why you cancel");
      const ok = await post(v.tokens.alice, r.id, "duplicate of another request");
      expect(ok.status).toBe(303);
      expect((await v.airlock.get(r.id)).decision).toMatchObject({
        outcome: "cancelled",
        reviewer: "alice",
        channel: "web",
      });
    } finally {
      await v.close();
    }
  });
});

describe("the queue (issue 10 item 3)", () => {
  it("reads summaries only, most urgent first, and counts pending requests with a count", async () => {
    const reads = { listRequests: 0, getRequest: 0 };
    const base = sqliteStore(":memory:");
    const store = new Proxy(base, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if ((prop === "listRequests" || prop === "getRequest") && typeof v === "function") {
          return (...args: unknown[]) => {
            reads[prop] += 1;
            return v.apply(target, args);
          };
        }
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const q = await startTestServer({ store });
    try {
      for (let i = 0; i < 505; i++) {
        await q.airlock.request({
          title: `R${i}`,
          requester: "bot",
          timeoutMs: 3_600_000 - i * 1000,
        });
      }
      const inbox = viaServer(q);
      const { cookie } = await signIn(inbox, q.tokens.alice);
      reads.listRequests = 0;
      reads.getRequest = 0;
      const res = await inbox("/inbox/queue", { headers: { cookie } });
      const html = await res.text();
      expect(res.headers.get("x-pending-count")).toBe("505");
      expect(reads).toEqual({ listRequests: 0, getRequest: 0 });
      // The nearest deadline (the last one created) comes first.
      const titles = [...html.matchAll(/<a href="\/requests\/[^"]+">([^<]+)<\/a>/g)].map(
        (m) => m[1],
      );
      expect(titles[0]).toBe("R504");
      // One page of a backlog of any size: the first 100, and a line saying there are more.
      expect(titles).toHaveLength(100);
      expect(html).toContain("Showing the first 100 in this order");
      const full = await (await inbox("/", { headers: { cookie } })).text();
      expect(full).toContain("<title>(505) Airlock inbox</title>");
      // Search asks the store, so it finds requests far past the first page.
      const found = await (await inbox("/inbox/queue?q=r7", { headers: { cookie } })).text();
      const hits = [...found.matchAll(/<a href="\/requests\/[^"]+">([^<]+)<\/a>/g)].map(
        (m) => m[1],
      );
      expect(hits.sort()).toEqual([
        "R7",
        "R70",
        "R71",
        "R72",
        "R73",
        "R74",
        "R75",
        "R76",
        "R77",
        "R78",
        "R79",
      ]);
      expect(found).not.toContain("Showing the first");
      expect(reads).toEqual({ listRequests: 0, getRequest: 0 });
      // Past 1,000 pending the count stops there: "1000+", the same cost for any backlog.
      for (let i = 505; i < 1001; i++) {
        await q.airlock.request({ title: `R${i}`, requester: "bot" });
      }
      const capped = await inbox("/inbox/queue", { headers: { cookie } });
      await capped.text();
      expect(capped.headers.get("x-pending-count")).toBe("1000+");
      expect(await (await inbox("/", { headers: { cookie } })).text()).toContain(
        "<title>(1000+) Airlock inbox</title>",
      );
    } finally {
      await q.close();
    }
  });
});

describe("typed presentation fields (issue 13)", () => {
  it("shows labels, the question, progress, estimates and critiques from the typed fields, and from the old metadata keys of stored requests", async () => {
    const v = await startTestServer();
    try {
      const inbox = viaServer(v);
      const { cookie } = await signIn(inbox, v.tokens.alice);
      const typed = await v.airlock.request({
        title: "Typed",
        requester: "bot",
        labels: { approve: "Sign the contract", reject: "Keep unsigned", items: "Clauses" },
        question: "Is the indemnity clause acceptable?",
        progress: { "Clauses read": 12 },
        estimate: { minutes: 5, cost: 1.5 },
        critiques: [{ issue: "The liability cap is missing", importance: "medium" }],
        items: [{ id: "c1", label: "Clause 1" }],
        allowed: ["approve", "reject", "select"],
      });
      const html = await (await inbox(`/requests/${typed.id}`, { headers: { cookie } })).text();
      for (const text of [
        "Sign the contract",
        "Keep unsigned",
        "Clauses (1)",
        "Is the indemnity clause acceptable?",
        "Clauses read",
        "about 5 min, $1.50",
        "The liability cap is missing",
      ]) {
        expect(html, text).toContain(text);
      }
      const old = await v.airlock.request({
        title: "Old keys",
        requester: "bot",
        metadata: {
          approveLabel: "Publish",
          mainQuery: "Ship the release notes?",
          itemsTitle: "Notes",
        },
        items: [{ id: "n1", label: "Note 1" }],
      });
      const oldHtml = await (await inbox(`/requests/${old.id}`, { headers: { cookie } })).text();
      for (const text of ["Publish", "Ship the release notes?", "Notes (1)"]) {
        expect(oldHtml, text).toContain(text);
      }
    } finally {
      await v.close();
    }
  });
});
