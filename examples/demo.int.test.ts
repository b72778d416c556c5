// The demo runner: its engine options (the small-writes rule and the actions' schemas), a stop that
// prints one line instead of every agent's interruption and removes its files, and `airlock demo
// file-approval` applying the rule its banner announces.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqliteStore } from "../src/cli/context.js";
import { isAirlockError } from "../src/core/errors.js";
import { createAirlock } from "../src/engine/engine.js";
import { createServer } from "../src/server/server.js";
import { memoryTokenStore } from "../src/server/tokens.js";
import { sqliteStore } from "../src/store/sqlite.js";
import { runCli } from "../test/cli/run-cli.js";
import { demo, demoSchemas } from "./demo.js";
import { tempDir } from "./shared/testing.js";

let tmp: { dir: string; cleanup: () => void };
beforeEach(() => {
  tmp = tempDir("airlock-demo-test-");
});
afterEach(() => tmp.cleanup());

describe("the demo's schemas", () => {
  it("refuse an edit of approve_expense whose amount is not a positive number", async () => {
    const engine = await createAirlock({
      store: sqliteStore(":memory:"),
      sweeper: false,
      ...demo.engineOptions(),
    });
    try {
      const r = await engine.request({
        action: "approve_expense",
        title: "Approve expense EXP-311",
        args: { expenseId: "EXP-311", amount: 4800 },
        allowed: ["approve", "reject", "edit"],
        requester: "demo-agent",
      });
      for (const amount of ["lots", -5, 0]) {
        const refused = await engine
          .decide(r.id, {
            outcome: "approved",
            reviewer: "dana",
            editedArgs: { expenseId: "EXP-311", amount },
          })
          .catch((err: unknown) => err);
        expect(isAirlockError(refused) && refused.code).toBe("invalid_input");
        expect(String((refused as Error).message)).toMatch(/approve_expense/);
      }
      const edited = await engine.decide(r.id, {
        outcome: "approved",
        reviewer: "dana",
        editedArgs: { expenseId: "EXP-311", amount: 4000 },
      });
      expect(edited.decision?.editedArgs).toEqual({ expenseId: "EXP-311", amount: 4000 });
      // A request whose own arguments break the schema is refused as it is made.
      await expect(
        engine.request({
          action: "approve_expense",
          title: "bad",
          args: { expenseId: "EXP-1", amount: "lots" },
          requester: "demo-agent",
        }),
      ).rejects.toMatchObject({ code: "invalid_input" });
    } finally {
      await engine.close();
    }
  });

  it("cover every tool the hitl-tools agent calls", () => {
    expect(Object.keys(demoSchemas()).sort()).toEqual([
      "approve_expense",
      "delete_project",
      "send_bulk_notification",
      "sign_contract",
      "update_task_status",
    ]);
  });
});

describe("startDemoAgents", () => {
  it("stops with one line, not one failure per interrupted agent, and removes its files", async () => {
    const engine = await createAirlock({
      store: sqliteStore(join(tmp.dir, "demo.db")),
      ...demo.engineOptions(),
    });
    const tokens = memoryTokenStore();
    const server = createServer({ airlock: engine, auth: { tokens }, rateLimit: false });
    try {
      const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
      const lines: string[] = [];
      const agents = await demo.startDemoAgents({ url, tokens, print: (l) => lines.push(l) });
      // Wait until all five wait on people.
      const until = Date.now() + 20_000;
      for (;;) {
        const { items } = await engine.list({ status: "pending" });
        if (new Set(items.map((r) => r.action)).size >= 5) break;
        if (Date.now() > until) throw new Error(`the agents did not start:\n${lines.join("\n")}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const sandbox = /sandbox: (\S+)/.exec(
        lines.find((l) => l.startsWith("[file-approval] sandbox:")) ?? "",
      )?.[1] as string;
      expect(existsSync(sandbox)).toBe(true);
      const before = lines.length;
      await agents.stop();
      expect(lines.slice(before)).toEqual([
        "Demo stopped (5 agents); requests still pending are cancelled at the next start.",
      ]);
      expect(lines.join("\n")).not.toMatch(/failed|stopped:/);
      expect(existsSync(sandbox)).toBe(false);
    } finally {
      await server.close();
      await engine.close();
    }
  });
});

describe("an example run without a workDir", () => {
  it("works in a new folder under the system's temporary directory and removes it at the end", async () => {
    const engine = await createAirlock({
      store: sqliteStore(":memory:"),
      sweeper: false,
      ...demo.engineOptions(),
    });
    try {
      const lines: string[] = [];
      const example = demo.examples.find((e) => e.name === "file-approval");
      const run = example?.run({ airlock: engine, log: (l) => lines.push(l) });
      let finished = false;
      void run?.finally(() => {
        finished = true;
      });
      while (!finished) {
        for (const r of (await engine.list({ status: "pending" })).items) {
          await engine.decide(r.id, { outcome: "approved", reviewer: "dana" }).catch(() => {});
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      await run;
      const sandbox = /sandbox: (\S+)/.exec(lines[0] ?? "")?.[1];
      expect(sandbox).toBeDefined();
      expect(existsSync(sandbox as string)).toBe(false);
    } finally {
      await engine.close();
    }
  });
});

describe("airlock demo file-approval", () => {
  it("applies the small-write rule its banner announces, and removes its sandbox", async () => {
    const db = join(tmp.dir, "airlock.db");
    const env: NodeJS.ProcessEnv = { ...process.env, AIRLOCK_DB: db };
    delete env.AIRLOCK_URL;
    // The database exists already, keyed by its key file as every command makes it: the demo must
    // open it with that key.
    await openSqliteStore(db).close();
    const run = runCli(["demo", "file-approval"], env);
    // Approve what waits for a person; the small write must not be among them.
    const engine = await createAirlock({ store: openSqliteStore(db), sweeper: false });
    let result: Awaited<typeof run> | undefined;
    void run.then((r) => {
      result = r;
    });
    const decided: string[] = [];
    try {
      const until = Date.now() + 60_000;
      while (!result && Date.now() < until) {
        for (const r of (await engine.list({ status: "pending" })).items) {
          await engine.decide(r.id, { outcome: "approved", reviewer: "dana" }).then(
            () => decided.push(r.title),
            () => undefined,
          );
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await engine.close();
    }
    const done = await run;
    expect(done.code).toBe(0);
    expect(done.stderr).toContain("small writes pass by rule");
    expect(done.stdout).toMatch(/write NOTES\.md: .*\(approved by policy: /);
    expect(decided).toHaveLength(3);
    expect(decided.some((t) => t.includes("NOTES.md"))).toBe(false);
    const sandbox = /\[file-approval\] sandbox: (\S+)/.exec(done.stdout)?.[1];
    expect(sandbox).toBeDefined();
    expect(existsSync(sandbox as string)).toBe(false);
  });
});
