// The `airlock` command as a user runs it: separate processes sharing one SQLite file.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import Database from "better-sqlite3";
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

function env(extra: Record<string, string> = {}) {
  const e: Record<string, string> = {
    ...(process.env as Record<string, string>),
    AIRLOCK_DB: db,
    ...extra,
  };
  delete e.AIRLOCK_URL;
  return e;
}

function airlock(args: string[], extra: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [...airlockArgs(), ...args], {
    env: env(extra),
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Starts `airlock request ... --wait` in the background; resolves with its exit code and output. */
function waiting(args: string[]) {
  const run = startCli(["request", ...args, "--wait"], env());
  const started = async () => {
    const stderr = () => run.output().stderr;
    await eventually(() => stderr().includes("waiting for a decision"), {
      timeoutMs: 10_000,
    }).catch(() => {}); // said below, with what the command printed
    const m = /waiting for a decision on (\S+)/.exec(stderr());
    if (!m?.[1]) throw new Error(`the waiting command did not start: ${stderr()}`);
    return m[1];
  };
  return { done: run.done, started, child: run.child };
}

describe("airlock CLI", () => {
  it("request --wait / list / decide --select / audit verify, as in the README", async () => {
    const w = waiting([
      "--title",
      "Deploy v2 to prod",
      "--item",
      "migrate db",
      "--item",
      "restart api",
      "--timeout",
      "60",
    ]);
    const id = await w.started();
    const list = airlock(["list", "--status", "pending"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(id);
    expect(list.stdout).toContain("Deploy v2 to prod");
    expect(list.stdout).toMatch(/in \d+s/);
    const decided = airlock([
      "decide",
      id,
      "approve",
      "--select",
      "2",
      "--comment",
      "db later",
      "--as",
      "alice",
    ]);
    expect(decided.code).toBe(0);
    expect(decided.stdout).toContain("approved [restart api] by alice");
    const result = await w.done;
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json).toMatchObject({
      id,
      status: "approved",
      method: "select",
      selected: ["item-2"],
      selectedItems: [{ id: "item-2", label: "restart api" }],
      comment: "db later",
      reviewer: "alice",
      channel: "cli",
    });
    const verify = airlock(["audit", "verify"]);
    expect(verify.code).toBe(0);
    // Event #1 records that the new database's checkpoint file started; then created, decided.
    expect(verify.stdout).toContain("audit chain intact: 3 events");

    const d = new Database(db);
    d.prepare("UPDATE audit SET actor = 'mallory' WHERE seq = 2").run();
    d.close();
    const broken = airlock(["audit", "verify"]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain("event #2");
  });

  it("exit codes: 1 rejected, 3 revise, 2 timed out", async () => {
    const rej = waiting(["--title", "a"]);
    const rejId = await rej.started();
    airlock(["decide", rejId, "reject", "--as", "bob"]);
    expect((await rej.done).code).toBe(1);

    const rev = waiting(["--title", "b"]);
    const revId = await rev.started();
    airlock(["decide", revId, "revise", "--comment", "smaller batch", "--as", "bob"]);
    const revised = await rev.done;
    expect(revised.code).toBe(3);
    expect(JSON.parse(revised.stdout).comment).toBe("smaller batch");

    const slow = waiting(["--title", "c", "--timeout", "0.3"]);
    const done = await slow.done;
    expect(done.code).toBe(2);
    expect(JSON.parse(done.stdout)).toMatchObject({ status: "timed_out", method: "timeout" });
  });

  it("--key makes the request idempotent; list and show print JSON", () => {
    const a = airlock(["request", "--title", "x", "--key", "deploy-7"]);
    const b = airlock(["request", "--title", "x", "--key", "deploy-7"]);
    expect(a.code).toBe(0);
    expect(b.stdout).toBe(a.stdout);
    const list = JSON.parse(airlock(["list", "--json"]).stdout);
    expect(list.items).toHaveLength(1);
    const show = JSON.parse(airlock(["show", a.stdout.trim(), "--json"]).stdout);
    expect(show).toMatchObject({ id: a.stdout.trim(), key: "deploy-7", status: "pending" });
    const clash = airlock(["request", "--title", "y", "--key", "deploy-7"]);
    expect(clash.code).toBe(4);
    expect(clash.stderr).toMatch(/already used/);
  });

  it("refuses self-approval and names bad input on one line", { timeout: 60_000 }, () => {
    const id = airlock(["request", "--title", "mine", "--requester", "carol"]).stdout.trim();
    const self = airlock(["decide", id, "approve", "--as", "carol"]);
    expect(self.code).toBe(4);
    expect(self.stderr.trim().split("\n")).toHaveLength(1);
    expect(self.stderr).toMatch(/own request/);
    const sameOsUser = airlock(["decide", id, "approve"], { AIRLOCK_USER: "carol" });
    expect(sameOsUser.code).toBe(4);

    const badSel = airlock(["decide", id, "approve", "--select", "3", "--as", "dan"]);
    expect(badSel.code).toBe(4);
    expect(badSel.stderr).toMatch(/--select/);
    const badTimeout = airlock(["request", "--title", "t", "--timeout", "soon"]);
    expect(badTimeout.code).toBe(4);
    expect(badTimeout.stderr).toBe("airlock: --timeout expects a number above 0, got `soon`\n");
    const missing = airlock(["show", "req_missing"]);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toBe("airlock: request `req_missing` does not exist\n");
    const noTitle = airlock(["request"]);
    expect(noTitle.code).toBe(4);
    // Nothing was half-written by the failures.
    expect(JSON.parse(airlock(["list", "--json"]).stdout).items).toHaveLength(1);
    expect(airlock(["audit", "verify"]).code).toBe(0);
  });
});
