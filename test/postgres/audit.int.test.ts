// The audit on PostgreSQL: verify reads a snapshot while another process appends (no false alarm,
// a real deletion still caught), stored statuses checked against the audit, a keyed (HMAC) chain
// with checkpoints, and a deleted chain head refused at migrate.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, expect, it } from "vitest";
import { STATUS_EVENT_TYPES } from "../../src/audit/status-events.js";
import { verifyAuditLog } from "../../src/audit/verify.js";
import type { Store } from "../../src/core/store.js";
import { type PostgresStoreOptions, postgresStore } from "../../src/store/postgres.js";
import { statusEvidenceSql } from "../../src/store/postgres-prune.js";
import { createAndDecide } from "../audit/fixtures.js";
import { tempDir } from "../helpers.js";
import { startChild } from "./child.js";
import { adminQuery, describePg, dropSchema, freshSchema } from "./pg-env.js";

const KEY = "k".repeat(32);

await describePg("audit verify on postgres", ({ url }) => {
  const schemas: string[] = [];
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    for (const s of schemas) await dropSchema(url, s);
  });
  const fresh = () => {
    const s = freshSchema("airlock_audit");
    schemas.push(s);
    return s;
  };
  const open = (schema: string, o: PostgresStoreOptions = {}): Store => {
    const s = postgresStore(url, { schema, max: 3, ...o });
    cleanups.push(() => s.close());
    return s;
  };
  const seed = async (store: Store, n: number, prefix = "req_s") => {
    for (let i = 0; i < n; i++) {
      await createAndDecide(store, `${prefix}${i}`, i % 2 ? "approved" : "rejected");
    }
  };

  it("never reports tampering while another process appends, and still catches a deletion", async () => {
    const schema = fresh();
    const store = open(schema);
    await store.migrate();
    await seed(store, 3);
    const writer = startChild("../audit/writer-child.ts", {
      STORE: "postgres",
      PG_URL: url,
      PG_SCHEMA: schema,
    });
    cleanups.push(() => writer.stop());
    await writer.next("ready");
    const firstHead = (await store.auditHead())?.seq ?? 0;
    let runs = 0;
    const until = Date.now() + 2500;
    while (Date.now() < until || runs < 5) {
      expect(await verifyAuditLog(store, { pageSize: 7 })).toMatchObject({ ok: true });
      runs++;
    }
    writer.send({ type: "stop" });
    await writer.next("done");
    expect((await store.auditHead())?.seq ?? 0).toBeGreaterThan(firstHead + 10);
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true });
    await adminQuery(url, `DELETE FROM "${schema}".audit WHERE seq = 4`);
    expect(await verifyAuditLog(store)).toMatchObject({ ok: false, badSeq: 5 });
  });

  it("a rejected request flipped to approved in the database is caught", async () => {
    const schema = fresh();
    const store = open(schema);
    await store.migrate();
    await seed(store, 2);
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true, requests: 2 });
    await adminQuery(
      url,
      `UPDATE "${schema}".requests SET doc = replace(doc, '"status":"rejected"', '"status":"approved"') WHERE id = 'req_s0'`,
    );
    const v = await verifyAuditLog(store);
    expect(v.ok ? "" : v.reason).toMatch(/req_s0 .*approved/);
  });

  it("a keyed chain with checkpoints: HMAC, key required, truncation caught", async () => {
    const schema = fresh();
    const t = tempDir();
    cleanups.push(t.cleanup);
    const file = join(t.dir, "checkpoints");
    const store = open(schema, { auditKey: KEY, checkpointFile: file, checkpointIntervalMs: 1 });
    await store.migrate();
    await seed(store, 3);
    // Event #1 records that checkpoints start (the file was new), then the seeded six.
    expect(await store.auditChainState()).toMatchObject({ keyedFrom: 1, head: { seq: 7 } });
    await store.close();
    expect(readFileSync(file, "utf8")).toMatch(/"seq":7/);
    const opts = { key: KEY, checkpointFile: file };
    const again = open(schema, { auditKey: KEY });
    expect(await verifyAuditLog(again, opts)).toMatchObject({ ok: true, count: 7, keyedFrom: 1 });
    await expect(verifyAuditLog(again)).rejects.toThrow(/needs the audit key/);
    await expect(open(schema).migrate()).rejects.toThrow(/open the store with its audit key/);
    // Truncate the tail and rewrite the head to match.
    await adminQuery(url, `DELETE FROM "${schema}".audit WHERE seq > 5`);
    await adminQuery(url, `DELETE FROM "${schema}".requests WHERE id = 'req_s2'`);
    await adminQuery(
      url,
      `UPDATE "${schema}".audit_head SET seq = 5, hash = (SELECT hash FROM "${schema}".audit WHERE seq = 5)`,
    );
    // Without the file the chain itself says checkpoints were being written.
    const without = await verifyAuditLog(again, { key: KEY });
    expect(without.ok ? "" : without.reason).toMatch(/#1 records .* no checkpoint file was given/);
    const v = await verifyAuditLog(again, opts);
    expect(v.ok ? "" : v.reason).toMatch(/records event #7, but the database's chain ends at #5/);
  });

  it("a deleted chain head is refused at migrate, naming the repair", async () => {
    const schema = fresh();
    const store = open(schema);
    await store.migrate();
    await seed(store, 1);
    await adminQuery(url, `DELETE FROM "${schema}".audit_head`);
    await expect(createAndDecide(store, "req_after", "approved")).rejects.toMatchObject({
      code: "store_unavailable",
    });
    expect(await verifyAuditLog(store)).toMatchObject({ ok: false });
    await expect(open(schema).migrate()).rejects.toThrow(/audit_head\) is missing .*INSERT INTO/);
    // An empty log without a head (a fresh schema made by hand) gets its head back.
    await adminQuery(url, `DELETE FROM "${schema}".audit`);
    await adminQuery(url, `DELETE FROM "${schema}".requests`);
    const reopened = open(schema);
    await reopened.migrate();
    expect(await reopened.auditChainState()).toEqual({ head: undefined, headRowMissing: false });
  });

  it("the status evidence seeks each request in the (request_id, seq) index", async () => {
    const schema = fresh();
    const store = open(schema);
    await store.migrate();
    await seed(store, 3);
    // Compared as stored, audit.request_id and requests.id (COLLATE "C") took the "C" collation,
    // which the index cannot serve: the seeks were filters over the whole log, 23 s a page at
    // 160,000 events. With scans off, the plan shows whether the index can take the request's id.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query("SET enable_seqscan = off");
      await client.query("SET enable_bitmapscan = off");
      const [row] = (
        await client.query<{ "QUERY PLAN": unknown }>(
          `EXPLAIN (FORMAT JSON) ${statusEvidenceSql(`"${schema}"`)}`,
          ["", 1000, STATUS_EVENT_TYPES],
        )
      ).rows;
      const audits = planNodes(row?.["QUERY PLAN"]).filter((n) => n["Relation Name"] === "audit");
      expect(audits).toHaveLength(2); // the first event, the last status event
      for (const n of audits) {
        expect(n["Index Name"]).toBe("audit_request_seq");
        expect(String(n["Index Cond"])).toMatch(/request_id = /);
      }
    } finally {
      await client.end();
    }
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true, requests: 3 });
  });
});

/** Every node of an EXPLAIN (FORMAT JSON) plan. */
function planNodes(plan: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const visit = (v: unknown) => {
    if (Array.isArray(v)) for (const x of v) visit(x);
    else if (v !== null && typeof v === "object") {
      const node = v as Record<string, unknown>;
      if ("Node Type" in node) out.push(node);
      for (const x of Object.values(node)) visit(x);
    }
  };
  visit(plan);
  return out;
}
