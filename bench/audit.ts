// The audit log at scale on SQLite: ~2,000,000 events (250,000 requests, 8 events each, HMAC-keyed)
// written in bulk, then `verifyAuditLog` in full (chain and stored statuses), its peak RSS sampled
// while it runs, a resumed run after 10,000 more events, and prune of the oldest 90 %.
// Generation is bounded in time: fewer events when the machine is slow (the figures say how many).
import { statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { auditKeyBytes, auditKeyId, chainEvent } from "../src/audit/chain.js";
import { verifyAuditLog } from "../src/audit/verify.js";
import type { ApprovalRequest, AuditDraft } from "../src/core/schemas.js";
import { columnsOf } from "../src/store/rows.js";
import { sqliteStore } from "../src/store/sqlite.js";
import { request } from "../test/audit/fixtures.js";
import { tempDir } from "../test/helpers.js";
import type { Figure } from "./figures.js";

const REQUESTS = 250_000;
const EVENTS_PER_REQUEST = 8;
const GENERATE_MAX_MS = 90_000;
const KEY = "bench-audit-key-0123456789abcdef";
const T0 = 1_700_000_000_000;

export async function benchAudit(): Promise<Figure[]> {
  const t = tempDir("airlock-bench-audit-");
  try {
    const path = join(t.dir, "audit.db");
    // The store creates the schema and keys the chain from its first event.
    const setup = sqliteStore(path, { auditKey: KEY });
    await setup.close();
    const gen = generate(path);

    const store = sqliteStore(path, { auditKey: KEY });
    try {
      const baseline = process.memoryUsage.rss() / (1024 * 1024);
      const rss = sampleRss();
      const start = performance.now();
      const full = await verifyAuditLog(store, { key: KEY, recordMark: true });
      const ms = performance.now() - start;
      const peak = rss.stop();
      if (!full.ok) throw new Error(`verify failed at #${full.badSeq}: ${full.reason}`);

      const chainStart = performance.now();
      const chainOnly = await verifyAuditLog(store, { key: KEY, checkStatuses: false });
      const chainMs = performance.now() - chainStart;
      if (!chainOnly.ok) throw new Error(`verify failed: ${chainOnly.reason}`);

      const more: AuditDraft[] = Array.from({ length: 1000 }, (_, i) => ({
        type: "notified",
        actor: "system",
        at: T0 + i,
        data: { channel: "webhook", n: i },
      }));
      for (let i = 0; i < 10; i++) await store.appendAudit(more);
      const resumeStart = performance.now();
      const resumed = await verifyAuditLog(store, { key: KEY, resume: true, recordMark: true });
      const resumeMs = performance.now() - resumeStart;
      if (!resumed.ok || resumed.count !== 10_000)
        throw new Error("resumed verify did not check 10,000 events");

      const sizeBefore = fileMb(path);
      const pruneStart = performance.now();
      const pruned = await store.prune?.({ before: gen.pruneBefore });
      const pruneMs = performance.now() - pruneStart;
      const after = await verifyAuditLog(store, { key: KEY });
      if (!after.ok) throw new Error(`verify after prune failed: ${after.reason}`);

      return [
        { name: "audit.events", value: gen.events, unit: "events" },
        { name: "audit.generate_s", value: gen.ms / 1000, unit: "s" },
        { name: "audit.verify_events_per_s", value: (full.count / ms) * 1000, unit: "1/s" },
        { name: "audit.verify_rss_mb", value: peak, unit: "MB" },
        { name: "audit.rss_before_verify_mb", value: baseline, unit: "MB" },
        {
          name: "audit.verify_chain_only_events_per_s",
          value: (chainOnly.count / chainMs) * 1000,
          unit: "1/s",
        },
        { name: "audit.verify_resume_10k_ms", value: resumeMs, unit: "ms" },
        {
          name: "audit.prune_events_per_s",
          value: ((pruned?.events ?? 0) / pruneMs) * 1000,
          unit: "1/s",
        },
        { name: "audit.pruned_events", value: pruned?.events ?? 0, unit: "events" },
        { name: "audit.db_mb_before_prune", value: sizeBefore, unit: "MB" },
        { name: "audit.verify_after_prune_events", value: after.count, unit: "events" },
      ];
    } finally {
      await store.close();
    }
  } finally {
    t.cleanup();
  }
}

/** Writes requests and their chained events straight into the tables, in large transactions; the
 * oldest 90 % of requests are decided long ago, the rest recently. */
function generate(path: string): { events: number; ms: number; pruneBefore: number } {
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
        const e = chainEvent(d, prev, key);
        insertEvent.run(
          e.seq,
          id,
          e.type,
          e.actor,
          e.at,
          JSON.stringify(e.data),
          e.prevHash,
          e.hash,
        );
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

function rowOf(r: ApprovalRequest) {
  return { ...columnsOf(r), approvers: JSON.stringify(r.approvers) };
}

function fileMb(path: string): number {
  return statSync(path).size / (1024 * 1024);
}

/** Samples the resident set size every 20 ms (verify yields between pages); returns the peak, MB. */
function sampleRss(): { stop(): number } {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 20);
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage.rss());
      return peak / (1024 * 1024);
    },
  };
}
