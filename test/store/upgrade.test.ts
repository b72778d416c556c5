// A database made before the list columns existed (migration 1 only) upgrades in place: the new
// columns are filled from the stored documents, and listings then read columns only.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { summaryOf } from "../../src/store/paging.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { applySqliteMigrations } from "../../src/store/sqlite-migrate.js";
import { SQLITE_MIGRATIONS } from "../../src/store/sqlite-migrations.js";
import { request } from "../audit/fixtures.js";
import { tempDir } from "../helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Writes `rs` as the version-1 store did. */
function version1(db: string, rs: ApprovalRequest[]) {
  const d = new Database(db);
  applySqliteMigrations(d, "airlock_migrations", SQLITE_MIGRATIONS.slice(0, 1));
  const insert = d.prepare(
    `INSERT INTO requests (id, key, action, status, requester, approvers, deadline, created_at, decided_at, version, doc)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const r of rs) {
    insert.run(
      r.id,
      r.key ?? null,
      r.action,
      r.status,
      r.requester,
      JSON.stringify(r.approvers),
      r.status === "pending" ? (r.deadline ?? null) : null,
      r.createdAt,
      r.decision?.decidedAt ?? null,
      r.version,
      JSON.stringify(r),
    );
  }
  d.close();
}

describe("upgrading a SQLite database to the list columns", () => {
  it("fills the columns from the documents; summaries, usage and keys then work", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const db = join(t.dir, "old.db");
    const a = request("req_a", {
      key: "same",
      requester: "agent-a",
      risk: "high",
      confidence: 77,
      deadline: 5000,
      items: [{ id: "x", label: "X" }],
      preview: "p".repeat(1000),
    });
    const b: ApprovalRequest = {
      ...request("req_b", { requester: "agent-b" }),
      status: "approved",
      version: 2,
      decision: {
        outcome: "approved",
        method: "approve_all",
        reviewer: "alice",
        channel: "web",
        decidedAt: 1_700_000_000_500,
      },
    };
    version1(db, [a, b]);
    const store = sqliteStore(db);
    cleanups.push(() => store.close());
    expect((await store.listSummaries({ order: "oldest" })).items).toEqual([
      summaryOf(a),
      summaryOf(b),
    ]);
    expect(await store.pendingUsage("agent-a")).toEqual({
      count: 1,
      bytes: Buffer.byteLength(JSON.stringify(a)),
    });
    // The global key index became one per requester.
    const other = request("req_c", { key: "same", requester: "agent-b" });
    expect((await store.insertRequest(other, [])).created).toBe(true);
    expect(
      (await store.insertRequest(request("req_d", { key: "same", requester: "agent-a" }), []))
        .request.id,
    ).toBe("req_a");
  });

  it("listing summaries reads no document: a corrupt document does not disturb it", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const db = join(t.dir, "a.db");
    const store = sqliteStore(db);
    cleanups.push(() => store.close());
    const r = request("req_1", { args: { big: "z".repeat(100_000) } });
    await store.insertRequest(r, []);
    const d = new Database(db);
    d.prepare("UPDATE requests SET doc = '{not json' WHERE id = 'req_1'").run();
    d.close();
    await expect(store.listRequests({})).rejects.toThrow();
    expect((await store.listSummaries({})).items).toEqual([summaryOf(r)]);
  });
});
