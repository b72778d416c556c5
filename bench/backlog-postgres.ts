// The million-pending-gates database on PostgreSQL (see backlog.ts): made in a schema of its own by
// the store's migrations, filled server-side with INSERT … SELECT over generate_series (the same
// shapes as the SQLite generator: titles, actions, requesters, approver groups as `approversOf`
// gives them, one pending request in six spread over
// history, deadlines in the future, 2–5 events per request), indexes built after the rows.
// The audit rows are well-formed but their hashes are not a real chain.

import { postgresStore } from "../src/store/postgres.js";
import {
  postgresApproversKey,
  postgresFillApprovers,
} from "../src/store/postgres-approver-index.js";
import { postgresFillOutcomeStats } from "../src/store/postgres-migrations.js";
import type { BacklogSize } from "./backlog.js";
import { connectedClient } from "./postgres.js";

const DAY = 24 * 3600 * 1000;

/** Fills schema `schema` (created by the store's migrations); returns how long it took, in ms. */
export async function generatePostgres(
  url: string,
  schema: string,
  size: BacklogSize,
  now: number,
): Promise<number> {
  const start = performance.now();
  const store = postgresStore(url, { schema });
  await store.migrate();
  await store.close();
  const c = await connectedClient(url);
  try {
    const s = `"${schema}"`;
    await c.query("SET synchronous_commit = off");
    await c.query("SET maintenance_work_mem = '512MB'");
    // Indexes other than primary keys go while the rows go in, and come back after.
    const { rows: indexes } = await c.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename IN ('requests', 'audit')
         AND indexname NOT LIKE '%_pkey'`,
      [schema],
    );
    for (const i of indexes) await c.query(`DROP INDEX ${s}."${i.indexname}"`);
    // The approver index is filled once after the rows, not by its trigger row by row.
    await c.query(`ALTER TABLE ${s}.requests DISABLE TRIGGER request_approvers_insert_delete`);
    await c.query(`ALTER TABLE ${s}.request_approvers DROP CONSTRAINT request_approvers_pkey`);

    const total = size.pending + size.decided;
    const span = 180 * DAY;
    const verbs =
      "(ARRAY['Deploy','Refund','Delete','Email','Sign','Transfer','Restart','Publish'])";
    const objects =
      "(ARRAY['billing','invoice','customer','contract','cluster','report','robot','search'])";
    const actions =
      "(ARRAY['deploy','payments.refund','files.delete','email.send','contracts.sign'])";
    // One request per i; its fields as in backlog.ts's generate().
    const gen = (from: number, to: number) => `
      SELECT i,
        'req_' || lpad(i::text, 26, '0') AS id,
        ${verbs}[1 + i % 8] || ' ' || ${objects}[1 + (i / 8) % 8] || ' ' || (i % 100) || ': ' ||
          ${objects}[1 + (i / 8) % 8] || '-' || (i % 997) || ' for agent-' || (i % 200) AS title,
        ${actions}[1 + i % 5] AS action,
        'agent-' || (i % 200) AS requester,
        CASE WHEN (i::bigint * 2654435761 % 4294967296) % 100 < 50 THEN 'bench-reviewers'
          WHEN (i::bigint * 2654435761 % 4294967296) % 100 = 99 THEN 'bench-few'
          ELSE 'bench-team-' || ((i::bigint * 2654435761 % 4294967296) % 100) % 7 END AS approver,
        (${now - span}::float8 + floor(${span}::float8 * i / ${total})) AS created_at,
        ((i::bigint * 7919) % ${total}) < ${size.pending} AS pending,
        CASE WHEN i % 10 = 0 THEN NULL ELSE ${now + DAY}::float8 + (i % 60) * ${DAY}::float8 END AS deadline,
        CASE WHEN i % 11 = 0 THEN 'timed_out' WHEN i % 5 = 0 THEN 'rejected' ELSE 'approved' END AS outcome,
        CASE WHEN i % 11 = 0 THEN 'timeout' WHEN i % 5 = 0 THEN 'reject' ELSE 'approve_all' END AS method,
        (${now - span}::float8 + floor(${span}::float8 * i / ${total})) + 60000 + (i % 3600) * 1000 AS decided_at
      FROM generate_series(${from}, ${to}) AS i`;
    const CHUNK = 500_000;
    for (let from = 0; from < total; from += CHUNK) {
      const to = Math.min(total, from + CHUNK) - 1;
      await c.query(`
        INSERT INTO ${s}.requests (id, key, action, status, requester, approvers, deadline, created_at,
          decided_at, method, version, doc, title, title_lower, risk, level, quorum, updated_at,
          correlation_id, item_count, outcome, reviewer, doc_bytes)
        SELECT id, NULL, action, st, requester, ARRAY[approver],
          CASE WHEN pending THEN deadline END, created_at,
          CASE WHEN pending THEN NULL ELSE decided_at END,
          CASE WHEN pending THEN NULL ELSE method END,
          CASE WHEN pending THEN 1 ELSE 2 END, doc, title, lower(title),
          CASE WHEN i % 4 = 0 THEN 'high' ELSE 'low' END, 'full', 1,
          CASE WHEN pending THEN created_at ELSE decided_at END, id, 1,
          CASE WHEN pending THEN NULL ELSE outcome END,
          CASE WHEN pending THEN NULL WHEN outcome = 'timed_out' THEN 'system' ELSE 'alice' END,
          octet_length(doc)
        FROM (
          SELECT g.*, CASE WHEN pending THEN 'pending' ELSE outcome END AS st,
            jsonb_strip_nulls(jsonb_build_object(
              'id', id, 'action', action, 'title', title,
              'args', jsonb_build_object('target', action || '-' || (i % 997), 'amount', i % 1000),
              'argsHash', repeat('0', 64), 'items', jsonb_build_array(jsonb_build_object('id', 'item-1', 'label', title)),
              'allowed', jsonb_build_array('approve', 'reject', 'revise', 'select', 'edit'),
              'level', 'full', 'requester', requester, 'approvers', jsonb_build_array(approver),
              'quorum', 1, 'onTimeout', 'reject', 'escalations', 0, 'revisionCommentRequired', false,
              'correlationId', id, 'metadata', jsonb_build_object(), 'inputHash', repeat('0', 64),
              'createdAt', created_at) || CASE WHEN pending THEN jsonb_strip_nulls(jsonb_build_object(
                'status', 'pending', 'decisions', jsonb_build_array(), 'updatedAt', created_at,
                'version', 1, 'deadline', deadline))
              ELSE jsonb_build_object('status', outcome, 'updatedAt', decided_at, 'version', 2,
                'decision', jsonb_build_object('outcome', outcome, 'method', method,
                  'reviewer', CASE WHEN outcome = 'timed_out' THEN 'system' ELSE 'alice' END,
                  'decidedAt', decided_at),
                'decisions', CASE WHEN outcome = 'timed_out' THEN jsonb_build_array() ELSE jsonb_build_array(
                  jsonb_build_object('outcome', outcome, 'method', method, 'reviewer', 'alice',
                    'channel', 'web', 'decidedAt', decided_at)) END)
              END)::text AS doc
          FROM (${gen(from, to)}) AS g
        ) AS r`);
    }
    // Events: request i has floor((i+1)E/T) - floor(iE/T) of them (created, notified, viewed…,
    // and its settling event last when it is settled), seq in order.
    for (let from = 0; from < total; from += CHUNK) {
      const to = Math.min(total, from + CHUNK) - 1;
      await c.query(`
        INSERT INTO ${s}.audit (seq, request_id, type, actor, at, data, prev_hash, hash)
        SELECT first + k, 'req_' || lpad(i::text, 26, '0'),
          CASE WHEN k = 1 THEN 'created'
               WHEN k = n AND NOT pending THEN CASE WHEN i % 11 = 0 THEN 'timed_out' ELSE 'decided' END
               WHEN k = 2 THEN 'notified' ELSE 'viewed' END,
          'agent-' || (i % 200), created_at, '{}', repeat('f', 64), repeat('f', 64)
        FROM (
          SELECT i, floor(i::numeric * ${size.events} / ${total})::bigint AS first,
            (floor((i + 1)::numeric * ${size.events} / ${total}) - floor(i::numeric * ${size.events} / ${total}))::int AS n,
            ((i::bigint * 7919) % ${total}) < ${size.pending} AS pending,
            (${now - span}::float8 + floor(${span}::float8 * i / ${total})) AS created_at
          FROM generate_series(${from}, ${to}) AS i
        ) AS r, generate_series(1, GREATEST(r.n, 0)) AS k`);
    }
    await c.query(
      `UPDATE ${s}.audit_head SET seq = (SELECT COALESCE(max(seq), 0) FROM ${s}.audit), hash = repeat('f', 64) WHERE id = 1`,
    );
    for (const i of indexes) await c.query(i.indexdef);
    await c.query(postgresFillApprovers(s));
    await c.query(postgresApproversKey(s));
    await c.query(`ALTER TABLE ${s}.requests ENABLE TRIGGER request_approvers_insert_delete`);
    await c.query(postgresFillOutcomeStats(s));
    // A table that grew row by row has been vacuumed by autovacuum along the way (its insert
    // threshold), so its visibility map lets a count read the index alone; a bulk load has not yet.
    await c.query(`VACUUM (ANALYZE) ${s}.requests`);
    await c.query(`VACUUM (ANALYZE) ${s}.request_approvers`);
    await c.query(`ANALYZE ${s}.audit`);
  } finally {
    await c.end();
  }
  return performance.now() - start;
}
