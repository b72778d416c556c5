// verifyAuditLog reads the log in pages (keyset by seq) whatever its length, and resumes from the
// verified mark: tampering after the mark is caught, tampering before it is left to a full run, and
// a forged mark is refused on a keyed chain.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { markMac } from "../../src/audit/marks.js";
import { verifyAuditLog } from "../../src/audit/verify.js";
import type { AuditDraft } from "../../src/core/schemas.js";
import type { AuditFilter, Store } from "../../src/core/store.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import { createAndDecide } from "./fixtures.js";

const KEY = "k".repeat(32);
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
  return { db, store };
}

function sql(db: string, statement: string, ...params: unknown[]) {
  const d = new Database(db);
  try {
    d.prepare(statement).run(...params);
  } finally {
    d.close();
  }
}

const notes = (n: number, from = 0): AuditDraft[] =>
  Array.from({ length: n }, (_, i) => ({
    type: "notified",
    actor: "system",
    at: 1_700_000_000_000 + from + i,
    data: { n: from + i },
  }));

/** The store, recording the size of every page of the log it was asked for. */
function watched(store: Store) {
  const pages: number[] = [];
  const proxy: Store = Object.create(store);
  proxy.listAudit = async (f: AuditFilter) => {
    const page = await store.listAudit(f);
    if (f.requestId === undefined) pages.push(page.length);
    return page;
  };
  const readPage = store.readAuditPage?.bind(store);
  if (readPage) {
    proxy.readAuditPage = async (after: number, limit: number) => {
      const page = await readPage(after, limit);
      pages.push(page.length);
      return page;
    };
  }
  return { proxy, pages };
}

describe("verifyAuditLog streams and resumes", () => {
  it("checks a large log page by page, never asking for more than a page", async () => {
    const { store } = setup();
    for (let i = 0; i < 6; i++) await store.appendAudit(notes(1000, i * 1000));
    const { proxy, pages } = watched(store);
    const result = await verifyAuditLog(proxy, { key: KEY, pageSize: 7 });
    expect(result).toMatchObject({ ok: true, count: 6000 });
    expect(Math.max(...pages)).toBeLessThanOrEqual(7);
    expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(6000 / 7));
  });

  it("resumed, checks only what follows the mark and catches tampering there", async () => {
    const { db, store } = setup();
    await store.appendAudit(notes(50));
    await createAndDecide(store, "req_a", "approved");
    expect(await verifyAuditLog(store, { key: KEY, recordMark: true })).toMatchObject({
      ok: true,
      count: 52,
    });
    await store.appendAudit(notes(20, 100));
    await createAndDecide(store, "req_b", "rejected");
    const { proxy, pages } = watched(store);
    const resumed = await verifyAuditLog(proxy, { key: KEY, resume: true, pageSize: 10 });
    expect(resumed).toMatchObject({
      ok: true,
      count: 22,
      from: 52,
      startedAt: "mark",
      requests: 1,
    });
    // The mark's own event, then the 22 events after it: nothing before the mark was read.
    expect(pages.reduce((a, b) => a + b, 0)).toBe(1 + 22);

    // Tampering after the mark.
    sql(db, `UPDATE audit SET data = '{"n":999}' WHERE seq = 60`);
    const bad = await verifyAuditLog(store, { key: KEY, resume: true });
    expect(bad).toMatchObject({ ok: false, badSeq: 60 });
    sql(db, `UPDATE audit SET data = '{"n":107}' WHERE seq = 60`);
    expect(await verifyAuditLog(store, { key: KEY, resume: true })).toMatchObject({ ok: true });

    // A stored request altered after the mark, its events untouched.
    sql(db, "UPDATE requests SET doc = json_set(doc, '$.status', 'approved') WHERE id = 'req_b'");
    expect(await verifyAuditLog(store, { key: KEY, resume: true })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/req_b/),
    });
    sql(db, "UPDATE requests SET doc = json_set(doc, '$.status', 'rejected') WHERE id = 'req_b'");

    // Tampering before the mark: a resumed run does not look there; a full run does.
    sql(db, `UPDATE audit SET data = '{"n":999}' WHERE seq = 10`);
    expect(await verifyAuditLog(store, { key: KEY, resume: true })).toMatchObject({ ok: true });
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({ ok: false, badSeq: 10 });
  });

  it("refuses a mark whose event changed, and a mark forged without the key", async () => {
    const { db, store } = setup();
    await store.appendAudit(notes(30));
    await verifyAuditLog(store, { key: KEY, recordMark: true });
    await store.appendAudit(notes(5, 100));

    // The content of the event at the mark edited, its hash column left as it was.
    sql(db, `UPDATE audit SET data = '{"n":999}' WHERE seq = 30`);
    expect(await verifyAuditLog(store, { key: KEY, resume: true })).toMatchObject({
      ok: false,
      badSeq: 30,
    });
    sql(db, `UPDATE audit SET data = '{"n":29}' WHERE seq = 30`);
    expect(await verifyAuditLog(store, { key: KEY, resume: true })).toMatchObject({ ok: true });

    // The event at the mark altered (its hash recomputed by someone who lacks the key: wrong).
    sql(db, `UPDATE audit SET hash = ? WHERE seq = 30`, "e".repeat(64));
    expect(await verifyAuditLog(store, { key: KEY, resume: true })).toMatchObject({
      ok: false,
      badSeq: 30,
    });
    const d = new Database(db);
    const real = d.prepare("SELECT prev_hash FROM audit WHERE seq = 31").get() as {
      prev_hash: string;
    };
    d.close();
    sql(db, "UPDATE audit SET hash = ? WHERE seq = 30", real.prev_hash);

    // A mark moved to the head and re-hashed without the key, to skip the check of 31–35.
    const head = await store.auditHead();
    const forged = { seq: head?.seq ?? 0, hash: head?.hash ?? "", at: 1 };
    sql(
      db,
      "UPDATE audit_marks SET seq = ?, hash = ?, at = ?, mac = ? WHERE kind = 'verified'",
      forged.seq,
      forged.hash,
      forged.at,
      markMac("verified", forged),
    );
    const r = await verifyAuditLog(store, { key: KEY, resume: true });
    expect(r).toMatchObject({ ok: false, badSeq: 35, reason: expect.stringMatching(/signature/) });
  });

  it("with a checkpoint file, checkpoints up to the anchor are passed over and later ones checked", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const checkpointFile = join(t.dir, "a.checkpoints");
    const db = join(t.dir, "a.db");
    const store = sqliteStore(db, { auditKey: KEY, checkpointFile, checkpointIntervalMs: 1 });
    for (let i = 0; i < 3; i++) {
      await createAndDecide(store, `req_${i}`, "approved");
      // A pause lets the writer put a line for this head (at most one per interval).
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(await store.prune?.({ before: 1_800_000_000_000 })).toMatchObject({ events: 6 });
    // The prune records again that checkpoints are written (event #7), then req_late (#8, #9).
    await createAndDecide(store, "req_late", "approved");
    await store.close(); // writes the last head (event #9) to the file

    const reopened = sqliteStore(db, { auditKey: KEY, checkpointFile });
    cleanups.push(() => reopened.close());
    const result = await verifyAuditLog(reopened, { key: KEY, checkpointFile });
    expect(result).toMatchObject({ ok: true, count: 3, anchorSeq: 6 });
    if (!result.ok) throw new Error("unreachable");
    expect(result.checkpoints).toBeGreaterThanOrEqual(1);

    // The events after the anchor deleted and the head moved back: the checkpoint of #9 says no.
    sql(db, "DELETE FROM audit WHERE seq > 6");
    const d = new Database(db, { readonly: true });
    const anchor = d.prepare("SELECT hash FROM audit_marks WHERE kind = 'anchor'").get() as {
      hash: string;
    };
    d.close();
    sql(db, "UPDATE audit_head SET seq = 6, hash = ?", anchor.hash);
    expect(await verifyAuditLog(reopened, { key: KEY, checkpointFile })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/checkpoint/),
    });
  });
});
