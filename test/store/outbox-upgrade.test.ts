// A SQLite database made before the outbox existed (migrations 1 and 2) upgrades in place: its
// requests stay, and a transition then writes its outbox messages with it.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { sqliteStore } from "../../src/store/sqlite.js";
import { applySqliteMigrations } from "../../src/store/sqlite-migrate.js";
import { SQLITE_MIGRATIONS } from "../../src/store/sqlite-migrations.js";
import { request } from "../audit/fixtures.js";
import { tempDir } from "../helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("upgrading a SQLite database to the outbox", () => {
  it("adds the outbox table; old requests transition and write their messages", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const file = join(t.dir, "v2.db");
    const a = request("req_a", { requester: "agent-a" });
    const d = new Database(file);
    applySqliteMigrations(d, "airlock_migrations", SQLITE_MIGRATIONS.slice(0, 2));
    d.prepare(
      `INSERT INTO requests (id, action, title, status, requester, approvers, created_at, updated_at, correlation_id, version, doc)
       VALUES (?, ?, ?, 'pending', ?, '[]', ?, ?, ?, 1, ?)`,
    ).run(
      a.id,
      a.action,
      a.title,
      a.requester,
      a.createdAt,
      a.updatedAt,
      a.correlationId,
      JSON.stringify(a),
    );
    expect(d.prepare("SELECT name FROM sqlite_master WHERE name = 'outbox'").get()).toBeUndefined();
    d.close();

    const store = sqliteStore(file);
    cleanups.push(() => store.close());
    expect(await store.getRequest(a.id)).toEqual(a);
    const next = { ...a, status: "cancelled" as const, version: 2, updatedAt: a.updatedAt + 1 };
    const res = await store.transition(
      next,
      1,
      [],
      [
        {
          id: "msg_1",
          target: "slack",
          topic: "cancelled",
          requestId: a.id,
          payload: { why: "test" },
        },
      ],
    );
    expect(res.ok).toBe(true);
    expect(await store.listOutbox({ requestId: a.id })).toMatchObject([
      { id: "msg_1", status: "pending", availableAt: next.updatedAt, payload: { why: "test" } },
    ]);

    const check = new Database(file, { readonly: true });
    cleanups.push(() => {
      check.close();
    });
    const versions = check
      .prepare<[], { version: number }>("SELECT version FROM airlock_migrations ORDER BY version")
      .all()
      .map((r) => r.version);
    expect(versions).toEqual(SQLITE_MIGRATIONS.map((m) => m.version));
    const indexes = check
      .prepare<[], { name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'outbox' AND sql IS NOT NULL ORDER BY name",
      )
      .all()
      .map((r) => r.name);
    expect(indexes).toEqual(["outbox_request", "outbox_status_available", "outbox_target_status"]);
  });
});
