// `airlock request --respond --wait` and `airlock decide ID respond` (issue 33): a shell script asks
// a person a question and gets the answer back as JSON (exit 5), the answer checked against the
// request's response schema; separate processes sharing one SQLite file.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { airlockArgs, eventually, tempDir } from "../helpers.js";
import { startCli } from "./run-cli.js";

let db: string;
let cleanup: () => void;
beforeEach(() => {
  const t = tempDir();
  cleanup = t.cleanup;
  db = join(t.dir, "airlock.db");
});
afterEach(() => cleanup());

function env(): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, AIRLOCK_DB: db };
  delete e.AIRLOCK_URL;
  return e;
}

function airlock(args: string[]) {
  const r = spawnSync(process.execPath, [...airlockArgs(), ...args], {
    env: env(),
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("respond from the command line", () => {
  it("a waiting request gets the answer as JSON and exits 5", async () => {
    const schema = JSON.stringify({
      type: "object",
      properties: { region: { type: "string", enum: ["eu", "us"] }, note: { type: "string" } },
      required: ["region"],
    });
    const run = startCli(
      [
        "request",
        "--title",
        "Which region for the new cluster?",
        "--response-schema",
        schema,
        "--wait",
      ],
      env(),
    );
    try {
      await eventually(() => run.output().stderr.includes("waiting for a decision"), {
        timeoutMs: 20_000,
        what: "the waiting request",
      });
      const id = /waiting for a decision on (\S+)/.exec(run.output().stderr)?.[1] as string;

      const both = airlock(["decide", id, "respond", "--answer", "eu", "--response", '"eu"']);
      expect(both.code).toBe(4);
      expect(both.stderr).toMatch(/one of the two/);
      const none = airlock(["decide", id, "respond", "--as", "alice"]);
      expect(none.code).toBe(4);
      expect(none.stderr).toMatch(/respond needs the answer/);
      const withApprove = airlock(["decide", id, "approve", "--answer", "eu", "--as", "alice"]);
      expect(withApprove.code).toBe(4);
      expect(withApprove.stderr).toMatch(/go with respond only/);
      const notJson = airlock(["decide", id, "respond", "--response", "{eu", "--as", "alice"]);
      expect(notJson.code).toBe(4);
      expect(notJson.stderr).toMatch(/--response expects a JSON value/);
      const misfit = airlock([
        "decide",
        id,
        "respond",
        "--response",
        '{"region":"mars"}',
        "--as",
        "alice",
      ]);
      expect(misfit.code).not.toBe(0);
      expect(misfit.stderr).toContain(
        "The response does not fit the request's response schema: region: expected one of eu, us",
      );

      const ok = airlock([
        "decide",
        id,
        "respond",
        "--response",
        '{"region":"eu","note":"closer to the users"}',
        "--as",
        "alice",
      ]);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toContain(`${id}: responded by alice`);
      const result = await run.done;
      expect(result.code).toBe(5);
      expect(JSON.parse(result.stdout)).toMatchObject({
        id,
        status: "responded",
        outcome: "responded",
        method: "respond",
        reviewer: "alice",
        channel: "cli",
        response: { region: "eu", note: "closer to the users" },
      });
    } finally {
      if (run.child.exitCode === null) run.child.kill();
    }
  });

  it("a request without --respond cannot be answered, and --answer sends plain text", async () => {
    const plain = airlock(["request", "--title", "Deploy v2"]);
    expect(plain.code).toBe(0);
    const plainId = plain.stdout.trim();
    const refused = airlock(["decide", plainId, "respond", "--answer", "why?", "--as", "bob"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/does not allow `respond`/);

    const asking = airlock(["request", "--title", "Anything to add?", "--respond", "--json"]);
    expect(asking.code).toBe(0);
    const created = JSON.parse(asking.stdout);
    expect(created.allowed).toContain("respond");
    const pendingShow = airlock(["show", created.id]);
    expect(pendingShow.stdout).toContain(
      `answerable:  any response (airlock decide ${created.id} respond --response JSON)`,
    );
    const answered = airlock([
      "decide",
      created.id,
      "respond",
      "--answer",
      "ship it after 6 pm",
      "--as",
      "bob",
      "--json",
    ]);
    expect(answered.code, answered.stderr).toBe(0);
    expect(JSON.parse(answered.stdout).decision).toMatchObject({
      outcome: "responded",
      response: "ship it after 6 pm",
      proof: "local",
    });
    const shown = airlock(["show", created.id]);
    expect(shown.stdout).toContain("responded (respond) by bob via cli");
    expect(shown.stdout).toContain('response: "ship it after 6 pm"');
    expect(shown.stdout).not.toContain("answerable:");
  });
});
