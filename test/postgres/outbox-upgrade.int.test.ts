// A PostgreSQL schema made before the outbox existed (migrations 1 and 2) upgrades in place: its
// requests stay, and a transition then writes its outbox messages with it.
import { afterAll, expect, it } from "vitest";
import { postgresStore } from "../../src/store/postgres.js";
import { POSTGRES_MIGRATIONS } from "../../src/store/postgres-migrations.js";
import { request } from "../audit/fixtures.js";
import { adminQuery, describePg, dropSchema, freshSchema } from "./pg-env.js";

await describePg("postgres upgrade to the outbox", ({ url }) => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const s of schemas) await dropSchema(url, s);
  });

  it("adds the outbox table; old requests transition and write their messages", async () => {
    const schema = freshSchema("airlock_upgrade_outbox");
    schemas.push(schema);
    const q = `"${schema}"`;
    await adminQuery(url, `CREATE SCHEMA ${q}`);
    await adminQuery(
      url,
      `CREATE TABLE ${q}.airlock_migrations (version integer PRIMARY KEY, applied_at double precision NOT NULL)`,
    );
    for (const m of POSTGRES_MIGRATIONS.slice(0, 2)) {
      await adminQuery(url, m.sql(q));
      await adminQuery(url, `INSERT INTO ${q}.airlock_migrations VALUES ($1, 0)`, [m.version]);
    }
    const a = request("req_a", { requester: "agent-a" });
    await adminQuery(
      url,
      `INSERT INTO ${q}.requests (id, action, title, status, requester, approvers, created_at, updated_at, correlation_id, version, doc)
       VALUES ($1, $2, $3, 'pending', $4, '{}', $5, $6, $7, 1, $8)`,
      [
        a.id,
        a.action,
        a.title,
        a.requester,
        a.createdAt,
        a.updatedAt,
        a.correlationId,
        JSON.stringify(a),
      ],
    );
    expect(await adminQuery(url, "SELECT to_regclass($1) AS t", [`${q}.outbox`])).toEqual([
      { t: null },
    ]);

    const store = postgresStore(url, { schema, max: 2 });
    try {
      await store.migrate();
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
            payload: { why: "t" },
          },
        ],
      );
      expect(res.ok).toBe(true);
      expect(await store.listOutbox({ requestId: a.id })).toMatchObject([
        { id: "msg_1", status: "pending", availableAt: next.updatedAt, payload: { why: "t" } },
      ]);
      const versions = await adminQuery<{ version: number }>(
        url,
        `SELECT version FROM ${q}.airlock_migrations ORDER BY version`,
      );
      expect(versions.map((r) => r.version)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
      const indexes = await adminQuery<{ indexname: string }>(
        url,
        "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'outbox' ORDER BY indexname",
        [schema],
      );
      expect(indexes.map((r) => r.indexname)).toEqual([
        "outbox_n_key",
        "outbox_pkey",
        "outbox_request",
        "outbox_status_available",
        "outbox_target_status",
      ]);
    } finally {
      await store.close();
    }
  });
});
