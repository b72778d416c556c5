// Store.prune on SQLite, keyed: what is deleted and what is kept (pending requests, outbox rows of
// kept requests), the signed anchor written with it, and tampering around the anchor caught by verify.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { markMac } from "../../src/audit/marks.js";
import { verifyAuditLog } from "../../src/audit/verify.js";
import type { OutboxDraft } from "../../src/core/outbox.js";
import type { Store } from "../../src/core/store.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { createAndDecide, request } from "../audit/fixtures.js";
import { tempDir } from "../helpers.js";

const KEY = "k".repeat(32);
/** After every fixture request (created at 1_700_000_000_000) was decided. */
const CUTOFF = 1_800_000_000_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function setup(options: Parameters<typeof sqliteStore>[1] = { auditKey: KEY }) {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const db = join(t.dir, "a.db");
  const store = sqliteStore(db, options);
  cleanups.push(() => store.close());
  return { db, dir: t.dir, store };
}

function sql(db: string, statement: string, ...params: unknown[]) {
  const d = new Database(db);
  try {
    d.prepare(statement).run(...params);
  } finally {
    d.close();
  }
}

function rows<T>(db: string, statement: string): T[] {
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare(statement).all() as T[];
  } finally {
    d.close();
  }
}

const message = (id: string, requestId: string): OutboxDraft => ({
  id,
  target: "hook",
  topic: "created",
  requestId,
  payload: { id: requestId },
});

/** Four old decided requests (events 1–8), one pending (9), two more decided (10–13). */
async function seed(store: Store) {
  for (let i = 0; i < 4; i++) await createAndDecide(store, `req_old${i}`, "approved");
  const p = request("req_pending");
  await store.insertRequest(
    p,
    [{ type: "created", requestId: p.id, actor: p.requester, at: p.createdAt, data: {} }],
    [message("m_pending", p.id)],
  );
  for (let i = 0; i < 2; i++) await createAndDecide(store, `req_late${i}`, "rejected");
}

describe("prune on SQLite", () => {
  it("deletes the old requests up to the pending one, with their outbox rows, and keeps the rest", async () => {
    const { db, store } = setup();
    const old = request("req_old_outbox");
    await store.insertRequest(
      old,
      [{ type: "created", requestId: old.id, actor: old.requester, at: old.createdAt, data: {} }],
      [message("m_old", old.id)],
    );
    await store.transition(
      { ...old, status: "approved", version: 2, updatedAt: old.createdAt + 1 },
      1,
      [
        {
          type: "decided",
          requestId: old.id,
          actor: "alice",
          at: old.createdAt + 1,
          data: { outcome: "approved" },
        },
      ],
    );
    await store.enqueueOutbox([message("m_old_undelivered", old.id)]);
    const [claimed] = await store.claimOutbox({
      now: Date.now(),
      limit: 1,
      leaseMs: 60_000,
      owner: "t",
    });
    expect(claimed?.id).toBe("m_old");
    expect(await store.settleOutbox("m_old", "t", { status: "delivered" })).toBe(true);
    await seed(store);

    const result = await store.prune?.({ before: CUTOFF, batchEvents: 3 });
    // m_old was delivered: it goes with its request. m_old_undelivered stays to be delivered (a
    // pruned request's pending message is not lost).
    expect(result).toMatchObject({ requests: 5, events: 10, outbox: 1, anchor: { seq: 10 } });
    expect(
      rows<{ id: string }>(db, "SELECT id FROM requests ORDER BY id").map((r) => r.id),
    ).toEqual(["req_late0", "req_late1", "req_pending"]);
    expect(rows<{ id: string }>(db, "SELECT id FROM outbox ORDER BY id").map((r) => r.id)).toEqual([
      "m_old_undelivered",
      "m_pending",
    ]);
    expect(rows<{ n: number }>(db, "SELECT MIN(seq) AS n FROM audit")[0]?.n).toBe(11);

    const verified = await verifyAuditLog(store, { key: KEY });
    expect(verified).toMatchObject({ ok: true, count: 5, anchorSeq: 10, requests: 3 });
  });

  it("a moved, edited, forged or deleted anchor, or rows deleted past it, fail verification", async () => {
    const { db, store } = setup();
    await seed(store);
    await store.prune?.({ before: CUTOFF });
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({ ok: true, anchorSeq: 8 });
    const [anchor] = rows<{ seq: number; hash: string; at: number; mac: string }>(
      db,
      "SELECT seq, hash, at, mac FROM audit_marks WHERE kind = 'anchor'",
    );
    if (!anchor) throw new Error("no anchor row");
    const restore = () =>
      sql(
        db,
        "UPDATE audit_marks SET seq = ?, hash = ?, mac = ? WHERE kind = 'anchor'",
        anchor.seq,
        anchor.hash,
        anchor.mac,
      );

    // Rows deleted past the anchor (the pending request's creation, and its request row).
    const d = new Database(db);
    const saved = d.prepare("SELECT * FROM audit WHERE seq = 9").get() as Record<string, unknown>;
    d.prepare("DELETE FROM audit WHERE seq = 9").run();
    d.close();
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({ ok: false, badSeq: 10 });
    const back = new Database(db);
    back
      .prepare(
        "INSERT INTO audit (seq, request_id, type, actor, at, data, prev_hash, hash) VALUES (@seq, @request_id, @type, @actor, @at, @data, @prev_hash, @hash)",
      )
      .run(saved);
    back.close();
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({ ok: true });

    // The anchor moved forward over the deleted rows, its signature left as it was.
    const [ninth] = rows<{ hash: string }>(db, "SELECT hash FROM audit WHERE seq = 9");
    sql(db, "DELETE FROM audit WHERE seq = 9");
    sql(db, "UPDATE audit_marks SET seq = 9, hash = ? WHERE kind = 'anchor'", ninth?.hash);
    const moved = await verifyAuditLog(store, { key: KEY });
    expect(moved).toMatchObject({ ok: false, badSeq: 9 });
    if (moved.ok) throw new Error("unreachable");
    expect(moved.reason).toMatch(/signature/);

    // The same, re-signed without the key (plain SHA-256): still refused on a keyed chain.
    const forged = { seq: 9, hash: ninth?.hash ?? "", at: anchor.at };
    sql(db, "UPDATE audit_marks SET mac = ? WHERE kind = 'anchor'", markMac("anchor", forged));
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({ ok: false, badSeq: 9 });

    // The anchor deleted: the log no longer starts at the first event.
    sql(db, "DELETE FROM audit_marks WHERE kind = 'anchor'");
    const noAnchor = await verifyAuditLog(store, { key: KEY });
    expect(noAnchor).toMatchObject({ ok: false });
    if (noAnchor.ok) throw new Error("unreachable");
    expect(noAnchor.reason).toMatch(/expected event #1/);

    // An anchor with an edited hash (signature kept).
    sql(
      db,
      "INSERT INTO audit_marks (kind, seq, hash, at, mac) VALUES ('anchor', ?, ?, ?, ?)",
      anchor.seq,
      "f".repeat(64),
      anchor.at,
      anchor.mac,
    );
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({ ok: false, badSeq: 8 });
    restore();
  });

  it("refuses to prune over events that do not verify, and deletes nothing from there on", async () => {
    const { db, store } = setup();
    await seed(store);
    sql(db, `UPDATE audit SET data = '{"outcome":"rejected"}' WHERE seq = 6`);
    await expect(store.prune?.({ before: CUTOFF, batchEvents: 2 })).rejects.toMatchObject({
      code: "conflict",
      message: expect.stringMatching(/event #6/),
    });
    // The batches before the bad event went through; the bad event and what follows stay.
    expect(rows<{ n: number }>(db, "SELECT MIN(seq) AS n FROM audit")[0]?.n).toBe(5);
    expect(rows<{ id: string }>(db, "SELECT id FROM requests WHERE id = 'req_old2'")).toHaveLength(
      1,
    );
  });

  it("an unkeyed database prunes with a hashed anchor, and the anchor of a later keyed chain is signed", async () => {
    const { db, store } = setup({});
    await seed(store);
    const result = await store.prune?.({ before: CUTOFF });
    expect(result?.anchor?.mac).toBe(
      markMac("anchor", { seq: 8, hash: result?.anchor?.hash ?? "", at: result?.anchor?.at ?? 0 }),
    );
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true, anchorSeq: 8 });
    await store.close();

    // Opened with a key now: the chain is keyed from the next event on.
    const keyed = sqliteStore(db, { auditKey: KEY });
    cleanups.push(() => keyed.close());
    sql(
      db,
      "UPDATE requests SET status = 'approved', doc = json_set(doc, '$.status', 'approved'), updated_at = 1700000000001 WHERE id = 'req_pending'",
    );
    await keyed.appendAudit([
      {
        type: "decided",
        requestId: "req_pending",
        actor: "alice",
        at: 1,
        data: { outcome: "approved" },
      },
    ]);
    const second = await keyed.prune?.({ before: CUTOFF });
    expect(second).toMatchObject({ requests: 3, events: 6, anchor: { seq: 14 } });
    expect(second?.anchor?.mac).not.toBe(
      markMac("anchor", { seq: 14, hash: second?.anchor?.hash ?? "", at: second?.anchor?.at ?? 0 }),
    );
    expect(await verifyAuditLog(keyed, { key: KEY })).toMatchObject({
      ok: true,
      count: 0,
      anchorSeq: 14,
    });
  });
});
