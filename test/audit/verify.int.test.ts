// verifyAuditLog on SQLite: a snapshot while another process appends (no false alarm, a real
// deletion still caught), stored statuses checked against the audit, a keyed (HMAC) chain, signed
// checkpoints outside the database, and a deleted chain head.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { hashEvent } from "../../src/audit/chain.js";
import { verifyAuditLog } from "../../src/audit/verify.js";
import { canonicalJson } from "../../src/core/hash.js";
import type { Store } from "../../src/core/store.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import { startChild } from "../postgres/child.js";
import { createAndDecide } from "./fixtures.js";

const KEY = "k".repeat(32);
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tmpDb() {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return { db: join(t.dir, "a.db"), dir: t.dir };
}

function open(db: string, options: Parameters<typeof sqliteStore>[1] = {}): Store {
  const s = sqliteStore(db, options);
  cleanups.push(() => s.close());
  return s;
}

async function seed(store: Store, n: number, prefix = "req_s") {
  for (let i = 0; i < n; i++) {
    await createAndDecide(
      store,
      `${prefix}${String(i).padStart(4, "0")}`,
      i % 2 ? "approved" : "rejected",
    );
  }
}

function sql(db: string, ...statements: string[]) {
  const d = new Database(db);
  for (const s of statements) d.prepare(s).run();
  d.close();
}

/** What someone with write access but no key can do: recompute the whole chain with plain SHA-256,
 * forgetting that it was keyed. */
function recomputePlain(db: string) {
  const d = new Database(db);
  const rows = d.prepare("SELECT * FROM audit ORDER BY seq").all() as {
    seq: number;
    request_id: string | null;
    type: string;
    actor: string;
    at: number;
    data: string;
  }[];
  let prev = "0".repeat(64);
  const update = d.prepare("UPDATE audit SET prev_hash = ?, hash = ? WHERE seq = ?");
  for (const r of rows) {
    const draft = {
      type: r.type as "created",
      actor: r.actor,
      at: r.at,
      data: JSON.parse(r.data) as Record<string, unknown>,
      ...(r.request_id !== null ? { requestId: r.request_id } : {}),
    };
    const hash = hashEvent(r.seq, draft, prev);
    update.run(prev, hash, r.seq);
    prev = hash;
  }
  d.prepare("UPDATE audit_head SET hash = ?, keyed_from = NULL, key_id = NULL").run(prev);
  d.close();
}

describe("verifyAuditLog on SQLite", () => {
  it("never reports tampering while another process appends, and still catches a deletion", async () => {
    const { db } = tmpDb();
    const store = open(db);
    await seed(store, 3);
    const writer = startChild("../audit/writer-child.ts", { STORE: "sqlite", DB: db });
    cleanups.push(() => writer.stop());
    await writer.next("ready");
    const firstHead = (await store.auditHead())?.seq ?? 0;
    let runs = 0;
    const until = Date.now() + 2500;
    while (Date.now() < until || runs < 5) {
      const v = await verifyAuditLog(store, { pageSize: 7 });
      expect(v).toMatchObject({ ok: true });
      runs++;
    }
    writer.send({ type: "stop" });
    await writer.next("done");
    // The writer really did append while we verified.
    expect((await store.auditHead())?.seq ?? 0).toBeGreaterThan(firstHead + 10);
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true });
    sql(db, "DELETE FROM audit WHERE seq = 4");
    expect(await verifyAuditLog(store)).toMatchObject({ ok: false, badSeq: 5 });
  });

  it("a rejected request flipped to approved in the database is caught", async () => {
    const { db } = tmpDb();
    const store = open(db);
    await seed(store, 4);
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true, requests: 4 });
    // The whole row, column and document alike.
    sql(
      db,
      "UPDATE requests SET status = 'approved', doc = json_set(doc, '$.status', 'approved') WHERE id = 'req_s0000'",
    );
    const v = await verifyAuditLog(store);
    expect(v).toMatchObject({ ok: false, badSeq: 2 });
    expect(v.ok ? "" : v.reason).toMatch(
      /req_s0000 is stored as approved, but its audit log says rejected/,
    );
    // Only the document.
    const other = tmpDb();
    const s2 = open(other.db);
    await seed(s2, 2);
    sql(
      other.db,
      "UPDATE requests SET doc = json_set(doc, '$.status', 'approved') WHERE id = 'req_s0000'",
    );
    expect(await verifyAuditLog(s2)).toMatchObject({ ok: false });
  });

  it("a request added or removed behind the audit's back is caught", async () => {
    const { db } = tmpDb();
    const store = open(db);
    await seed(store, 2);
    sql(
      db,
      "INSERT INTO requests (id, action, status, requester, approvers, created_at, version, doc) SELECT 'req_zz', action, 'approved', requester, approvers, created_at, 2, json_set(doc, '$.id', 'req_zz', '$.status', 'approved') FROM requests WHERE id = 'req_s0001'",
    );
    const added = await verifyAuditLog(store);
    expect(added.ok ? "" : added.reason).toMatch(/req_zz .* has no event in the audit log/);
    sql(db, "DELETE FROM requests WHERE id IN ('req_zz', 'req_s0000')");
    const removed = await verifyAuditLog(store);
    expect(removed.ok ? "" : removed.reason).toMatch(/req_s0000 has audit events .* missing/);
  });

  it("checks the stored requests beside the walk; a broken chain is still what is reported, and the check stops with it", async () => {
    const { db } = tmpDb();
    const store = open(db);
    await seed(store, 2100); // three pages of stored requests
    const calls: string[] = [];
    const watched: Store = {
      ...store,
      readAuditPage: (after, limit) => {
        calls.push("log");
        return store.readAuditPage?.(after, limit) ?? Promise.resolve([]);
      },
      // Pages after the first come a turn of the event loop later, as from a server: the walk's
      // own steps (all ready at once here) then go first, whatever order its awaits take.
      listStatusEvidence: async (after, limit) => {
        if (after !== undefined) await new Promise((resolve) => setImmediate(resolve));
        calls.push("requests");
        return (await store.listStatusEvidence?.(after, limit)) ?? [];
      },
    };
    expect(await verifyAuditLog(watched, { pageSize: 100 })).toMatchObject({
      ok: true,
      requests: 2100,
    });
    expect(calls.filter((c) => c === "requests")).toHaveLength(3);
    expect(calls.filter((c) => c === "log")).toHaveLength(42);
    // Not all after the walk: the first page of requests was read before the log's last page.
    expect(calls.indexOf("requests")).toBeLessThan(calls.lastIndexOf("log"));

    // A request in the last page altered: found once the walk passed.
    sql(
      db,
      "UPDATE requests SET status = 'approved', doc = json_set(doc, '$.status', 'approved') WHERE id = 'req_s2050'",
    );
    const altered = await verifyAuditLog(watched, { pageSize: 100 });
    expect(altered.ok ? "" : altered.reason).toMatch(/req_s2050 is stored as approved/);
    // And a link broken early in the log: the walk's failure is the one reported, and nothing is
    // read for the check of the requests once verify has answered.
    sql(db, `UPDATE audit SET prev_hash = '${"e".repeat(64)}' WHERE seq = 5`);
    calls.length = 0;
    const broken = await verifyAuditLog(watched, { pageSize: 100 });
    expect(broken).toMatchObject({ ok: false, badSeq: 5 });
    const readWhileVerifying = calls.length;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls).toHaveLength(readWhileVerifying);
    // The first page, and at most the one asked for before the walk failed.
    expect(calls.filter((c) => c === "requests").length).toBeLessThan(3);
  });

  it("hashes the stored data text as read; a log written with keys as inserted (older versions) still verifies, and an edit of the text is caught", async () => {
    const { db } = tmpDb();
    const store = open(db, { auditKey: KEY });
    await seed(store, 4);
    await store.appendAudit(
      Array.from({ length: 6 }, (_, i) => ({
        type: "notified" as const,
        actor: "system",
        at: 1_700_000_000_000 + i,
        data: { to: ["b", "a"], channel: "slack", meta: { z: i, a: { y: null, b: "é" } } },
      })),
    );
    const d = new Database(db);
    const rows = d.prepare("SELECT seq, data FROM audit ORDER BY seq").all() as {
      seq: number;
      data: string;
    }[];
    // The store writes canonical JSON (keys sorted at every depth), the text the hash covers.
    for (const r of rows) expect(r.data).toBe(canonicalJson(JSON.parse(r.data)));
    // Older versions wrote JSON.stringify's order: here every object's keys reversed, same values.
    const reversed = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reversed)
        : v !== null && typeof v === "object"
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, x]) => [k, reversed(x)]),
            )
          : v;
    const rewrite = d.prepare("UPDATE audit SET data = ? WHERE seq = ?");
    let reordered = 0;
    for (const r of rows) {
      const older = JSON.stringify(reversed(JSON.parse(r.data)));
      if (older !== r.data) reordered++;
      rewrite.run(older, r.seq);
    }
    d.close();
    expect(reordered).toBe(6);
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({
      ok: true,
      count: rows.length,
    });

    const decided = rows.find((r) => r.data.includes('"outcome":"rejected"'));
    if (!decided) throw new Error("fixture: no rejection");
    sql(
      db,
      `UPDATE audit SET data = replace(data, '"rejected"', '"approved"') WHERE seq = ${decided.seq}`,
    );
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({
      ok: false,
      badSeq: decided.seq,
      reason: `event #${decided.seq} was altered: its content does not match its hash`,
    });
  });

  // Each found by a review: a text JSON.parse and SQL read differently, or that hashes like another.
  it.each([
    [
      "a duplicate key: SQL reads the first (approved), JSON.parse the last (rejected, as hashed)",
      `'{"outcome":"approved",' || substr(data, 2)`,
    ],
    ["a non-text duplicate", `'{"outcome":0,' || substr(data, 2)`],
    [
      "a __proto__ key the canonical text would drop",
      `'{"__proto__":{"outcome":"approved","note":"forged"},' || substr(data, 2)`,
    ],
    ["the same value spelled with spaces", `replace(data, ':', ': ')`],
  ])("a rejection's audit event edited with %s is caught", async (_name, edit) => {
    const { db } = tmpDb();
    const store = open(db, { auditKey: KEY });
    await seed(store, 1); // req_s0000, rejected: events #1 created, #2 decided
    sql(
      db,
      `UPDATE audit SET data = ${edit} WHERE seq = 2`,
      "UPDATE requests SET status = 'approved', doc = json_set(doc, '$.status', 'approved')",
    );
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({
      ok: false,
      badSeq: 2,
      reason: "event #2 was altered: its content does not match its hash",
    });
  });

  it.each([
    ["a second status", '"status":"approved"'],
    ["a second status spelled with an escape", '"st\\u0061tus":"approved"'],
    ["a second status after a nested one", '"n":{"status":"x"},"status":"approved"'],
  ])("a stored document given %s (JSON.parse reads the last) is caught", async (_name, added) => {
    const { db } = tmpDb();
    const store = open(db, { auditKey: KEY });
    await seed(store, 1);
    sql(db, `UPDATE requests SET doc = substr(doc, 1, length(doc) - 1) || ',${added}}'`);
    expect((await store.getRequest("req_s0000"))?.status).toBe("approved");
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(
        /request req_s0000 is stored with status rejected but its stored document says approved/,
      ),
    });
  });

  it.each([
    ["an object", '{"is":"rejected"}'],
    ["an array", '["rejected"]'],
    ["a number", "7"],
  ])("a stored document whose status became %s is caught as unreadable", async (_name, value) => {
    const { db } = tmpDb();
    const store = open(db, { auditKey: KEY });
    await seed(store, 1);
    sql(db, `UPDATE requests SET doc = replace(doc, '"status":"rejected"', '"status":${value}')`);
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(
        /request req_s0000 is stored with status rejected but its stored document says \(unreadable\)/,
      ),
    });
  });

  it("a keyed chain uses HMAC, needs its key to open and verify, and refuses another key", async () => {
    const { db } = tmpDb();
    // Events before the key stay plain; the chain is keyed from the first append with the key.
    const plain = open(db);
    await seed(plain, 2);
    await plain.close();
    const keyed = open(db, { auditKey: KEY });
    await seed(keyed, 2, "req_k");
    expect(await keyed.auditChainState()).toMatchObject({ keyedFrom: 5, head: { seq: 8 } });
    expect(await verifyAuditLog(keyed, { key: KEY })).toMatchObject({
      ok: true,
      count: 8,
      keyedFrom: 5,
    });
    await expect(verifyAuditLog(keyed)).rejects.toThrow(
      /keyed \(HMAC\) from event #5: verifying it needs the audit key/,
    );
    await expect(verifyAuditLog(keyed, { key: "x".repeat(32) })).rejects.toThrow(/not the key/);
    await keyed.close();
    expect(() => sqliteStore(db)).toThrow(
      /keyed \(HMAC\) from event #5: open the store with its audit key/,
    );
    expect(() => sqliteStore(db, { auditKey: "y".repeat(32) })).toThrow(/not the key/);
    expect(() => sqliteStore(db, { auditKey: "short" })).toThrow(/at least 16 bytes/);
    // An edited row whose chain is recomputed without the key no longer verifies.
    sql(db, "UPDATE audit SET actor = 'mallory' WHERE seq = 6");
    recomputePlain(db);
    sql(db, "UPDATE audit_head SET keyed_from = 5, key_id = NULL");
    const again = open(db, { auditKey: KEY });
    expect(await verifyAuditLog(again, { key: KEY })).toMatchObject({ ok: false, badSeq: 5 });
  });

  it("without a key the chain is plain SHA-256, as before", async () => {
    const { db } = tmpDb();
    const store = open(db);
    await seed(store, 2);
    expect(await store.auditChainState()).toEqual({
      head: { seq: 4, hash: expect.any(String) },
      headRowMissing: false,
    });
    const [e] = await store.listAudit({ limit: 1 });
    expect(e && hashEvent(e.seq, e, e.prevHash)).toBe(e?.hash);
  });

  it("signed checkpoints outside the database catch a truncated, wiped or recomputed log", async () => {
    const { db, dir } = tmpDb();
    const file = join(dir, "audit.checkpoints");
    const store = open(db, { auditKey: KEY, checkpointFile: file, checkpointIntervalMs: 1 });
    await seed(store, 3);
    await new Promise((r) => setTimeout(r, 20));
    await seed(store, 3, "req_t");
    await store.close();
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines[lines.length - 1]).toMatchObject({
      seq: 12,
      hash: expect.any(String),
      at: expect.any(Number),
      mac: expect.any(String),
    });
    const opts = { key: KEY, checkpointFile: file };
    const v0 = open(db, { auditKey: KEY });
    expect(await verifyAuditLog(v0, opts)).toMatchObject({ ok: true, count: 12 });
    await v0.close();
    await expect(
      verifyAuditLog(open(db, { auditKey: KEY }), { checkpointFile: file }),
    ).rejects.toThrow(/needs the audit key/);

    // The last request and its events gone, the head rewritten to match: the chain alone looks intact.
    const truncated = join(dir, "t.db");
    writeFileSync(truncated, readFileSync(db));
    sql(
      truncated,
      "DELETE FROM audit WHERE seq > 10",
      "DELETE FROM requests WHERE id LIKE 'req_t0002'",
      "UPDATE audit_head SET seq = 10, hash = (SELECT hash FROM audit WHERE seq = 10)",
    );
    const t = open(truncated, { auditKey: KEY });
    expect(await verifyAuditLog(t, { key: KEY })).toMatchObject({ ok: true });
    const tv = await verifyAuditLog(t, opts);
    expect(tv).toMatchObject({ ok: false });
    expect(tv.ok ? "" : tv.reason).toMatch(
      /records event #12, but the database's chain ends at #10/,
    );

    // Both tables wiped, head reset.
    const wiped = join(dir, "w.db");
    writeFileSync(wiped, readFileSync(db));
    sql(
      wiped,
      "DELETE FROM audit",
      "DELETE FROM requests",
      `UPDATE audit_head SET seq = 0, hash = '${"0".repeat(64)}'`,
    );
    expect(await verifyAuditLog(open(wiped, { auditKey: KEY }), opts)).toMatchObject({
      ok: false,
      badSeq: 1,
    });

    // A row edited and the whole chain recomputed in plain SHA-256, the keying forgotten.
    const rewritten = join(dir, "r.db");
    writeFileSync(rewritten, readFileSync(db));
    sql(rewritten, "UPDATE audit SET actor = 'mallory' WHERE seq = 2");
    recomputePlain(rewritten);
    const rv = await verifyAuditLog(open(rewritten), opts);
    expect(rv.ok ? "" : rv.reason).toMatch(/differs from the checkpoint/);

    // The checkpoint file itself edited.
    writeFileSync(file, readFileSync(file, "utf8").replace(/"seq":12/, '"seq":13'));
    const ev = await verifyAuditLog(open(db, { auditKey: KEY }), opts);
    expect(ev.ok ? "" : ev.reason).toMatch(/does not carry a valid signature/);
  });

  it("a deleted chain head is refused at open and reported by verify, not silently ignored", async () => {
    const { db } = tmpDb();
    const store = open(db);
    await seed(store, 2);
    sql(db, "DELETE FROM audit_head");
    // The open store: writes fail with a clear store_unavailable, verify reports it.
    await expect(createAndDecide(store, "req_after", "approved")).rejects.toMatchObject({
      code: "store_unavailable",
      message: expect.stringMatching(/audit chain head row .* is missing/),
    });
    expect(await verifyAuditLog(store)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/head row is missing/),
    });
    // Opening it again is refused, naming the repair.
    expect(() => sqliteStore(db)).toThrow(
      /INSERT INTO audit_head \(id, seq, hash\) SELECT 1, seq, hash FROM audit/,
    );
  });
});
