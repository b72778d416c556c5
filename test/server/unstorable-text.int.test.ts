// Text no store can keep (a NUL, a lone UTF-16 surrogate, percent-escapes that are not UTF-8) is a
// 400 `invalid_input` problem wherever a request carries it: a token's name or groups, the list
// parameters, every route's `:id`, the audit's `requestId`, the inbox's query and forms. Run on SQLite
// and on PostgreSQL, which used to answer 500 (`invalid byte sequence for encoding "UTF8": 0x00`)
// where SQLite answered 200 or 404, or stored the text.
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../src/core/store.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { API_ROUTES, problemStatuses } from "../../src/server/openapi.js";
import { type AirlockServer, createServer } from "../../src/server/server.js";
import { createToken, type TokenStore } from "../../src/server/tokens.js";
import { postgresTokenStore } from "../../src/server/tokens-postgres.js";
import { sqliteTokenStore } from "../../src/server/tokens-sqlite.js";
import { postgresStore } from "../../src/store/postgres.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import { describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";
import { call, type Reply } from "./helpers.js";

/** Percent-encoded text no store can keep: a NUL, and a UTF-16 surrogate written as UTF-8 bytes. */
const BAD_ESCAPES = ["a%00b", "%ED%A0%80"];
/** JSON strings no store can keep: a NUL, a lone high and a lone low surrogate. */
const BAD_STRINGS = ["x\u0000y", "\ud800", "z\udc00"];

interface Harness {
  url: string;
  airlock: Airlock;
  tokenStore: TokenStore;
  admin: string;
  agent: string;
  alice: string;
  /** A pending request the agent created, alice may decide. */
  id: string;
}

interface Opened {
  store: Store;
  tokens: TokenStore;
  cleanup(): Promise<void>;
}

function suite(open: () => Promise<Opened>): void {
  let h: Harness;
  let opened: Opened;
  let server: AirlockServer;

  beforeAll(async () => {
    opened = await open();
    const airlock = await createAirlock({ store: opened.store, logger: pino({ level: "silent" }) });
    const make = async (
      name: string,
      roles: ("agent" | "reviewer" | "admin")[],
      groups: string[],
    ) => (await createToken(opened.tokens, { name, roles, groups })).token;
    server = createServer({ airlock, auth: { tokens: opened.tokens }, rateLimit: false });
    const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
    const admin = await make("root", ["admin"], []);
    const agent = await make("bot", ["agent"], []);
    const alice = await make("alice", ["reviewer"], ["ops"]);
    const created = await call(url, agent, "POST", "/v1/requests", {
      title: "Deploy",
      key: "k1",
      approvers: ["ops"],
    });
    expect(created.status).toBe(201);
    h = { url, airlock, tokenStore: opened.tokens, admin, agent, alice, id: created.body.id };
  });
  afterAll(async () => {
    await server?.close();
    await h?.airlock.close();
    await opened?.tokens.close();
    await opened?.cleanup();
  });

  /** A 400 `invalid_input` problem whose detail says what was wrong, never a 500. */
  function expectRefused(r: Reply, what: string, detail: RegExp = /NUL|surrogate|not UTF-8/): void {
    expect(
      { status: r.status, type: r.headers.get("content-type") },
      `${what}: ${r.status} ${r.text}`,
    ).toEqual({
      status: 400,
      type: expect.stringMatching(/^application\/problem\+json/),
    });
    expect(r.body.code, what).toBe("invalid_input");
    expect(r.body.detail, what).toMatch(detail);
  }

  it("refuses a token whose name or group holds a NUL or a lone surrogate, and stores none", async () => {
    const before = (await h.tokenStore.list()).length;
    for (const bad of BAD_STRINGS) {
      const named = await call(h.url, h.admin, "POST", "/v1/tokens", {
        name: bad,
        roles: ["reviewer"],
      });
      expectRefused(named, `name ${JSON.stringify(bad)}`);
      expect(named.body.field).toBe("name");
      const grouped = await call(h.url, h.admin, "POST", "/v1/tokens", {
        name: "carol",
        roles: ["reviewer"],
        groups: ["ops", bad],
      });
      expectRefused(grouped, `group ${JSON.stringify(bad)}`);
      expect(grouped.body.field).toBe("groups.1");
    }
    expect((await h.tokenStore.list()).length).toBe(before);
    // The screen refuses what cannot be stored, nothing else.
    const fine = await call(h.url, h.admin, "POST", "/v1/tokens", {
      name: "carol",
      roles: ["reviewer"],
      groups: ["ops"],
    });
    expect(fine.status).toBe(201);
  });

  it("refuses such text in the list parameters key, q, requester, action, approver and cursor", async () => {
    for (const param of ["key", "q", "requester", "action", "approver", "cursor"]) {
      for (const bad of BAD_ESCAPES) {
        for (const token of [h.admin, h.agent, h.alice]) {
          const r = await call(h.url, token, "GET", `/v1/requests?${param}=${bad}`);
          expectRefused(r, `?${param}=${bad}`);
        }
      }
    }
    // The same parameters with storable text still answer.
    const listed = await call(h.url, h.agent, "GET", "/v1/requests?key=k1&q=Dep&action=generic");
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((r: { id: string }) => r.id)).toEqual([h.id]);
  });

  it("refuses such text in the `:id` of every API route, for every caller", async () => {
    const withId = API_ROUTES.filter((spec) => spec.path.includes("{id}"));
    expect(withId.length).toBeGreaterThanOrEqual(8);
    for (const spec of withId) {
      for (const bad of BAD_ESCAPES) {
        for (const token of [h.admin, h.agent, h.alice]) {
          const method = spec.method.toUpperCase();
          const r = await call(
            h.url,
            token,
            method,
            spec.path.replace("{id}", bad),
            method === "GET" || method === "DELETE" ? undefined : {},
          );
          expectRefused(r, `${method} ${spec.path} with ${bad}`);
          expect(problemStatuses(spec), spec.path).toContain(400);
        }
      }
    }
  });

  it("refuses such text in the audit's requestId, in the query and in a body", async () => {
    for (const bad of BAD_ESCAPES) {
      for (const token of [h.admin, h.agent, h.alice]) {
        expectRefused(
          await call(h.url, token, "GET", `/v1/audit?requestId=${bad}`),
          `?requestId=${bad}`,
        );
      }
      expectRefused(
        await call(h.url, h.agent, "GET", `/v1/events?requestId=${bad}`),
        `events ${bad}`,
      );
    }
    for (const bad of BAD_STRINGS) {
      const r = await call(h.url, h.agent, "POST", "/v1/audit", {
        type: "notified",
        requestId: bad,
      });
      expectRefused(r, `audit body ${JSON.stringify(bad)}`);
      expect(r.body.field).toBe("requestId");
      // Anywhere in a body, however deep: what reaches a store is screened whole.
      const deep = await call(h.url, h.agent, "POST", "/v1/audit", {
        type: "notified",
        data: { note: { [bad]: 1 } },
      });
      expectRefused(deep, `audit data key ${JSON.stringify(bad)}`);
    }
    // Nothing of the refused calls reached the log.
    expect((await h.airlock.verifyAudit()).ok).toBe(true);
    const events = await h.airlock.audit({ limit: 1000 });
    expect(events.filter((e) => e.type === "notified")).toEqual([]);
  });

  it("refuses such text in the inbox's paths, query and forms", async () => {
    for (const bad of BAD_ESCAPES) {
      expectRefused(await call(h.url, undefined, "GET", `/requests/${bad}`), `inbox path ${bad}`);
      expectRefused(await call(h.url, undefined, "GET", `/?q=${bad}`), `inbox ?q=${bad}`);
      expectRefused(await call(h.url, undefined, "GET", `/?action=${bad}`), `inbox ?action=${bad}`);
    }
    // A signed-in reviewer's bulk form naming an id with a NUL.
    const session = await signIn(h.url, h.alice);
    const form = (fields: [string, string][]) =>
      fetch(`${h.url}/inbox/decisions`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          cookie: session.cookie,
        },
        body: new URLSearchParams(fields).toString(),
        redirect: "manual",
      });
    const res = await form([
      ["_csrf", session.csrf],
      ["action", "approve"],
      ["ids", "a\u0000b"],
    ]);
    const r: Reply = {
      status: res.status,
      headers: res.headers,
      text: await res.text(),
      body: undefined,
    };
    r.body = JSON.parse(r.text);
    expectRefused(r, "bulk form ids");
    expect(r.body.field).toBe("ids");
    // A request page's decision form: the comment.
    const page = await fetch(`${h.url}/requests/${h.id}/decide`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: session.cookie },
      body: new URLSearchParams([
        ["_csrf", session.csrf],
        ["outcome", "rejected"],
        ["comment", "no\u0000"],
      ]).toString(),
      redirect: "manual",
    });
    expect(page.status).toBe(400);
    expect((await page.json()).field).toBe("comment");
    expect((await h.airlock.get(h.id)).status).toBe("pending");
  });
}

/** Signs in to the inbox with `token`: the session cookie and the session's CSRF token. */
async function signIn(url: string, token: string): Promise<{ cookie: string; csrf: string }> {
  const form = await fetch(`${url}/login`);
  const loginCookie = (form.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const loginCsrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? "";
  const res = await fetch(`${url}/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: loginCookie },
    body: new URLSearchParams({ token, next: "/", _csrf: loginCsrf }).toString(),
    redirect: "manual",
  });
  expect(res.status).toBe(303);
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const home = await fetch(`${url}/`, { headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await home.text())?.[1] ?? "";
  expect(csrf).not.toBe("");
  return { cookie, csrf };
}

describe("unstorable text on SQLite", () => {
  suite(async () => {
    const t = tempDir("airlock-unstorable-");
    const path = join(t.dir, "airlock.db");
    return {
      store: sqliteStore(path),
      tokens: sqliteTokenStore(path),
      cleanup: async () => t.cleanup(),
    };
  });
});

await describePg("unstorable text on PostgreSQL", ({ url }) => {
  suite(async () => {
    const schema = freshSchema("airlock_unstorable");
    const store = postgresStore(url, { schema });
    return {
      store,
      tokens: postgresTokenStore(store.pool, { schema }),
      cleanup: () => dropSchema(url, schema),
    };
  });
});
