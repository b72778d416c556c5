// The SQLite outbox shared by several connections to one file: concurrent claimers get each row
// exactly once, and a claim or settle that meets another connection's write lock waits on timers and
// then fails with store_unavailable, as every other write does.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { OutboxDraft, OutboxMessage } from "../../src/core/outbox.js";
import type { Store } from "../../src/core/store.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { builtIsCurrent, tempDir } from "../helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tmpFile(): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return join(t.dir, "airlock.db");
}

function open(file: string, options: Parameters<typeof sqliteStore>[1] = {}): Store {
  const store = sqliteStore(file, options);
  cleanups.push(() => store.close());
  return store;
}

const drafts = (n: number): OutboxDraft[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `msg_${String(i).padStart(4, "0")}`,
    target: i % 2 ? "slack" : "email",
    topic: "test",
    payload: { i },
    availableAt: 1000 + (i % 7),
  }));

/** Claims and settles in a loop until `total` rows are claimed by all claimers together, bounded
 * in rounds and time. Returns the ids this claimer got. */
async function claimer(
  store: Store,
  owner: string,
  claimed: { count: number },
  total: number,
): Promise<string[]> {
  const got: string[] = [];
  const stopAt = Date.now() + 30_000;
  for (let round = 0; round < 2000 && claimed.count < total && Date.now() < stopAt; round++) {
    const batch: OutboxMessage[] = await store.claimOutbox({
      now: 2000,
      limit: 7,
      leaseMs: 600_000,
      owner,
    });
    claimed.count += batch.length;
    for (const m of batch) {
      got.push(m.id);
      expect(m).toMatchObject({ leaseOwner: owner, attempts: 1 });
      expect(await store.settleOutbox(m.id, owner, { status: "delivered" })).toBe(true);
    }
    // Let the other claimer in between rounds.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return got;
}

// Another process claiming from the same file: plain JavaScript run by node, importing the store as
// built when dist/ is current, else its TypeScript with tsx loaded. It prints one line per row it claimed, and stops after 20 empty
// rounds in a row (or its round and time bounds).
const CHILD = `
const { sqliteStore } = await import(process.env.STORE_MODULE);
const store = sqliteStore(process.env.DB, { lockWaitMs: 10000 });
console.log("ready");
let empty = 0;
const stopAt = Date.now() + 30000;
for (let round = 0; round < 5000 && Date.now() < stopAt; round++) {
  const batch = await store.claimOutbox({ now: 2000, limit: 3, leaseMs: 600000, owner: "child" });
  for (const m of batch) {
    console.log("claimed " + m.id + " " + m.attempts);
    const ok = await store.settleOutbox(m.id, "child", { status: "delivered" });
    if (!ok) console.log("lost " + m.id);
  }
  if (batch.length > 0) empty = 0;
  else if (++empty >= 20) break;
  await new Promise((resolve) => setTimeout(resolve, batch.length ? 0 : 5));
}
await store.close();
console.log("done");
`;

const built = builtIsCurrent();
const STORE_MODULE = built ? "../../dist/src/store/sqlite.js" : "../../src/store/sqlite.ts";

function startClaimerProcess(file: string) {
  const child = spawn(
    process.execPath,
    [...(built ? [] : ["--import", "tsx"]), "--input-type=module", "--eval", CHILD],
    {
      env: {
        ...process.env,
        DB: file,
        STORE_MODULE: fileURLToPath(new URL(STORE_MODULE, import.meta.url)),
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
  });
  const lines = () => out.split("\n").filter(Boolean);
  /** Resolves once a line equals `line`; fails with the child's stderr after 30 s or on exit. */
  const until = async (line: string) => {
    const stopAt = Date.now() + 30_000;
    while (!lines().includes(line)) {
      if (Date.now() > stopAt || child.exitCode !== null) {
        throw new Error(`the claimer process never printed "${line}"; stderr: ${err}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  return { lines, until, exited };
}

describe("SQLite outbox across connections", () => {
  it("another process and this one claiming 200 rows of one file get each row exactly once", async () => {
    const file = tmpFile();
    const store = open(file);
    expect(await store.enqueueOutbox(drafts(200))).toBe(200);
    const other = startClaimerProcess(file);
    await other.until("ready");
    const mine: string[] = [];
    const stopAt = Date.now() + 30_000;
    for (let round = 0; round < 5000 && Date.now() < stopAt; round++) {
      const batch = await store.claimOutbox({ now: 2000, limit: 3, leaseMs: 600_000, owner: "me" });
      for (const m of batch) {
        mine.push(m.id);
        expect(m.attempts).toBe(1);
        expect(await store.settleOutbox(m.id, "me", { status: "delivered" })).toBe(true);
      }
      if ((await store.listOutbox({ status: "pending", limit: 1 })).length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, batch.length ? 0 : 5));
    }
    await other.until("done");
    expect(await other.exited).toBe(0);
    const theirs = other
      .lines()
      .filter((l) => l.startsWith("claimed "))
      .map((l) => {
        const [, id, attempts] = l.split(" ");
        expect(attempts).toBe("1");
        return id as string;
      });
    expect(other.lines().filter((l) => l.startsWith("lost "))).toEqual([]);
    const all = [...mine, ...theirs];
    expect(all).toHaveLength(200);
    expect(new Set(all).size).toBe(200);
    const rows = await store.listOutbox({ limit: 1000 });
    expect(rows.every((m) => m.status === "delivered" && m.attempts === 1)).toBe(true);
  });

  it("two connections to one file claiming 200 rows in loops get each row exactly once", async () => {
    const file = tmpFile();
    const a = open(file);
    const b = open(file);
    expect(await a.enqueueOutbox(drafts(200))).toBe(200);
    const claimed = { count: 0 };
    const [gotA, gotB] = await Promise.all([
      claimer(a, "A", claimed, 200),
      claimer(b, "B", claimed, 200),
    ]);
    const all = [...gotA, ...gotB];
    expect(all).toHaveLength(200);
    expect(new Set(all).size).toBe(200);
    // Both took part (each round takes at most 7 of the 200).
    expect(gotA.length).toBeGreaterThan(0);
    expect(gotB.length).toBeGreaterThan(0);
    const rows = await b.listOutbox({ limit: 1000 });
    expect(rows.every((m) => m.status === "delivered" && m.attempts === 1)).toBe(true);
    expect(await a.claimOutbox({ now: 10_000_000, limit: 10, leaseMs: 10, owner: "A" })).toEqual(
      [],
    );
  });

  it("a claim or settle meeting another connection's write lock fails with store_unavailable, then works", async () => {
    const file = tmpFile();
    const store = open(file, { lockWaitMs: 150, busyTimeoutMs: 5 });
    await store.enqueueOutbox(drafts(2));
    const [first] = await store.claimOutbox({ now: 2000, limit: 1, leaseMs: 1000, owner: "A" });
    if (!first) throw new Error("nothing claimed");

    const holder = new Database(file);
    cleanups.push(() => {
      if (holder.open) holder.close();
    });
    holder.pragma("busy_timeout = 5");
    holder.exec("BEGIN IMMEDIATE");
    await expect(
      store.claimOutbox({ now: 2000, limit: 5, leaseMs: 1000, owner: "A" }),
    ).rejects.toMatchObject({ code: "store_unavailable", message: /locked by another process/ });
    await expect(store.settleOutbox(first.id, "A", { status: "delivered" })).rejects.toMatchObject({
      code: "store_unavailable",
    });
    await expect(store.enqueueOutbox(drafts(3))).rejects.toMatchObject({
      code: "store_unavailable",
    });
    // Reads go on meanwhile.
    expect(await store.listOutbox({})).toHaveLength(2);
    holder.exec("COMMIT");
    holder.close();

    expect(await store.settleOutbox(first.id, "A", { status: "delivered" })).toBe(true);
    const rest = await store.claimOutbox({ now: 2000, limit: 5, leaseMs: 1000, owner: "A" });
    expect(rest.map((m) => m.attempts)).toEqual([1]);
    expect(await store.enqueueOutbox(drafts(3))).toBe(1);
  });
});
