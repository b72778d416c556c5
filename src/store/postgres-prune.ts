// Pruning and audit marks for the PostgreSQL store (see `Store.prune` and src/audit/prune-cut.ts for
// the rule). Each batch is one transaction holding the chain head FOR UPDATE, as every append does,
// so no event is appended while the batch scans the log from the anchor, deletes the events up to
// the cut with the requests and outbox rows they belong to, and moves the anchor.
//
// The marks live in their own table, created on first use, so a schema that was never pruned nor
// verified is left exactly as it was.
import type { PoolClient } from "pg";
import { createChainCheck } from "../audit/chain-check.js";
import type { OwnAuditKey } from "../audit/checkpoint.js";
import { type MarkKind, signMark } from "../audit/marks.js";
import { type CutRequest, createCutFinder, resolvePruneOptions } from "../audit/prune-cut.js";
import { STATUS_EVENT_TYPES } from "../audit/status-events.js";
import { AirlockError } from "../core/errors.js";
import type {
  AuditMark,
  AuditMarks,
  AuditPageEvent,
  PruneOptions,
  PruneResult,
  StatusEvidence,
} from "../core/store.js";
import { type AuditPageRow, type AuditRow, auditOf, docStatusOf, pageEventOf } from "./rows.js";

/** Events read per scan query. */
const SCAN_PAGE = 2000;

interface ScanRow extends AuditRow {
  rid: string | null;
  status: string | null;
  updated_at: number | null;
  last_seq: string | null;
}

interface MarkRow {
  kind: MarkKind;
  seq: string;
  hash: string;
  at: number;
  mac: string;
}

/** Runs `fn` on a pooled connection with the store's failure rules (the store's `run`). */
export type PgRun = <T>(what: string, fn: (c: PoolClient) => Promise<T>) => Promise<T>;

export interface PostgresPruning {
  prune(options: PruneOptions, run: PgRun): Promise<PruneResult>;
  marks(c: PoolClient): Promise<AuditMarks>;
  saveVerified(c: PoolClient, mark: AuditMark): Promise<void>;
  /** `Store.readAuditPage`. */
  page(c: PoolClient, after: number, limit: number): Promise<AuditPageEvent[]>;
  /** `Store.listStatusEvidence`: one query per page, each request with its first event and, by a
   * lateral seek in the (request_id, seq) index, its last status event. */
  evidence(c: PoolClient, after: string | undefined, limit: number): Promise<StatusEvidence[]>;
}

/** The query of `listStatusEvidence` in `schema` ($1 the id after which, $2 the limit, $3 the status
 * event types).
 *
 * `requests.id` is `COLLATE "C"` and `audit.request_id` is not: compared as they are, the pair takes
 * the "C" collation, which the (request_id, seq) index cannot serve, and each request's seeks became
 * a scan of the whole log (23 s a page of 1,000 at 160,000 events). Hence `COLLATE "default"` on the
 * request's id: equality is byte for byte in both collations, so the rows are the same. */
export function statusEvidenceSql(schema: string): string {
  return `SELECT r.id, r.status, r.doc,
      (SELECT MIN(a.seq) FROM ${schema}.audit a WHERE a.request_id = r.id COLLATE "default") AS first_seq,
      l.seq AS last_seq, l.type AS last_type, l.data AS last_data
    FROM ${schema}.requests r
    LEFT JOIN LATERAL (
      SELECT a.seq, a.type, a.data FROM ${schema}.audit a
      WHERE a.request_id = r.id COLLATE "default" AND a.type = ANY($3::text[]) ORDER BY a.seq DESC LIMIT 1
    ) l ON true
    WHERE r.id > $1 ORDER BY r.id LIMIT $2`;
}

/** `schema` is the quoted identifier of the store's schema. */
export function postgresPruning(schema: string, own: OwnAuditKey | undefined): PostgresPruning {
  const marksTable = `${schema}.audit_marks`;
  const createMarks = `CREATE TABLE IF NOT EXISTS ${marksTable} (
    kind text PRIMARY KEY, seq bigint NOT NULL, hash text NOT NULL, at double precision NOT NULL, mac text NOT NULL)`;
  const putMark = `INSERT INTO ${marksTable} (kind, seq, hash, at, mac) VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (kind) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, at = excluded.at, mac = excluded.mac`;
  const scan = `SELECT a.seq, a.request_id, a.type, a.actor, a.at, a.data, a.prev_hash, a.hash,
      r.id AS rid, r.status AS status, r.updated_at AS updated_at,
      CASE WHEN r.id IS NULL THEN NULL ELSE (SELECT MAX(b.seq) FROM ${schema}.audit b WHERE b.request_id = a.request_id) END AS last_seq
    FROM ${schema}.audit a LEFT JOIN ${schema}.requests r ON r.id = a.request_id
    WHERE a.seq > $1 ORDER BY a.seq LIMIT $2`;
  const prunedIds = `SELECT DISTINCT request_id FROM ${schema}.audit WHERE seq <= $1 AND request_id IS NOT NULL`;
  let tableReady = false;
  const pageSql = `SELECT seq, request_id, type, actor, at, data, prev_hash, hash FROM ${schema}.audit
    WHERE seq > $1 ORDER BY seq LIMIT $2`;
  const evidenceSql = statusEvidenceSql(schema);

  async function ensureTable(c: PoolClient): Promise<void> {
    if (tableReady) return;
    try {
      await c.query(createMarks);
    } catch (err) {
      // Two processes creating it at the same moment: one wins, the other sees a duplicate.
      const code = (err as { code?: string }).code;
      if (code !== "23505" && code !== "42P07") throw err;
    }
    tableReady = true;
  }

  async function marks(c: PoolClient): Promise<AuditMarks> {
    const exists = await c.query<{ t: string | null }>("SELECT to_regclass($1) AS t", [marksTable]);
    if (!exists.rows[0]?.t) return {};
    const out: AuditMarks = {};
    const rows = await c.query<MarkRow>(`SELECT kind, seq, hash, at, mac FROM ${marksTable}`);
    for (const r of rows.rows) {
      out[r.kind] = { seq: Number(r.seq), hash: r.hash, at: Number(r.at), mac: r.mac };
    }
    return out;
  }

  async function batch(
    c: PoolClient,
    before: number,
    batchEvents: number,
    at: number,
  ): Promise<{ requests: number; events: number; outbox: number; more: boolean }> {
    await c.query("BEGIN");
    const head = (
      await c.query<{ seq: string; keyed_from: string | null }>(
        `SELECT seq, keyed_from FROM ${schema}.audit_head WHERE id = 1 FOR UPDATE`,
      )
    ).rows[0];
    if (!head) {
      throw new AirlockError(
        "store_unavailable",
        "the audit chain head row is missing: prune refuses to run (see `airlock audit verify`)",
      );
    }
    const keyedFrom = head.keyed_from === null ? undefined : Number(head.keyed_from);
    const anchor = (await marks(c)).anchor;
    const check = createChainCheck({
      key: own?.key,
      ...(keyedFrom !== undefined ? { keyedFrom } : {}),
      ...(anchor ? { start: { seq: anchor.seq, hash: anchor.hash } } : {}),
    });
    const finder = createCutFinder({ before, batchEvents, check });
    scanning: for (;;) {
      const rows = (await c.query<ScanRow>(scan, [check.last.seq, SCAN_PAGE])).rows;
      for (const row of rows) {
        if (!finder.push(auditOf(row), requestOf(row))) break scanning;
      }
      if (rows.length < SCAN_PAGE) break;
    }
    const cut = finder.cut;
    if (!cut) {
      await c.query("ROLLBACK");
      return { requests: 0, events: 0, outbox: 0, more: false };
    }
    const outbox = await c.query(
      `DELETE FROM ${schema}.outbox WHERE request_id IN (${prunedIds}) AND status IN ('delivered', 'failed')`,
      [cut.seq],
    );
    const requests = await c.query(`DELETE FROM ${schema}.requests WHERE id IN (${prunedIds})`, [
      cut.seq,
    ]);
    const events = await c.query(`DELETE FROM ${schema}.audit WHERE seq <= $1`, [cut.seq]);
    const mark = signMark("anchor", cut, at, { key: own?.key, keyedFrom });
    await c.query(putMark, ["anchor", mark.seq, mark.hash, mark.at, mark.mac]);
    await c.query("COMMIT");
    return {
      requests: requests.rowCount ?? 0,
      events: events.rowCount ?? 0,
      outbox: outbox.rowCount ?? 0,
      more: finder.batchFull,
    };
  }

  return {
    async prune(options, run) {
      const o = resolvePruneOptions(options);
      await run("prune", ensureTable);
      const total = { requests: 0, events: 0, outbox: 0 };
      // Each batch deletes at least one event or ends the loop, so this ends with the log.
      for (;;) {
        const b = await run("prune", (c) => batch(c, o.before, o.batchEvents, o.now()));
        total.requests += b.requests;
        total.events += b.events;
        total.outbox += b.outbox;
        if (!b.more || b.events === 0) break;
      }
      const anchor = (await run("prune", marks)).anchor;
      return { ...total, ...(anchor ? { anchor } : {}) };
    },
    marks,
    async page(c, after, limit) {
      const rows = await c.query<AuditPageRow>({
        text: pageSql,
        values: [after, Math.max(1, Math.min(limit, 10_000))],
        rowMode: "array",
      });
      return rows.rows.map(pageEventOf);
    },
    async evidence(c, after, limit) {
      const rows = await c.query<EvidenceRow>(evidenceSql, [
        after ?? "",
        Math.max(1, Math.trunc(limit)),
        STATUS_EVENT_TYPES,
      ]);
      return rows.rows.map(evidenceOf);
    },
    async saveVerified(c, mark) {
      await ensureTable(c);
      await c.query(putMark, ["verified", mark.seq, mark.hash, mark.at, mark.mac]);
    },
  };
}

interface EvidenceRow {
  id: string;
  status: string;
  doc: string;
  first_seq: string | null;
  last_seq: string | null;
  last_type: string | null;
  last_data: string | null;
}

function evidenceOf(r: EvidenceRow): StatusEvidence {
  const e: StatusEvidence = {
    id: r.id,
    status: r.status as StatusEvidence["status"],
    docStatus: docStatusOf(r.doc),
  };
  if (r.first_seq !== null) e.firstSeq = Number(r.first_seq);
  if (r.last_seq !== null && r.last_type !== null) {
    const outcome = outcomeOf(r.last_data);
    e.lastStatus = {
      seq: Number(r.last_seq),
      type: r.last_type,
      ...(outcome !== undefined ? { outcome } : {}),
    };
  }
  return e;
}

/** `data.outcome` when it is a string (data is JSON text; unreadable data has none). */
function outcomeOf(data: string | null): string | undefined {
  if (data === null) return undefined;
  try {
    const v = JSON.parse(data) as { outcome?: unknown } | null;
    return typeof v?.outcome === "string" ? v.outcome : undefined;
  } catch {
    return undefined;
  }
}

function requestOf(row: ScanRow): CutRequest | undefined {
  if (row.request_id === null) return undefined;
  if (row.rid === null || row.status === null) return { missing: true };
  return {
    status: row.status,
    updatedAt: Number(row.updated_at),
    lastSeq: Number(row.last_seq),
  };
}
