// Writes the audit bench's database in bulk (run by bench/audit.ts as a child process, so that its
// memory does not count against verification): requests and their HMAC-chained events straight into
// the tables, in large transactions, bounded in time. Prints {"events","ms","pruneBefore"}.
import Database from "better-sqlite3";
import { auditKeyBytes, auditKeyId, placeEvent } from "../src/audit/chain.js";
import type { ApprovalRequest, AuditDraft } from "../src/core/schemas.js";
import { columnsOf } from "../src/store/rows.js";
import { request } from "../test/audit/fixtures.js";

export const KEY = "bench-audit-key-0123456789abcdef";
export const T0 = 1_700_000_000_000;
const REQUESTS = 250_000;
const EVENTS_PER_REQUEST = 8;
const GENERATE_MAX_MS = 90_000;

/** Writes requests and their chained events straight into the tables, in large transactions; the
 * oldest 90 % of requests are decided long ago, the rest recently. */
export function generate(path: string): { events: number; ms: number; pruneBefore: number } {
  const key = auditKeyBytes(KEY);
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const template = request("req_template");
  const columns = Object.keys(rowOf(template));
  const insertRequest = db.prepare(
    `INSERT INTO requests (${columns.join(", ")}) VALUES (${columns.map((c) => `@${c}`).join(", ")})`,
  );
  const insertEvent = db.prepare(
    `INSERT INTO audit (seq, request_id, type, actor, at, data, prev_hash, hash)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const recentFrom = Math.floor(REQUESTS * 0.9);
  const recentAt = T0 + 400 * 24 * 3600 * 1000;
  let prev: { seq: number; hash: string } | undefined;
  let events = 0;
  const start = performance.now();
  const writeBatch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const at = (i < recentFrom ? T0 : recentAt) + i * 10;
      const id = `req_${String(i).padStart(8, "0")}`;
      const decidedAt = at + 5;
      const r: ApprovalRequest = {
        ...template,
        id,
        title: `bench ${i}`,
        correlationId: `corr-${i}`,
        inputHash: `input-${i}`,
        createdAt: at,
        updatedAt: decidedAt,
        version: 2,
        status: "approved",
      };
      insertRequest.run(rowOf(r));
      const drafts: AuditDraft[] = [
        { type: "created", requestId: id, actor: "agent", at, data: { title: r.title } },
        {
          type: "notified",
          requestId: id,
          actor: "system",
          at: at + 1,
          data: { channel: "slack" },
        },
        {
          type: "notified",
          requestId: id,
          actor: "system",
          at: at + 1,
          data: { channel: "email" },
        },
        { type: "viewed", requestId: id, actor: "alice", at: at + 2, data: {} },
        { type: "viewed", requestId: id, actor: "bob", at: at + 3, data: {} },
        {
          type: "notified",
          requestId: id,
          actor: "system",
          at: at + 4,
          data: { channel: "webhook" },
        },
        { type: "viewed", requestId: id, actor: "alice", at: at + 4, data: {} },
        {
          type: "decided",
          requestId: id,
          actor: "alice",
          at: decidedAt,
          data: { outcome: "approved" },
        },
      ];
      for (const d of drafts.slice(0, EVENTS_PER_REQUEST)) {
        // As the store writes them: the data as the canonical JSON its hash covers.
        const { event: e, dataJson } = placeEvent(d, prev, key);
        insertEvent.run(e.seq, id, e.type, e.actor, e.at, dataJson, e.prevHash, e.hash);
        prev = e;
        events++;
      }
    }
    if (prev) {
      db.prepare(
        "UPDATE audit_head SET seq = ?, hash = ?, keyed_from = 1, key_id = ? WHERE id = 1",
      ).run(prev.seq, prev.hash, auditKeyId(key));
    }
  });
  const step = 5000;
  let done = 0;
  while (done < REQUESTS && performance.now() - start < GENERATE_MAX_MS) {
    const to = Math.min(REQUESTS, done + step);
    writeBatch(done, to);
    done = to;
  }
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  return { events, ms: performance.now() - start, pruneBefore: recentAt };
}

/** `n` notices of no request: what each store's resumed verification is measured after. */
export function moreEvents(n: number): AuditDraft[] {
  return Array.from({ length: n }, (_, i) => ({
    type: "notified",
    actor: "system",
    at: T0 + i,
    data: { channel: "webhook", n: i },
  }));
}

function rowOf(r: ApprovalRequest) {
  return { ...columnsOf(r), approvers: JSON.stringify(r.approvers) };
}

const path = process.argv[2];
if (path && process.argv[1]?.endsWith("audit-generate.ts")) {
  process.stdout.write(`${JSON.stringify(generate(path))}\n`);
}
