// The audit suite's log on PostgreSQL: the SQLite database bench/audit-generate.ts wrote (requests and
// their keyed chain, ~2,000,000 events) copied as stored (so the chain is the real one) into a fresh
// schema made by the store's migrations and vacuumed as autovacuum would; then `verifyAuditLog` in
// full and chain only, resumed from its mark after 10,000 more events, and prune of the oldest 90 %
// with a verification after it. Skipped, with a message, when no PostgreSQL answers.
import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";
import type { verifyAuditLog as VerifyAuditLog } from "../src/audit/verify.js";
import type { ApprovalRequest } from "../src/core/schemas.js";
import type { postgresStore as PostgresStore } from "../src/store/postgres.js";
import { insertValues, manyValues, statements } from "../src/store/postgres-sql.js";
import { moreEvents } from "./audit-generate.js";
import type { Figure } from "./figures.js";
import { connectedClient, dropSchema, findDatabase } from "./postgres.js";

const REQUESTS_PER_INSERT = 2_000;
const EVENTS_PER_INSERT = 10_000;

interface Built {
  verifyAuditLog: typeof VerifyAuditLog;
  postgresStore: typeof PostgresStore;
}

/** Copies `sqlitePath` into PostgreSQL and verifies it there; [] when no PostgreSQL answers. */
export async function verifyOnPostgres(
  sqlitePath: string,
  key: string,
  pruneBefore: number,
  built: Built,
  sampleRss: () => { stop(): number },
): Promise<Figure[]> {
  const url = await findDatabase("audit");
  if (!url) return [];
  const schema = `airlock_bench_audit_${randomBytes(5).toString("hex")}`;
  try {
    const copyStart = performance.now();
    const setup = built.postgresStore(url, { schema, auditKey: key });
    try {
      await setup.migrate();
    } finally {
      await setup.close();
    }
    const events = await copy(sqlitePath, url, schema);
    const copyMs = performance.now() - copyStart;

    const store = built.postgresStore(url, { schema, auditKey: key });
    try {
      const rss = sampleRss();
      const start = performance.now();
      const full = await built.verifyAuditLog(store, { key, recordMark: true });
      const ms = performance.now() - start;
      const peak = rss.stop();
      if (!full.ok)
        throw new Error(`verify on PostgreSQL failed at #${full.badSeq}: ${full.reason}`);
      if (full.count !== events) throw new Error(`verified ${full.count} of ${events} events`);

      const chainStart = performance.now();
      const chainOnly = await built.verifyAuditLog(store, { key, checkStatuses: false });
      const chainMs = performance.now() - chainStart;
      if (!chainOnly.ok) throw new Error(`verify on PostgreSQL failed: ${chainOnly.reason}`);

      // From the verified mark, after 10,000 more events (as on SQLite).
      for (let i = 0; i < 10; i++) await store.appendAudit(moreEvents(1000));
      const resumeStart = performance.now();
      const resumed = await built.verifyAuditLog(store, { key, resume: true });
      const resumeMs = performance.now() - resumeStart;
      if (!resumed.ok || resumed.count !== 10_000) {
        throw new Error("a resumed verify on PostgreSQL did not check 10,000 events");
      }

      const pruneStart = performance.now();
      const pruned = await store.prune?.({ before: pruneBefore });
      const pruneMs = performance.now() - pruneStart;
      const after = await built.verifyAuditLog(store, { key });
      if (!after.ok) throw new Error(`verify on PostgreSQL after prune failed: ${after.reason}`);
      return [
        { name: "audit.postgres_events", value: events, unit: "events" },
        { name: "audit.postgres_copy_s", value: copyMs / 1000, unit: "s" },
        {
          name: "audit.postgres_verify_events_per_s",
          value: (full.count / ms) * 1000,
          unit: "1/s",
        },
        { name: "audit.postgres_verify_requests", value: full.requests ?? 0, unit: "requests" },
        {
          name: "audit.postgres_verify_chain_only_events_per_s",
          value: (chainOnly.count / chainMs) * 1000,
          unit: "1/s",
        },
        { name: "audit.postgres_verify_rss_mb", value: peak, unit: "MB" },
        { name: "audit.postgres_verify_resume_10k_ms", value: resumeMs, unit: "ms" },
        {
          name: "audit.postgres_prune_events_per_s",
          value: ((pruned?.events ?? 0) / pruneMs) * 1000,
          unit: "1/s",
        },
        { name: "audit.postgres_pruned_events", value: pruned?.events ?? 0, unit: "events" },
        { name: "audit.postgres_verify_after_prune_events", value: after.count, unit: "events" },
      ];
    } finally {
      await store.close();
    }
  } finally {
    // Not in place of the error that brought us here, if any.
    await dropSchema(url, schema).catch((err: unknown) =>
      process.stderr.write(`bench audit: could not drop schema ${schema}: ${String(err)}\n`),
    );
  }
}

/** Requests (through the store's own many-row insert) and events as stored, then the chain head;
 * returns the number of events. */
async function copy(sqlitePath: string, url: string, schema: string): Promise<number> {
  const source = new Database(sqlitePath, { readonly: true });
  const client = await connectedClient(url);
  try {
    const s = `"${schema}"`;
    await client.query("SET synchronous_commit = off");
    const insertMany = statements(schema).insertMany.text;
    const docs = source
      .prepare<[string, number], { id: string; doc: string }>(
        "SELECT id, doc FROM requests WHERE id > ? ORDER BY id LIMIT ?",
      )
      .raw(false);
    for (let after = ""; ; ) {
      const rows = docs.all(after, REQUESTS_PER_INSERT);
      if (rows.length === 0) break;
      const values = rows.map((r) => insertValues(JSON.parse(r.doc) as ApprovalRequest));
      // The insert skips a request whose (requester, key) is taken: none may be.
      const inserted = await client.query(insertMany, manyValues(values, "insert"));
      if (inserted.rowCount !== rows.length) {
        throw new Error(`copied ${inserted.rowCount} of ${rows.length} requests after ${after}`);
      }
      after = rows[rows.length - 1]?.id ?? after;
    }
    const audit = source
      .prepare<[number, number], unknown[]>(
        "SELECT seq, request_id, type, actor, at, data, prev_hash, hash FROM audit WHERE seq > ? ORDER BY seq LIMIT ?",
      )
      .raw(true);
    const insertEvents = `INSERT INTO ${s}.audit (seq, request_id, type, actor, at, data, prev_hash, hash)
      SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::double precision[],
        $6::text[], $7::text[], $8::text[])`;
    let events = 0;
    for (let after = 0; ; ) {
      const rows = audit.all(after, EVENTS_PER_INSERT);
      if (rows.length === 0) break;
      await client.query(
        insertEvents,
        Array.from({ length: 8 }, (_, j) => rows.map((r) => r[j])),
      );
      events += rows.length;
      after = Number(rows[rows.length - 1]?.[0] ?? after);
    }
    const head = source
      .prepare<[], { seq: number; hash: string; keyed_from: number | null; key_id: string | null }>(
        "SELECT seq, hash, keyed_from, key_id FROM audit_head WHERE id = 1",
      )
      .get();
    if (!head) throw new Error("the generated database has no chain head");
    await client.query(
      `INSERT INTO ${s}.audit_head (id, seq, hash, keyed_from, key_id) VALUES (1, $1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash,
         keyed_from = excluded.keyed_from, key_id = excluded.key_id`,
      [head.seq, head.hash, head.keyed_from, head.key_id],
    );
    // What autovacuum does soon after such a load, done now rather than during the measurements: a
    // log written over months has been vacuumed (visibility map) and analysed (the planner's figures).
    await client.query(`VACUUM (ANALYZE) ${s}.requests, ${s}.audit`);
    return events;
  } finally {
    await client.end().catch(() => {});
    source.close();
  }
}
