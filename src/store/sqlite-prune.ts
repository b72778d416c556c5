// Pruning and audit marks for the SQLite store (see `Store.prune` and src/audit/prune-cut.ts for the
// rule). Each batch is one IMMEDIATE transaction: scan the log from the anchor, delete the events up
// to the cut with the requests and outbox rows they belong to, and move the anchor, all or nothing.
//
// The marks live in their own table, created on first use (`CREATE TABLE IF NOT EXISTS`), so a
// database that was never pruned nor verified is left exactly as it was.
import type Database from "better-sqlite3";
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
const SCAN_PAGE = 1000;

const CREATE_MARKS = `CREATE TABLE IF NOT EXISTS audit_marks (
  kind TEXT PRIMARY KEY, seq INTEGER NOT NULL, hash TEXT NOT NULL, at INTEGER NOT NULL, mac TEXT NOT NULL)`;

/** A request document's status as JSON.parse reads it (the store's own reading, getRequest's), for
 * checking documents against their status column. SQL reads it (doc_status) from valid JSON, and
 * docStatusOfRow takes that reading only where JSON.parse must agree: a text status in a document
 * with no \u escape and one `"status"` in all (so one key can be named status, spelled plainly: no
 * duplicate for the two to resolve apart), tests on the text that cost far less in JS than in SQL;
 * otherwise it parses the document (doc) itself, as docStatusOf does. */
export const DOC_STATUS_COLUMNS = (doc: string) =>
  `CASE WHEN json_valid(${doc}) THEN json_extract(${doc}, '$.status') END AS doc_status, ${doc} AS doc`;

/** The status a row of DOC_STATUS_COLUMNS gives. */
export function docStatusOfRow(r: { doc_status: unknown; doc: unknown }): string | undefined {
  const { doc_status: status, doc } = r;
  if (doc === null || doc === undefined) return undefined;
  // An object or an array comes back from json_extract as its JSON text: JSON.parse decides.
  const text = typeof status === "string" && status[0] !== "{" && status[0] !== "[";
  if (text && typeof doc === "string" && plainStatus(doc)) return status;
  return docStatusOf(String(doc)); // a BLOB (Buffer) as its text, as JSON.parse would read it
}

/** No \u escape, and `"status"` exactly once. */
function plainStatus(doc: string): boolean {
  if (doc.includes("\\u")) return false;
  const first = doc.indexOf('"status"');
  return first >= 0 && doc.indexOf('"status"', first + 1) < 0;
}

// Each event with its request's status, last change and last event (NULL columns: no request row).
const SCAN = `SELECT a.seq, a.request_id, a.type, a.actor, a.at, a.data, a.prev_hash, a.hash,
    r.id AS rid, r.status AS status, r.updated_at AS updated_at,
    CASE WHEN r.id IS NULL THEN NULL ELSE (SELECT MAX(b.seq) FROM audit b WHERE b.request_id = a.request_id) END AS last_seq
  FROM audit a LEFT JOIN requests r ON r.id = a.request_id
  WHERE a.seq > ? ORDER BY a.seq LIMIT ?`;

// The requests (and their outbox rows) whose events are all at or before the cut: by the cut rule,
// every request with an event there.
const PRUNED_IDS =
  "SELECT DISTINCT request_id FROM audit WHERE seq <= ? AND request_id IS NOT NULL";

interface ScanRow extends AuditRow {
  rid: string | null;
  status: string | null;
  updated_at: number | null;
  last_seq: number | null;
}

interface MarkRow extends AuditMark {
  kind: MarkKind;
}

interface Batch {
  requests: number;
  events: number;
  outbox: number;
  more: boolean;
}

export interface SqlitePruning {
  /** Prunes in batches, each through `attempt` (the store's wait for other processes' locks). */
  prune(
    options: PruneOptions,
    attempt: <T>(what: string, fn: () => T) => Promise<T>,
  ): Promise<PruneResult>;
  marks(): AuditMarks;
  saveVerified(mark: AuditMark): void;
  /** `Store.readAuditPage`: rows read as arrays, each made an event directly, its data left as the
   * stored text. */
  page(after: number, limit: number): AuditPageEvent[];
  /** `Store.listStatusEvidence`. */
  evidence(after: string | undefined, limit: number): StatusEvidence[];
}

export function sqlitePruning(db: Database.Database, own: OwnAuditKey | undefined): SqlitePruning {
  const hasMarks = db.prepare<[], { one: number }>(
    "SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = 'audit_marks'",
  );
  const head = db.prepare<[], { seq: number; keyed_from: number | null }>(
    "SELECT seq, keyed_from FROM audit_head WHERE id = 1",
  );
  const scan = db.prepare<[number, number], ScanRow>(SCAN);
  const delOutbox = db.prepare<[number]>(
    `DELETE FROM outbox WHERE request_id IN (${PRUNED_IDS}) AND status IN ('delivered', 'failed')`,
  );
  const delRequests = db.prepare<[number]>(`DELETE FROM requests WHERE id IN (${PRUNED_IDS})`);
  const delAudit = db.prepare<[number]>("DELETE FROM audit WHERE seq <= ?");
  const page = db
    .prepare<[number, number], AuditPageRow>(
      "SELECT seq, request_id, type, actor, at, data, prev_hash, hash FROM audit WHERE seq > ? ORDER BY seq LIMIT ?",
    )
    .raw(true);
  // Per request: two seeks in the (request_id, seq) index.
  const evidence = db.prepare<[string, number], EvidenceRow>(
    // The document's status as getRequest reads it (DOC_STATUS_COLUMNS); the outcome of the last
    // status event in SQL, its text being verified by then (canonical, no duplicate key).
    `SELECT r.id, r.status, ${DOC_STATUS_COLUMNS("r.doc")},
       (SELECT MIN(a.seq) FROM audit a WHERE a.request_id = r.id) AS first_seq,
       (SELECT a.seq || ' ' || a.type || ' ' ||
          CASE WHEN json_valid(a.data) AND json_type(a.data, '$.outcome') = 'text' THEN json_extract(a.data, '$.outcome') ELSE '' END
        FROM audit a WHERE a.request_id = r.id AND a.type IN (${STATUS_EVENT_TYPES.map((t) => `'${t}'`).join(", ")})
        ORDER BY a.seq DESC LIMIT 1) AS last_status
     FROM requests r WHERE r.id > ? ORDER BY r.id LIMIT ?`,
  );
  // Prepared once the table exists.
  let markStmts:
    | { all: Database.Statement<[], MarkRow>; put: Database.Statement<[MarkRow]> }
    | undefined;

  function marksTable() {
    if (!markStmts) {
      if (hasMarks.get() === undefined) db.exec(CREATE_MARKS);
      markStmts = {
        all: db.prepare<[], MarkRow>("SELECT kind, seq, hash, at, mac FROM audit_marks"),
        put: db.prepare<[MarkRow]>(
          `INSERT INTO audit_marks (kind, seq, hash, at, mac) VALUES (@kind, @seq, @hash, @at, @mac)
           ON CONFLICT(kind) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, at = excluded.at, mac = excluded.mac`,
        ),
      };
    }
    return markStmts;
  }

  function marks(): AuditMarks {
    if (!markStmts && hasMarks.get() === undefined) return {};
    const out: AuditMarks = {};
    for (const r of marksTable().all.all()) {
      out[r.kind] = { seq: Number(r.seq), hash: r.hash, at: Number(r.at), mac: r.mac };
    }
    return out;
  }

  const batchTx = db.transaction((before: number, batchEvents: number, at: number): Batch => {
    const h = head.get();
    if (!h) {
      throw new AirlockError(
        "store_unavailable",
        "the audit chain head row is missing: prune refuses to run (see `airlock audit verify`)",
      );
    }
    const anchor = marks().anchor;
    const check = createChainCheck({
      key: own?.key,
      ...(h.keyed_from !== null ? { keyedFrom: h.keyed_from } : {}),
      ...(anchor ? { start: { seq: anchor.seq, hash: anchor.hash } } : {}),
    });
    const finder = createCutFinder({ before, batchEvents, check });
    scanning: for (;;) {
      const rows = scan.all(check.last.seq, SCAN_PAGE);
      for (const row of rows) {
        if (!finder.push(auditOf(row), requestOf(row))) break scanning;
      }
      if (rows.length < SCAN_PAGE) break;
    }
    const cut = finder.cut;
    if (!cut) return { requests: 0, events: 0, outbox: 0, more: false };
    const outbox = delOutbox.run(cut.seq).changes;
    const requests = delRequests.run(cut.seq).changes;
    const events = delAudit.run(cut.seq).changes;
    const mark = signMark("anchor", cut, at, { key: own?.key, keyedFrom: h.keyed_from });
    marksTable().put.run({ kind: "anchor", ...mark });
    return { requests, events, outbox, more: finder.batchFull };
  });

  return {
    async prune(options, attempt) {
      const o = resolvePruneOptions(options);
      // The marks table outside the batch transactions (a rolled-back batch must not take it along).
      await attempt("prune", () => marksTable());
      const total = { requests: 0, events: 0, outbox: 0 };
      // Each batch deletes at least one event or ends the loop, so this ends with the log.
      for (;;) {
        const b = await attempt("prune", () => batchTx.immediate(o.before, o.batchEvents, o.now()));
        total.requests += b.requests;
        total.events += b.events;
        total.outbox += b.outbox;
        if (!b.more || b.events === 0) break;
      }
      const anchor = await attempt("prune", () => marks().anchor);
      return { ...total, ...(anchor ? { anchor } : {}) };
    },
    marks,
    page(after, limit) {
      const rows = page.all(
        after,
        Math.max(1, Math.min(limit, 10_000)),
      ) as unknown as AuditPageRow[];
      return rows.map(pageEventOf);
    },
    evidence(after, limit) {
      return evidence.all(after ?? "", Math.max(1, Math.trunc(limit))).map(evidenceOf);
    },
    saveVerified(mark) {
      marksTable().put.run({ kind: "verified", ...mark });
    },
  };
}

interface EvidenceRow {
  id: string;
  status: string;
  doc_status: unknown;
  doc: unknown;
  first_seq: number | null;
  last_status: string | null;
}

function evidenceOf(r: EvidenceRow): StatusEvidence {
  const e: StatusEvidence = {
    id: r.id,
    status: r.status as StatusEvidence["status"],
    docStatus: docStatusOfRow(r),
  };
  if (r.first_seq !== null) e.firstSeq = Number(r.first_seq);
  if (r.last_status !== null) {
    // "seq type outcome": the outcome may hold spaces, seq and type never do.
    const [seq = "0", type = "", ...rest] = r.last_status.split(" ");
    const outcome = rest.join(" ");
    e.lastStatus = { seq: Number(seq), type, ...(outcome !== "" ? { outcome } : {}) };
  }
  return e;
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
