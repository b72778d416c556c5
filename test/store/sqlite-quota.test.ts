// Per-agent quotas on SQLite: an agent's pending requests and bytes are counted from the quota index
// alone (migration 10 put each pending request's size in its entries), also on a database made
// before that migration, which upgrades in place.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, expect, it } from "vitest";
import { SQLITE_PENDING_USAGE_SQL, sqliteStore } from "../../src/store/sqlite.js";
import { request } from "../audit/fixtures.js";
import { tempDir } from "../helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

it("counts an agent's pending requests from the index alone, after upgrading an older database", async () => {
  const t = tempDir("airlock-quota-");
  cleanups.push(t.cleanup);
  const path = join(t.dir, "quota.db");
  const first = sqliteStore(path);
  cleanups.push(() => first.close());
  const mine = ["req_q1", "req_q2", "req_q3"].map((id) => request(id, { requester: "bot" }));
  for (const r of [...mine, request("req_other", { requester: "other" })]) {
    await first.insertRequest(r, [
      { type: "created", requestId: r.id, actor: r.requester, at: r.createdAt, data: {} },
    ]);
  }
  await first.close();

  // The database as migration 9 left it: the index without the sizes (and none of the later
  // migrations: the trust rules' scope of migration 11, the execution columns of 12 and the
  // tickets of 13 gone too).
  const old = new Database(path);
  old.exec(`
    DROP INDEX requests_pending_requester;
    CREATE INDEX requests_pending_requester ON requests (requester) WHERE status = 'pending';
    ALTER TABLE trust_rules DROP COLUMN scope;
    DROP INDEX requests_claim_lease;
    DROP INDEX requests_unknown_execution;
    ALTER TABLE requests DROP COLUMN execution;
    ALTER TABLE requests DROP COLUMN lease_until;
    DROP TABLE tickets;
    DELETE FROM airlock_migrations WHERE version >= 10;`);
  expect(planOf(old)).not.toMatch(/COVERING INDEX/);
  old.close();

  const store = sqliteStore(path);
  cleanups.push(() => store.close());
  const bytes = mine.reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r)), 0);
  expect(await store.pendingUsage("bot")).toEqual({ count: 3, bytes });
  const upgraded = new Database(path, { readonly: true });
  cleanups.push(() => {
    upgraded.close();
  });
  expect(planOf(upgraded)).toMatch(/USING COVERING INDEX requests_pending_requester/);
});

function planOf(db: Database.Database): string {
  return db
    .prepare<[string], { detail: string }>(`EXPLAIN QUERY PLAN ${SQLITE_PENDING_USAGE_SQL}`)
    .all("bot")
    .map((r) => r.detail)
    .join("\n");
}
