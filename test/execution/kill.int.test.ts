// Killed between decision and outcome: a worker runs approved requests through runApproved and is
// killed with SIGKILL at random points (before its claim, between claim and tool, between tool and
// report), again and again, then a last worker runs to the end. Counted against the tool's own record
// of what ran: no call that is not idempotent ran twice; the log says `executed` only for calls whose
// side effect exists; every approved call ends executed or, when its worker died between claim and
// report, execution_unknown once its lease ran out. On SQLite and on PostgreSQL.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { postgresStore } from "../../src/store/postgres.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { builtIsCurrent, tempDir } from "../helpers.js";
import { describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CHILD = join(import.meta.dirname, "kill-child.mjs");
const REQUESTS = 24;
const KILLS = 6;
const LEASE_MS = 250;

const dirs: { cleanup(): void }[] = [];
afterAll(() => {
  for (const d of dirs) d.cleanup();
});

interface Target {
  store: "sqlite" | "postgres";
  db: string;
  schema?: string;
  open(): Airlock | Promise<Airlock>;
}

/** The engine's modules for the worker: the built package when current (fast), else the sources. */
function entries(store: Target["store"]): { args: string[]; entry: string; storeEntry: string } {
  const built = builtIsCurrent();
  const file = (p: string) => pathToFileURL(join(ROOT, p)).href;
  const storeFile = store === "sqlite" ? "store/sqlite-entry" : "store/postgres-entry";
  return built
    ? { args: [], entry: file("dist/src/index.js"), storeEntry: file(`dist/src/${storeFile}.js`) }
    : {
        args: ["--import", "tsx"],
        entry: file("src/index.ts"),
        storeEntry: file(`src/${storeFile}.ts`),
      };
}

/** Runs a worker; kills it `killAfterMs` after it said ready (undefined: lets it finish). */
function runWorker(
  t: Target,
  files: { ids: string; effects: string },
  killAfterMs: number | undefined,
): Promise<"killed" | "done"> {
  const e = entries(t.store);
  const child = spawn(process.execPath, [...e.args, CHILD], {
    env: {
      ...process.env,
      ENTRY: e.entry,
      STORE_ENTRY: e.storeEntry,
      STORE: t.store,
      DB: t.db,
      SCHEMA: t.schema ?? "",
      IDS: files.ids,
      EFFECTS: files.effects,
      LEASE_MS: String(LEASE_MS),
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    const limit = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`worker did not finish in 60 s: ${out}`));
    }, 60_000);
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("ready") && killAfterMs !== undefined && !child.killed) {
        setTimeout(() => child.kill("SIGKILL"), killAfterMs);
      }
    });
    child.on("exit", (code, signal) => {
      clearTimeout(limit);
      if (signal === "SIGKILL") resolve("killed");
      else if (code === 0 && out.includes("done")) resolve("done");
      else reject(new Error(`worker exited with ${code ?? signal}: ${out}`));
    });
  });
}

async function killAndCount(t: Target) {
  const dir = tempDir("airlock-kill-");
  dirs.push(dir);
  const files = { ids: join(dir.dir, "ids"), effects: join(dir.dir, "effects") };
  writeFileSync(files.effects, "");
  const engine = await t.open();
  try {
    const ids: string[] = [];
    const idempotent = new Set<string>();
    for (let i = 0; i < REQUESTS; i++) {
      const r = await engine.request({
        title: `transfer ${i}`,
        requester: "bot",
        ...(i % 4 === 3 ? { idempotent: true } : {}),
      });
      await engine.decide(r.id, { outcome: "approved", reviewer: "alice" });
      ids.push(r.id);
      if (i % 4 === 3) idempotent.add(r.id);
    }
    writeFileSync(files.ids, `${ids.join("\n")}\n`);
    let killed = 0;
    for (let k = 0; k < KILLS; k++) {
      if ((await runWorker(t, files, Math.floor(Math.random() * 250))) === "killed") killed++;
    }
    expect(await runWorker(t, files, undefined)).toBe("done");
    // Past every lease: the claims of the killed workers that never reported are unknown now.
    await new Promise((r) => setTimeout(r, LEASE_MS + 50));
    await engine.sweep();

    const effects = readFileSync(files.effects, "utf8").split("\n").filter(Boolean);
    const ran = (id: string) => effects.filter((e) => e === id).length;
    const tally = { executed: 0, unknownRan: 0, unknownNotRan: 0, reran: 0 };
    for (const id of ids) {
      const r = await engine.get(id);
      const events = (await engine.audit({ requestId: id })).map((e) => e.type);
      const executed = events.filter((e) => e === "executed").length;
      expect(executed, `${id}: executed once at most`).toBeLessThanOrEqual(1);
      if (!idempotent.has(id)) expect(ran(id), `${id} ran at most once`).toBeLessThanOrEqual(1);
      if (ran(id) > 1) tally.reran++;
      // The log never says executed for a call whose side effect is absent.
      if (executed === 1) expect(ran(id), `${id} is logged executed`).toBeGreaterThanOrEqual(1);
      const state = r.execution?.state;
      expect(["executed", "unknown"], `${id} ends executed or unknown`).toContain(state);
      if (state === "executed") tally.executed++;
      else if (ran(id) > 0) tally.unknownRan++;
      else tally.unknownNotRan++;
      // Not known to have run: claimed by a worker that died before it reported.
      if (state === "unknown") expect(events.slice(-2)).toEqual(["claimed", "execution_unknown"]);
    }
    expect(killed).toBeGreaterThan(0);
    expect(tally.executed).toBeGreaterThan(0);
    expect((await engine.verifyAudit()).ok).toBe(true);
    process.stderr.write(
      `[kill ${t.store}] ${REQUESTS} approved, ${killed} workers killed: ${JSON.stringify(tally)}\n`,
    );
    return tally;
  } finally {
    await engine.close();
  }
}

describe("SIGKILL between decision and outcome (SQLite)", () => {
  it("the log matches the tool's own record of what ran", async () => {
    const dir = tempDir("airlock-kill-db-");
    dirs.push(dir);
    const db = join(dir.dir, "airlock.db");
    await killAndCount({
      store: "sqlite",
      db,
      open: () => createAirlock({ store: sqliteStore(db) }),
    });
  }, 120_000);
});

await describePg("SIGKILL between decision and outcome (PostgreSQL)", ({ url }) => {
  const schema = freshSchema();
  afterAll(() => dropSchema(url, schema));
  it("the log matches the tool's own record of what ran", async () => {
    await killAndCount({
      store: "postgres",
      db: url,
      schema,
      open: () => createAirlock({ store: postgresStore(url, { schema, max: 2 }) }),
    });
  }, 120_000);
});
