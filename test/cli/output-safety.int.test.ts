// What the `airlock` command prints: an agent's control characters never reach the terminal raw
// (`list`, `show`, `request`, JSON output), `request --wait` that times out prints no error, `cancel`
// without a server records channel `cli`, `--version`, and `demo` without a name lists the examples.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAirlock } from "../../src/engine/engine.js";
import { terminalSafe, terminalSafeJson } from "../../src/reply/format.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import { runCli } from "./run-cli.js";

let db: string;
let cleanup: () => void;
beforeEach(() => {
  const t = tempDir();
  cleanup = t.cleanup;
  db = join(t.dir, "airlock.db");
});
afterEach(() => cleanup());

function airlock(args: string[], extra: Record<string, string> = {}) {
  const env: NodeJS.ProcessEnv = { ...process.env, AIRLOCK_DB: db, ...extra };
  delete env.AIRLOCK_URL;
  delete env.AIRLOCK_LOG_LEVEL;
  return runCli(args, env);
}

/** The raw control characters in `text` a terminal would act on (all but \t and \n). */
function raw(text: string): string[] {
  return [...text].filter((c) => {
    const code = c.charCodeAt(0);
    return (
      (code < 0x20 && c !== "\t" && c !== "\n") ||
      (code >= 0x7f && code <= 0x9f) ||
      (code >= 0x202a && code <= 0x202e) ||
      (code >= 0x2066 && code <= 0x2069)
    );
  });
}

const CLEAR = "\u001b[2J";
const TITLE = "\u001b]0;owned\u0007";

async function seedHostile(): Promise<string> {
  const engine = await createAirlock({ store: sqliteStore(db), sweeper: false });
  try {
    const r = await engine.request({
      title: `Pay invoice${CLEAR}${TITLE} 42\rApproved already`,
      summary: `line one\n\u001b[1Aline two\u009b31m`,
      items: [`step\u001b[8m hidden`, "fine"],
      requester: "agent\u001b[31m",
      args: { note: "bidi\u202etxt.exe", c1: "\u009b2J" },
      timeoutMs: 3_600_000,
    });
    return r.id;
  } finally {
    await engine.close();
  }
}

describe("terminalSafe", () => {
  it("shows ESC, BEL, CR, C1 and bidi controls as stand-ins; keeps \\n and \\t in multi-line text", () => {
    expect(terminalSafe(`a${CLEAR}b`)).toBe("a␛[2Jb");
    expect(terminalSafe(`x${TITLE}y`)).toBe("x␛]0;owned␇y");
    expect(terminalSafe("ok\rforged")).toBe("ok␍forged");
    expect(terminalSafe("\u009b31m\u202e\u2066\u0085")).toBe("\\u009b31m\\u202e\\u2066\\u0085");
    expect(terminalSafe("a\nb\tc")).toBe("a␊b␉c");
    expect(terminalSafe("a\r\nb\tc\rd", { multiline: true })).toBe("a\nb\tc␍d");
    expect(terminalSafe("plain text, ünïcödé ✓")).toBe("plain text, ünïcödé ✓");
  });

  it("keeps JSON valid and equal in value", () => {
    const value = { t: `x${CLEAR}\u009b\u202e\u2028y`, n: [1, 2] };
    const safe = terminalSafeJson(JSON.stringify(value, null, 2));
    expect(raw(safe)).toEqual([]);
    expect(JSON.parse(safe)).toEqual(value);
  });
});

describe("airlock output", () => {
  it("list, show and show --json print an agent's escape sequences harmlessly", async () => {
    const id = await seedHostile();
    const list = await airlock(["list"]);
    expect(list.code).toBe(0);
    expect(raw(list.stdout)).toEqual([]);
    expect(list.stdout).toContain("Pay invoice␛[2J␛]0;owned␇ 42␍Approved already");
    expect(list.stdout).toContain("agent␛[31m");

    const show = await airlock(["show", id]);
    expect(show.code).toBe(0);
    expect(raw(show.stdout)).toEqual([]);
    // The summary is the agent's words, labelled and indented as the review view shows them.
    expect(show.stdout).toContain("the agent says (its own words, not checked by Airlock):");
    expect(show.stdout).toContain("line one\n    ␛[1Aline two\\u009b31m");
    expect(show.stdout).toContain("1. step␛[8m hidden");
    expect(show.stdout).toContain("bidi\\u202etxt.exe");

    const json = await airlock(["show", id, "--json"]);
    expect(raw(json.stdout)).toEqual([]);
    expect(JSON.parse(json.stdout).args).toEqual({ note: "bidi\u202etxt.exe", c1: "\u009b2J" });
  });

  it("request --wait that times out prints its JSON and no error or stack trace", async () => {
    const r = await airlock([
      "request",
      "--title",
      `Quick${CLEAR}`,
      "--timeout",
      "1",
      "--wait",
      "--requester",
      "bot",
    ]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: "timed_out" });
    expect(raw(r.stderr)).toEqual([]);
    // The line saying what it waits for, the engine's "Human review timeout" warning, and no error
    // log or stack trace (the store was once closed under the sweeper: "the SQLite store is closed").
    const lines = r.stderr.trim().split("\n");
    expect(lines[0]).toMatch(/^waiting for a decision on req_\S+ \(Quick␛\[2J\)$/);
    for (const line of lines.slice(1)) {
      const entry = JSON.parse(line) as { level: number; msg: string };
      expect(entry).toMatchObject({ level: 40, msg: "Human review timeout" });
    }
    expect(r.stderr).not.toMatch(/closed|stack|Error/);
  });

  it("cancel on the local database records channel cli", async () => {
    const engine = await createAirlock({ store: sqliteStore(db), sweeper: false });
    const { id } = await engine.request({ title: "Cancel me", requester: "bot" });
    await engine.close();
    const r = await airlock(["cancel", id, "--reason", "not needed", "--as", "bot"]);
    expect(r.code).toBe(0);
    const shown = JSON.parse((await airlock(["show", id, "--json"])).stdout);
    expect(shown.status).toBe("cancelled");
    expect(shown.decision.channel).toBe("cli");
  });

  it("--version prints the package's version", async () => {
    const { version } = (await import("../../package.json", { with: { type: "json" } })).default;
    for (const flag of ["--version", "-V"]) {
      const r = await airlock([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(version);
    }
  });

  it("demo without a name lists the five examples with what each shows", async () => {
    const r = await airlock(["demo"]);
    expect(r.code).toBe(0);
    for (const name of [
      "research-reflection",
      "robot-plan",
      "hitl-tools",
      "file-approval",
      "research-two-phase",
    ]) {
      expect(r.stdout).toMatch(new RegExp(`^  ${name} +\\S.{20,}$`, "m"));
    }
    const bad = await airlock(["demo", "nope"]);
    expect(bad.code).toBe(4);
    expect(bad.stderr.trim()).toBe(
      "airlock: no example called `nope`; choose one of research-reflection, robot-plan, hitl-tools, file-approval, research-two-phase",
    );
  });
});
