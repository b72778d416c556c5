// The same `airlock` commands against a server: AIRLOCK_URL and AIRLOCK_TOKEN, identities from tokens.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { eventually } from "../helpers.js";
import { startTestServer, type TestServer } from "../server/helpers.js";
import { runCli, startCli } from "./run-cli.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const env = (token: string) => ({
  ...process.env,
  AIRLOCK_URL: s.url,
  AIRLOCK_TOKEN: token,
  AIRLOCK_DB: "",
});

const run = (e: NodeJS.ProcessEnv, args: string[]) => runCli(args, e);
const airlock = (token: string, args: string[]) => run(env(token), args);

describe("airlock CLI with AIRLOCK_URL", () => {
  it("an agent waits, a reviewer decides, both through the server", async () => {
    const waiter = startCli(
      ["request", "--title", "Remote deploy", "--item", "a", "--item", "b", "--wait"],
      env(s.tokens.agent),
    );
    onTestFinished(() => {
      if (waiter.child.exitCode === null) waiter.child.kill("SIGKILL");
    });
    const err = () => waiter.output().stderr;
    await eventually(() => /waiting for a decision on (\S+)/.test(err()), {
      timeoutMs: 10_000,
    }).catch(() => {}); // the expectation below says it
    const id = /waiting for a decision on (\S+)/.exec(err())?.[1];
    expect(id).toBeDefined();

    const list = await airlock(s.tokens.alice, ["list", "--json"]);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).items.map((r: { id: string }) => r.id)).toContain(id);
    const decided = await airlock(s.tokens.alice, [
      "decide",
      id as string,
      "approve",
      "--select",
      "1",
    ]);
    expect(decided.stderr).toBe("");
    expect(decided.stdout).toContain("approved [a] by alice");
    const waited = await waiter.done;
    expect(waited.code).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({
      status: "approved",
      reviewer: "alice",
      selected: ["item-1"],
    });
    // The requester is the agent token's principal, not a name the command line made up.
    expect((await s.airlock.get(id as string)).requester).toBe("bot");
  });

  it("errors are one line and exit 4: unknown id, missing token, local-only commands", async () => {
    const missing = await airlock(s.tokens.alice, ["show", "req_nope"]);
    expect(missing.code).toBe(4);
    expect(missing.stderr.trim().split("\n")).toHaveLength(1);
    const noToken = await run({ ...process.env, AIRLOCK_URL: s.url, AIRLOCK_TOKEN: "" }, ["list"]);
    expect(noToken.code).toBe(4);
    expect(noToken.stderr).toMatch(/AIRLOCK_TOKEN/);
    // `review` works through the server too (test/cli/review.int.test.ts); `audit list` does not.
    const audit = await airlock(s.tokens.alice, ["audit", "list"]);
    expect(audit.code).toBe(4);
    expect(audit.stderr).toMatch(/local database/);
  });
});
