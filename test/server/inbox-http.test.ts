// The inbox's sign-in and forms, over plain HTTP (the browser tests cover the pages themselves).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
