// Deadline order on the SQLite store reads a partial index of the pending requests only (migration
// 14): a decision deletes its entry there and writes none for its new status. Listing a decided
// status in deadline order walks (status, id) instead, which is the same order (a decided request
// has no live deadline). Each listing shape is checked for its rows, its pages and its plan (an
// index that gives the order, no sort of the table), and a database made before migration 14 upgrades.
import { join } from "node:path";
import type Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import type { ListFilter, Store } from "../../src/core/store.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { request } from "../audit/fixtures.js";
import { tempDir } from "../helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Opened {
  store: Store;
  db: Database.Database;
  /** Every SQL text the store prepared since it opened. */
  prepared: string[];
}

function open(path: string): Opened {
  let db: Database.Database | undefined;
  const prepared: string[] = [];
  const store = sqliteStore(path, {
    checkpointThread: false,
    configure: (d) => {
      db = d;
      const prepare = d.prepare.bind(d);
      d.prepare = ((sql: string) => {
        prepared.push(sql);
        return prepare(sql);
      }) as typeof d.prepare;
    },
  });
  cleanups.push(() => store.close());
  if (!db) throw new Error("no database handed over");
  return { store, db, prepared };
}

function tmpDb(): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return join(t.dir, "a.db");
}

const T0 = 1_700_000_000_000;

/** 12 pending requests (some without a deadline, deadlines out of id order) and 12 decided ones. */
async function fill(store: Store): Promise<ApprovalRequest[]> {
  const all: ApprovalRequest[] = [];
  for (let i = 0; i < 24; i++) {
    const pending = i % 2 === 0;
    const r = request(`req_${String(i).padStart(2, "0")}`, {
      createdAt: T0 + i,
      updatedAt: T0 + i,
      ...(pending && i % 3 !== 0 ? { deadline: T0 + 1_000_000 - i * 1000 } : {}),
      ...(pending
        ? {}
        : {
            status: i % 4 === 1 ? "approved" : "rejected",
            decision: {
              outcome: i % 4 === 1 ? "approved" : "rejected",
              method: i % 4 === 1 ? "approve_all" : "reject",
              reviewer: "alice",
              channel: "api",
              decidedAt: T0 + i,
            },
          }),
    });
    await store.insertRequest(r, [
      { type: "created", requestId: r.id, actor: "writer", at: T0, data: {} },
    ]);
    all.push(r);
  }
  return all;
}

/** Every page of a listing, two rows at a time. */
async function allPages(store: Store, filter: ListFilter): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 50; n++) {
    const page = await store.listRequests({ ...filter, limit: 2, cursor });
    ids.push(...page.items.map((r) => r.id));
    cursor = page.nextCursor;
    if (!cursor) return ids;
  }
  throw new Error("the listing never ended");
}

const byDeadline = (rs: ApprovalRequest[]) =>
  [...rs]
    .sort(
      (a, b) =>
        (a.deadline ?? 9e15) - (b.deadline ?? 9e15) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    )
    .map((r) => r.id);
const byId = (rs: ApprovalRequest[]) => rs.map((r) => r.id).sort();

function plan(db: Database.Database, sql: string): string {
  const params = (sql.match(/\?/g) ?? []).map(() => "x");
  return db
    .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
    .all(...params)
    .map((r) => r.detail)
    .join(" | ");
}

describe("SQLite deadline order from the pending requests' index", () => {
  it("lists every shape in its order, page after page", async () => {
    const { store } = open(tmpDb());
    const all = await fill(store);
    const pending = all.filter((r) => r.status === "pending");
    const approved = all.filter((r) => r.status === "approved");
    const decided = all.filter((r) => r.status !== "pending");
    expect(await allPages(store, { status: "pending", order: "deadline" })).toEqual(
      byDeadline(pending),
    );
    expect(await allPages(store, { status: "approved", order: "deadline" })).toEqual(
      byId(approved),
    );
    expect(await allPages(store, { status: ["approved", "rejected"], order: "deadline" })).toEqual(
      byId(decided),
    );
    expect(await allPages(store, { status: ["pending", "approved"], order: "deadline" })).toEqual(
      byDeadline([...pending, ...approved]),
    );
    expect(await allPages(store, { order: "deadline" })).toEqual(byDeadline(all));
    expect(await allPages(store, { status: "pending" })).toEqual(byId(pending).reverse());
    // A cursor of a pending listing in deadline order, handed to a decided one: past every row.
    const first = await store.listRequests({ status: "pending", order: "deadline", limit: 1 });
    expect(
      (
        await store.listRequests({
          status: "approved",
          order: "deadline",
          cursor: first.nextCursor,
        })
      ).items.map((r) => r.id),
    ).toEqual(byId(approved));
    expect(
      (await store.listRequests({ status: "approved", order: "deadline", cursor: "1e16:x" })).items,
    ).toEqual([]);
    expect(await store.countRequests({ status: "pending" })).toBe(12);
    expect(await store.nextDeadline()).toBe(Math.min(...pending.map((r) => r.deadline ?? 9e15)));
  });

  it("reads an index that gives the order: the pending one, or (status, id) for decided statuses", async () => {
    const { store, db, prepared } = open(tmpDb());
    await fill(store);
    const sqlOf = async (filter: ListFilter) => {
      const from = prepared.length;
      const page = await store.listRequests({ ...filter, limit: 2 });
      await store.listRequests({ ...filter, limit: 2, cursor: page.nextCursor });
      return prepared.slice(from);
    };
    const pendingSql = await sqlOf({ status: "pending", order: "deadline" });
    expect(pendingSql).toHaveLength(2);
    for (const sql of pendingSql) {
      expect(plan(db, sql)).toMatch(/USING INDEX requests_pending_deadline_id/);
      expect(plan(db, sql)).not.toMatch(/TEMP B-TREE/);
    }
    const approvedSql = await sqlOf({ status: "approved", order: "deadline" });
    expect(approvedSql).toHaveLength(2);
    for (const sql of approvedSql) {
      expect(plan(db, sql)).toMatch(/USING INDEX requests_status_id \(status=\?/);
      expect(plan(db, sql)).not.toMatch(/TEMP B-TREE/);
    }
    // The sweeper's statements, prepared when the store opened.
    const sweeps = prepared.filter((s) => /INDEXED BY requests_pending_deadline_id/.test(s));
    expect(sweeps).toHaveLength(2);
    for (const sql of sweeps) expect(plan(db, sql)).toMatch(/requests_pending_deadline_id/);
  });

  it("a database made before migration 14 upgrades: the pending index holds exactly the pending rows", async () => {
    const path = tmpDb();
    const first = open(path);
    const all = await fill(first.store);
    await first.store.close();
    // As migration 13 left it: the full (status, deadline key, id) index, and no 14.
    const { default: Sqlite } = await import("better-sqlite3");
    const raw = new Sqlite(path);
    raw.exec(`DROP INDEX requests_pending_deadline_id;
      CREATE INDEX requests_status_deadline_id ON requests (status, COALESCE(deadline, 9e15), id);
      DELETE FROM airlock_migrations WHERE version = 14;`);
    raw.close();
    const { store, db } = open(path);
    const indexes = db
      .prepare<[], { name: string }>(
        "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'requests' AND name LIKE '%deadline%'",
      )
      .all()
      .map((r) => r.name);
    expect(indexes).toEqual(["requests_pending_deadline_id"]);
    const entries = db
      .prepare<[], { n: number }>(
        "SELECT COUNT(*) AS n FROM requests INDEXED BY requests_pending_deadline_id WHERE status = 'pending'",
      )
      .get();
    expect(entries?.n).toBe(12);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(await allPages(store, { status: "pending", order: "deadline" })).toEqual(
      byDeadline(all.filter((r) => r.status === "pending")),
    );
  });
});
