// A PostgreSQL schema made before the list columns existed (migration 1 only) upgrades in place, and
// listing summaries reads columns only.
import { afterAll, expect, it } from "vitest";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { summaryOf } from "../../src/store/paging.js";
import { postgresStore } from "../../src/store/postgres.js";
import { POSTGRES_MIGRATIONS } from "../../src/store/postgres-migrations.js";
import { request } from "../audit/fixtures.js";
import { adminQuery, describePg, dropSchema, freshSchema } from "./pg-env.js";

await describePg("postgres upgrade to the list columns", ({ url }) => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const s of schemas) await dropSchema(url, s);
  });

  it("fills the columns from the documents; summaries, usage and keys then work", async () => {
    const schema = freshSchema("airlock_upgrade");
    schemas.push(schema);
    const q = `"${schema}"`;
    const first = POSTGRES_MIGRATIONS[0];
    if (!first) throw new Error("no migrations");
    await adminQuery(url, `CREATE SCHEMA ${q}`);
    await adminQuery(url, first.sql(q));
    await adminQuery(
      url,
      `CREATE TABLE ${q}.airlock_migrations (version integer PRIMARY KEY, applied_at double precision NOT NULL)`,
    );
    await adminQuery(url, `INSERT INTO ${q}.airlock_migrations VALUES (1, 0)`);
    const a = request("req_a", {
      key: "same",
      requester: "agent-a",
      risk: "low",
      confidence: 12.5,
      deadline: 4000,
      revisionOf: "req_0",
      items: [
        { id: "x", label: "X" },
        { id: "y", label: "Y" },
      ],
    });
    const b: ApprovalRequest = {
      ...request("req_b", { requester: "agent-b" }),
      status: "rejected",
      version: 2,
      decision: {
        outcome: "rejected",
        method: "reject",
        reviewer: "bob",
        channel: "api",
        decidedAt: 1_700_000_000_900,
      },
    };
    for (const r of [a, b]) {
      await adminQuery(
        url,
        `INSERT INTO ${q}.requests (id, key, action, status, requester, approvers, deadline, created_at, decided_at, method, version, doc)
         VALUES ($1, $2, $3, $4, $5, $6::text[], $7, $8, $9, $10, $11, $12)`,
        [
          r.id,
          r.key ?? null,
          r.action,
          r.status,
          r.requester,
          r.approvers,
          r.status === "pending" ? (r.deadline ?? null) : null,
          r.createdAt,
          r.decision?.decidedAt ?? null,
          r.decision?.method ?? null,
          r.version,
          JSON.stringify(r),
        ],
      );
    }
    const store = postgresStore(url, { schema, max: 2 });
    try {
      await store.migrate();
      expect((await store.listSummaries({ order: "oldest" })).items).toEqual([
        summaryOf(a),
        summaryOf(b),
      ]);
      expect(await store.pendingUsage("agent-a")).toEqual({
        count: 1,
        bytes: Buffer.byteLength(JSON.stringify(a)),
      });
      expect(
        (await store.insertRequest(request("req_c", { key: "same", requester: "agent-b" }), []))
          .created,
      ).toBe(true);
      // Summaries read columns only: a corrupt document does not disturb them.
      await adminQuery(url, `UPDATE ${q}.requests SET doc = '{not json' WHERE id = 'req_b'`);
      await expect(store.listRequests({})).rejects.toThrow();
      expect((await store.listSummaries({ order: "oldest" })).items.map((s) => s.id)).toEqual([
        "req_a",
        "req_b",
        "req_c",
      ]);
    } finally {
      await store.close();
    }
  });
});
