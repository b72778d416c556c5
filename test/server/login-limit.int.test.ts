// The inbox's sign-in limit slows unknown tokens only: after many wrong tokens from one address (a
// proxy's, which every user behind it shares), a valid token still signs in, over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OwnServer, startOwnServer } from "./own-server.js";

let s: OwnServer;
beforeAll(async () => {
  s = await startOwnServer({ alice: { roles: ["reviewer"] } });
});
afterAll(async () => {
  await s.close();
});

/** Posts the sign-in form as a browser would (its CSRF cookie and hidden field first). */
async function login(token: string): Promise<Response> {
  const page = await fetch(`${s.url}/login`);
  const html = await page.text();
  const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
  const res = await fetch(`${s.url}/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ token, next: "/", _csrf: csrf }).toString(),
    redirect: "manual",
  });
  return res;
}

describe("inbox sign-in limit", () => {
  it("after 25 wrong tokens from one address a valid token still signs in; the 26th wrong one is slowed", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) {
      const res = await login(`alk_wrong_${i}`);
      await res.text();
      statuses.push(res.status);
    }
    // The first 20 failures are answered, the rest slowed: the limit still works.
    expect(statuses.slice(0, 20).every((st) => st === 401)).toBe(true);
    expect(statuses.slice(20)).toEqual([429, 429, 429, 429, 429]);

    const valid = await login(s.tokens.alice as string);
    await valid.text();
    expect(valid.status).toBe(303);
    expect(valid.headers.get("location")).toBe("/");
    const session = (valid.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    expect(session).toMatch(/^airlock_session=./);
    // The session works: the queue opens instead of sending us to the sign-in form.
    const queue = await fetch(`${s.url}/`, { headers: { cookie: session }, redirect: "manual" });
    await queue.text();
    expect(queue.status).toBe(200);

    const wrong = await login("alk_wrong_26");
    const html = await wrong.text();
    expect(wrong.status).toBe(429);
    expect(html).toContain("Too many failed attempts");
  });
});
