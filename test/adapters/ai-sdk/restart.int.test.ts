// The process that parked a conversation dies (SIGKILL); a new process continues it after the
// decision, from the durable request (SQLite) and the messages the app kept, and a second new
// process replaying the same parked history does not run the tool again.
import type { ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createAirlock } from "../../../src/index.js";
import { sqliteStore } from "../../../src/store/sqlite-entry.js";
import { startLineChild, tempDir } from "../../helpers.js";

const CHILD = fileURLToPath(new URL("./fixtures/restart-child.ts", import.meta.url));
const children: ChildProcess[] = [];
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const c of cleanups.splice(0)) c();
});

function startChild(args: string[]) {
  const c = startLineChild(CHILD, args);
  children.push(c.child);
  return c;
}

describe("airlock/ai-sdk across a restart", () => {
  it("a new process continues a conversation parked by a killed one, and the tool runs once", async () => {
    const tmp = tempDir("airlock-ai-sdk-");
    cleanups.push(tmp.cleanup);
    const db = join(tmp.dir, "airlock.db");
    const messages = join(tmp.dir, "messages.json");
    const parked = join(tmp.dir, "parked.json");
    const runs = join(tmp.dir, "runs.log");
    const ranLines = () => (existsSync(runs) ? readFileSync(runs, "utf8").trim().split("\n") : []);

    const first = startChild(["park", db, messages, runs]);
    const requestId = (await first.line("PARKED ")).slice("PARKED ".length);
    expect(requestId).toMatch(/^req_/);
    first.child.kill("SIGKILL");
    expect(await first.exited).toBeNull(); // killed, not exited
    copyFileSync(messages, parked);
    expect(ranLines()).toEqual([]);

    const second = startChild(["resume", db, messages, runs]);
    await second.line("WAITING");
    // A reviewer decides from another process (the inbox, the CLI): here a third engine on the file.
    const reviewer = await createAirlock({ store: sqliteStore(db), sweeper: false });
    try {
      expect((await reviewer.get(requestId)).status).toBe("pending");
      await reviewer.decide(requestId, { outcome: "approved", reviewer: "dana" });
      expect(await second.line("DONE ")).toBe('DONE pay returned {"paid":120,"to":"bob"}');
      expect(await second.exited).toBe(0);
      expect(ranLines()).toEqual(['{"to":"bob","amount":120}']);
      expect((await reviewer.get(requestId)).executedAt).toBeTypeOf("number");

      // Another process resumes the same parked history (a retried job, a second instance).
      const third = startChild(["resume", db, parked, runs]);
      const done = await third.line("DONE ");
      expect(await third.exited).toBe(0);
      expect(done).toContain("pay failed");
      expect(done).toContain("already executed");
      expect(ranLines()).toHaveLength(1);
    } finally {
      await reviewer.close();
    }
  }, 60_000);
});
