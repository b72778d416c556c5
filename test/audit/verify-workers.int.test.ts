// verifyAuditLog hashing on worker threads (src/audit/hash-pool.ts) reports exactly what it reports
// on one thread: the same result for an intact log, and the same first failure for tampering of
// every kind, wherever the pages fall (an altered event before or after a broken link, in the same
// page or not, an edited hash column, a deleted row, a checkpoint that differs). The workers run
// the built package's hash-worker.js, so this suite runs against dist/ (`npm test` builds first).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { verifyAuditLog as VerifyAuditLog } from "../../src/audit/verify.js";
import type { AuditDraft } from "../../src/core/schemas.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { builtIsCurrent, builtModule, tempDir } from "../helpers.js";
import { createAndDecide } from "./fixtures.js";

const KEY = "k".repeat(32);
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const built = builtIsCurrent();
if (!built) {
  console.warn(
    "verify-workers: dist/ is older than the sources; run `npm run build` (npm test does)",
  );
}
// CI runs `npm test`, which builds first: there the suite must not go quiet.
it.runIf(!built && process.env.CI)("runs on a current build in CI", () => {
  expect(built).toBe(true);
});

/** A keyed log of 60 requests (created, decided) and 180 notes with nested data: 300 events. */
async function seeded(checkpointFile?: (dir: string) => string) {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const db = join(t.dir, "a.db");
  const store = sqliteStore(db, {
    auditKey: KEY,
    ...(checkpointFile ? { checkpointFile: checkpointFile(t.dir) } : {}),
  });
  cleanups.push(() => store.close());
  for (let i = 0; i < 60; i++) {
    await createAndDecide(
      store,
      `req_w${String(i).padStart(3, "0")}`,
      i % 2 ? "approved" : "rejected",
    );
    const notes: AuditDraft[] = [0, 1, 2].map((j) => ({
      type: "notified",
      actor: "system",
      at: 1_700_000_000_000 + i * 10 + j,
      data: { to: ["b", "a"], n: i * 3 + j, meta: { z: j, a: "é" } },
    }));
    await store.appendAudit(notes);
  }
  return { db, store, dir: t.dir };
}

function sql(db: string, ...statements: string[]) {
  const d = new Database(db);
  try {
    for (const s of statements) d.prepare(s).run();
  } finally {
    d.close();
  }
}

const altered = (seq: number) =>
  `UPDATE audit SET data = replace(data, '"n":', '"n":1') WHERE seq = ${seq}`;
const relinked = (seq: number) =>
  `UPDATE audit SET prev_hash = '${"e".repeat(64)}' WHERE seq = ${seq}`;

describe.skipIf(!built)("verifyAuditLog on worker threads (built package)", () => {
  const load = async () => {
    const { hashWorkersAvailable } =
      await builtModule<typeof import("../../src/audit/hash-pool.js")>("src/audit/hash-pool.js");
    expect(hashWorkersAvailable()).toBe(true);
    return (await builtModule<typeof import("../../src/audit/verify.js")>("src/audit/verify.js"))
      .verifyAuditLog as typeof VerifyAuditLog;
  };

  it("gives the one-thread result for an intact log, with every page size", async () => {
    const verify = await load();
    const { store } = await seeded();
    const alone = await verify(store, { key: KEY, workers: 0 });
    expect(alone).toMatchObject({ ok: true, count: 300, requests: 60 });
    for (const pageSize of [1, 7, 64, 5000]) {
      for (const workers of [1, 2, 3]) {
        expect(await verify(store, { key: KEY, workers, pageSize })).toEqual(alone);
      }
    }
  });

  const cases: [string, string[]][] = [
    ["an altered event", [altered(5)]],
    ["an altered event before a broken link, pages apart", [altered(30), relinked(200)]],
    ["a broken link before an altered event, pages apart", [relinked(40), altered(220)]],
    ["an altered event just before a broken link, same page", [altered(44), relinked(46)]],
    ["a broken link just before an altered event, same page", [relinked(44), altered(46)]],
    ["an altered event and its own link broken", [altered(50), relinked(50)]],
    ["an edited hash column", [`UPDATE audit SET hash = '${"f".repeat(64)}' WHERE seq = 60`]],
    ["a deleted row after an altered event", [altered(98), "DELETE FROM audit WHERE seq = 99"]],
    ["the last event altered", [altered(300)]],
    // Found by a review: the data as a BLOB of the same bytes (read as its text on both sides).
    [
      "data stored as a BLOB of its text",
      ["UPDATE audit SET data = CAST(data AS BLOB) WHERE seq = 2"],
    ],
    [
      "data nested too deep",
      [`UPDATE audit SET data = '{"a":${"[".repeat(6000)}${"]".repeat(6000)}}' WHERE seq = 3`],
    ],
  ];
  it.each(cases)("reports the same first failure as one thread: %s", async (_name, statements) => {
    const verify = await load();
    const { db, store } = await seeded();
    sql(db, ...statements);
    const alone = await verify(store, { key: KEY, workers: 0, pageSize: 7 });
    if (!statements[0]?.includes("BLOB")) expect(alone.ok).toBe(false);
    for (const pageSize of [7, 5000]) {
      expect(await verify(store, { key: KEY, workers: 2, pageSize })).toEqual(alone);
    }
  });

  it.each([[Number.NaN], [-1], [1.5], [17], [Number.POSITIVE_INFINITY]])(
    "refuses workers: %s",
    async (workers) => {
      const verify = await load();
      const { store } = await seeded();
      await expect(verify(store, { key: KEY, workers })).rejects.toThrow(
        /Expected `workers` to be a whole number from 0 to 16/,
      );
    },
  );

  it("an event that differs from a signed checkpoint, and is altered too, is reported as altered", async () => {
    const verify = await load();
    let file = "";
    const { db, store } = await seeded((dir) => {
      file = join(dir, "audit.checkpoints");
      return file;
    });
    await store.close(); // writes a checkpoint of the last event, #300
    expect(readFileSync(file, "utf8")).toContain('"seq":300');
    // Its hash column edited: it no longer matches its content (altered), nor the checkpoint.
    sql(db, `UPDATE audit SET hash = '${"f".repeat(64)}' WHERE seq = 300`);
    const again = sqliteStore(db, { auditKey: KEY });
    cleanups.push(() => again.close());
    const alone = await verify(again, { key: KEY, workers: 0, checkpointFile: file });
    const threaded = await verify(again, { key: KEY, workers: 2, checkpointFile: file });
    expect(alone).toMatchObject({
      ok: false,
      badSeq: 300,
      reason: expect.stringMatching(/altered/),
    });
    expect(threaded).toEqual(alone);
  });
});
