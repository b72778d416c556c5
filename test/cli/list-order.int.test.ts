// `airlock list --order newest | oldest | deadline` on the local database.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAirlock } from "../../src/engine/engine.js";
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

function airlock(args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, AIRLOCK_DB: db };
  delete env.AIRLOCK_URL;
  return runCli(args, env);
}

describe("airlock list --order", () => {
  it("lists newest first by default, oldest first, or soonest deadline first", async () => {
    const engine = await createAirlock({ store: sqliteStore(db), sweeper: false });
    const late = await engine.request({ title: "late", requester: "bot", timeoutMs: 3_600_000 });
    const none = await engine.request({ title: "no deadline", requester: "bot" });
    const soon = await engine.request({ title: "soon", requester: "bot", timeoutMs: 60_000 });
    await engine.close();
    const ids = async (...args: string[]) => {
      const r = await airlock(["list", "--json", ...args]);
      expect(r.code).toBe(0);
      return (JSON.parse(r.stdout) as { items: { id: string }[] }).items.map((i) => i.id);
    };
    expect(await ids()).toEqual([soon.id, none.id, late.id]);
    expect(await ids("--order", "newest")).toEqual([soon.id, none.id, late.id]);
    expect(await ids("--order", "oldest")).toEqual([late.id, none.id, soon.id]);
    expect(await ids("--order", "deadline")).toEqual([soon.id, late.id, none.id]);

    const page = await airlock(["list", "--order", "deadline", "--limit", "1"]);
    expect(page.stdout).toMatch(/soon/);
    expect(page.stdout).not.toMatch(/late/);

    const bad = await airlock(["list", "--order", "urgent"]);
    expect(bad.code).toBe(4);
    expect(bad.stderr.trim()).toBe(
      "airlock: --order expects one of newest, oldest, deadline, got `urgent`",
    );
  });
});
