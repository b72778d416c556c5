// `npm start`'s first run, with a real `airlock serve --demo` on loopback: the demo reviewer token is
// the same after a restart on the same database (its secret in a 0600 file beside it, the token store
// holding only its hash), the /openapi.json link the server prints opens in a browser signed in to
// the inbox (and, like every route but /healthz, not without a token or a session), and the server's
// JSON log keeps out of the demo's human lines.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../helpers.js";
import { childEnv } from "./airlock-child.js";
import { type CliRun, startCli } from "./run-cli.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Starts `airlock serve --demo` on `db`; resolves once it printed the reviewer token. */
async function serveDemo(db: string): Promise<{ run: CliRun; url: string; reviewer: string }> {
  const run = startCli(["--db", db, "serve", "--demo", "--port", "0"], childEnv());
  const stop = async () => {
    if (run.child.exitCode === null) run.child.kill("SIGINT");
    await run.done;
  };
  cleanups.push(stop);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { stdout, stderr } = run.output();
    const url = /serving at (http:\/\/127\.0\.0\.1:\d+)\//.exec(stdout)?.[1];
    const reviewer = /sign in with the reviewer token\n\s+(alk_\S+)/.exec(stdout)?.[1];
    if (url && reviewer) return { run, url, reviewer };
    if (run.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`airlock serve --demo did not start:\n${stdout}\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function stopped(run: CliRun): Promise<{ stdout: string; stderr: string }> {
  run.child.kill("SIGINT");
  const result = await run.done;
  return { stdout: result.stdout, stderr: result.stderr };
}

/** The status of a GET, its body read so that no socket is left open. */
async function statusOf(url: string, init?: RequestInit): Promise<number> {
  const res = await fetch(url, init);
  await res.text();
  return res.status;
}

/** Signs in to the inbox with `token` as a browser does: the session cookie, or undefined. */
async function signIn(url: string, token: string): Promise<string | undefined> {
  const form = await fetch(`${url}/login`);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? "";
  const res = await fetch(`${url}/login`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      cookie: (form.headers.get("set-cookie") ?? "").split(";")[0] ?? "",
    },
    body: new URLSearchParams({ token, next: "/", _csrf: csrf }).toString(),
    redirect: "manual",
  });
  await res.text();
  return res.headers
    .getSetCookie()
    .find((c) => c.startsWith("airlock_session="))
    ?.split(";")[0];
}

describe("airlock serve --demo, the first run and a restart", () => {
  it("prints the same reviewer token after a restart, kept hashed in the store and in a 0600 file", {
    timeout: 120_000,
  }, async () => {
    const t = tempDir("airlock-first-run-");
    cleanups.push(t.cleanup);
    const db = join(t.dir, "airlock.db");

    const first = await serveDemo(db);
    const file = `${db}.demo-reviewer-token`;
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8").trim()).toBe(first.reviewer);
    expect(first.run.output().stdout).toContain("(the same at every start on this database;");

    // The printed /openapi.json link opens once signed in to the inbox; without a session or a
    // token it is refused, as the API is.
    const refused = await fetch(`${first.url}/openapi.json`);
    await refused.text();
    expect(refused.status).toBe(401);
    const session = await signIn(first.url, first.reviewer);
    expect(session).toBeDefined();
    const spec = await fetch(`${first.url}/openapi.json`, { headers: { cookie: session ?? "" } });
    expect(spec.status).toBe(200);
    expect(((await spec.json()) as { openapi: string }).openapi).toMatch(/^3\.1/);
    const bearer = await fetch(`${first.url}/openapi.json`, {
      headers: { authorization: `Bearer ${first.reviewer}` },
    });
    await bearer.text();
    expect(bearer.status).toBe(200);
    expect(await statusOf(`${first.url}/v1/requests`)).toBe(401);
    const listed = await statusOf(`${first.url}/v1/requests?status=pending`, {
      headers: { authorization: `Bearer ${first.reviewer}` },
    });
    expect(listed).toBe(200);
    const firstOut = await stopped(first.run);

    const second = await serveDemo(db);
    expect(second.reviewer).toBe(first.reviewer);
    const again = await statusOf(`${second.url}/v1/requests?status=pending`, {
      headers: { authorization: `Bearer ${first.reviewer}` },
    });
    expect(again).toBe(200);
    // The secret is not in the database: the token store keeps its hash.
    expect(readFileSync(db).includes(Buffer.from(first.reviewer))).toBe(false);
    const secondOut = await stopped(second.run);

    // No JSON log line among the human ones, and no token on stderr.
    for (const out of [firstOut, secondOut]) {
      expect(out.stdout.split("\n").filter((l) => l.startsWith("{"))).toEqual([]);
      expect(out.stderr.split("\n").filter((l) => l.startsWith("{"))).toEqual([]);
      expect(out.stderr).not.toContain(first.reviewer);
    }
  });
});
