// `airlock decide --all`: every pending request matching the filters, decided over HTTP through
// POST /v1/decisions, page by page; a JSON line per request, a summary, and an exit code that says
// whether all were decided.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../server/helpers.js";
import { runCli } from "./run-cli.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

const env = (token: string) => ({
  ...process.env,
  AIRLOCK_URL: s.url,
  AIRLOCK_TOKEN: token,
  AIRLOCK_DB: "",
});
const lines = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));

describe("airlock decide --all", () => {
  it("decides every matching pending request, across pages, and leaves the others", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 105; i++) {
      ids.push(
        (await s.airlock.request({ title: `page ${i}`, action: "bulk.page", requester: "bot" })).id,
      );
    }
    const other = await s.airlock.request({
      title: "other",
      action: "email.send",
      requester: "bot",
    });
    const r = await runCli(
      [
        "decide",
        "--all",
        "--status",
        "pending",
        "--action",
        "bulk.page",
        "approve",
        "--comment",
        "ok by batch",
      ],
      env(s.tokens.alice),
    );
    expect(r.stderr).toBe("105 of 105 decided\n");
    expect(r.code).toBe(0);
    const out = lines(r.stdout);
    expect(out).toHaveLength(105);
    expect(new Set(out.map((l) => l.id))).toEqual(new Set(ids));
    expect(out.every((l) => l.ok && l.status === "approved" && l.reviewer === "alice")).toBe(true);
    const sample = await s.airlock.get(ids[42] as string);
    expect(sample.decision).toMatchObject({ comment: "ok by batch", reviewer: "alice" });
    expect((await s.airlock.get(other.id)).status).toBe("pending");
  });

  it("reports the requests it could not decide and exits 1", async () => {
    const theirs = await s.airlock.request({
      title: "theirs",
      action: "deploy.x",
      requester: "bot",
    });
    const own = await s.airlock.request({ title: "own", action: "deploy.x", requester: "olga" });
    const r = await runCli(
      ["decide", "--all", "--action", "deploy.x", "reject"],
      env(s.tokens.ops2),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("1 of 2 decided, 1 not");
    const out = lines(r.stdout);
    expect(out.find((l) => l.id === theirs.id)).toMatchObject({ ok: true, status: "rejected" });
    expect(out.find((l) => l.id === own.id)).toMatchObject({ ok: false, code: "forbidden" });
    expect((await s.airlock.get(own.id)).status).toBe("pending");
  });

  it("filters by requester, and says so when nothing matched", async () => {
    const a = await s.airlock.request({
      title: "from bot2",
      action: "deploy.y",
      requester: "bot2",
    });
    const b = await s.airlock.request({ title: "from bot", action: "deploy.y", requester: "bot" });
    const r = await runCli(
      ["decide", "--all", "--action", "deploy.y", "--requester", "bot2", "approve"],
      env(s.tokens.admin),
    );
    expect(r.code).toBe(0);
    expect(lines(r.stdout).map((l) => l.id)).toEqual([a.id]);
    expect((await s.airlock.get(b.id)).status).toBe("pending");
    const none = await runCli(
      ["decide", "--all", "--action", "nothing.here", "approve"],
      env(s.tokens.admin),
    );
    expect(none.code).toBe(0);
    expect(none.stdout).toBe("");
    expect(none.stderr).toContain("no pending request matched");
  });

  it("refuses bad input with one line on stderr and exit 4, deciding nothing", async () => {
    const r = await s.airlock.request({ title: "untouched", action: "deploy.z", requester: "bot" });
    const bad: [string[], RegExp][] = [
      [["decide", "--all", r.id, "approve"], /not a request id/],
      [["decide", "--all", "--status", "approved", "approve"], /--status must be pending/],
      [["decide", "--all", "maybe"], /expects approve, reject or revise/],
      [["decide", "--all", "--select", "1", "approve"], /--select .* does not go with --all/],
      [["decide", r.id], /a request id and a decision/],
      [["decide", "--action", "deploy.z", r.id, "approve"], /--action goes with --all only/],
    ];
    for (const [args, message] of bad) {
      const out = await runCli(args, env(s.tokens.alice));
      expect(out.code, args.join(" ")).toBe(4);
      expect(out.stderr.trim().split("\n")).toHaveLength(1);
      expect(out.stderr).toMatch(message);
      expect(out.stdout).toBe("");
    }
    const local = await runCli(["decide", "--all", "approve"], {
      ...process.env,
      AIRLOCK_URL: "",
      AIRLOCK_DB: `${s.dbPath}.unused`,
    });
    expect(local.code).toBe(4);
    expect(local.stderr).toMatch(/works against a server/);
    expect((await s.airlock.get(r.id)).status).toBe("pending");
  });
});
