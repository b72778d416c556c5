// A keyed log records in its chain that signed checkpoints are being written, so deleting the
// checkpoint file no longer passes for "there never were any": truncate the trailing events, rewrite
// the head to match, delete the file, and verify fails (on SQLite and on PostgreSQL). A new file
// started after a deletion does not vouch for the log either; a log made before the record existed
// verifies as it did; a look-alike recorded without the key counts for nothing.
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  CHECKPOINTS_STARTED,
  checkpointsStartedDraft,
  createCheckpointWriter,
  readCheckpoints,
} from "../../src/audit/checkpoint.js";
import { verifyAuditLog } from "../../src/audit/verify.js";
import type { Store } from "../../src/core/store.js";
import { postgresStore } from "../../src/store/postgres.js";
import { type SqliteStoreOptions, sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import { adminQuery, describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";
import { createAndDecide } from "./fixtures.js";

const KEY = "k".repeat(32);
const KEY_BYTES = Buffer.from(KEY);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function folder(): string {
  const t = tempDir("airlock-cp-start-");
  cleanups.push(t.cleanup);
  return t.dir;
}

/** Three decided requests on a fresh keyed store with a checkpoint file; its events are #1 (the
 * record that checkpoints start) and #2–#7. */
async function seeded(store: Store): Promise<void> {
  await store.migrate();
  for (let i = 0; i < 3; i++) await createAndDecide(store, `req_${i}`, "approved");
  await store.close();
}

describe("the record that checkpoints start, on SQLite", () => {
  const sqlite = (path: string, o: SqliteStoreOptions = {}) => {
    const s = sqliteStore(path, { checkpointThread: false, ...o });
    cleanups.push(() => s.close());
    return s;
  };
  /** Drops the last request (its events #6, #7 and its row) and moves the head back to #5, as
   * someone with write access to the database but not the key can. */
  const truncate = (path: string) => {
    const raw = new Database(path);
    raw.prepare("DELETE FROM audit WHERE seq > 5").run();
    raw.prepare("DELETE FROM requests WHERE id = 'req_2'").run();
    raw
      .prepare("UPDATE audit_head SET seq = 5, hash = (SELECT hash FROM audit WHERE seq = 5)")
      .run();
    raw.close();
  };

  it("is event #1 of a new keyed log, with a checkpoint of it in the file", async () => {
    const d = folder();
    const db = join(d, "a.db");
    const file = join(d, "checkpoints");
    await seeded(sqlite(db, { auditKey: KEY, checkpointFile: file }));
    const store = sqlite(db, { auditKey: KEY });
    const [first] = await store.listAudit({ limit: 1 });
    expect(first).toMatchObject({ seq: 1, type: "notified", actor: "airlock" });
    expect(first?.data).toMatchObject({ kind: CHECKPOINTS_STARTED });
    const { checkpoints } = await readCheckpoints(file, KEY_BYTES);
    expect(checkpoints.map((c) => c.seq)).toContain(1);
    expect(await verifyAuditLog(store, { key: KEY, checkpointFile: file })).toMatchObject({
      ok: true,
      count: 7,
    });
  });

  it("truncated tail + rewritten head + deleted checkpoint file: verify fails", async () => {
    const d = folder();
    const db = join(d, "a.db");
    const file = join(d, "checkpoints");
    await seeded(sqlite(db, { auditKey: KEY, checkpointFile: file }));
    truncate(db);
    rmSync(file);
    const store = sqlite(db, { auditKey: KEY });
    const v = await verifyAuditLog(store, { key: KEY, checkpointFile: file });
    expect(v).toMatchObject({ ok: false, badSeq: 1 });
    expect(v.ok ? "" : v.reason).toMatch(
      /event #1 records that signed checkpoints .* were being written, but the checkpoint file .* holds none/,
    );
    // Verified without naming a file at all, the chain still asks for one.
    const without = await verifyAuditLog(store, { key: KEY });
    expect(without.ok ? "" : without.reason).toMatch(/no checkpoint file was given/);
  });

  it("a new file started after the deletion does not vouch for the log before it", async () => {
    const d = folder();
    const db = join(d, "a.db");
    const file = join(d, "checkpoints");
    await seeded(sqlite(db, { auditKey: KEY, checkpointFile: file }));
    truncate(db);
    rmSync(file);
    // The server starts again: a new, empty file, so it records a new start and writes on.
    const restarted = sqlite(db, { auditKey: KEY, checkpointFile: file });
    await restarted.migrate();
    await createAndDecide(restarted, "req_later", "approved");
    await restarted.close();
    expect((await readCheckpoints(file, KEY_BYTES)).checkpoints.length).toBeGreaterThan(0);
    const v = await verifyAuditLog(sqlite(db, { auditKey: KEY }), {
      key: KEY,
      checkpointFile: file,
    });
    expect(v).toMatchObject({ ok: false, badSeq: 1 });
    expect(v.ok ? "" : v.reason).toMatch(
      /has no checkpoint of it: the file was deleted or replaced/,
    );
  });

  it("a prune that deletes the record records it again, so the file is still required", async () => {
    const d = folder();
    const db = join(d, "a.db");
    const file = join(d, "checkpoints");
    await seeded(sqlite(db, { auditKey: KEY, checkpointFile: file }));
    const store = sqlite(db, { auditKey: KEY, checkpointFile: file });
    await store.migrate();
    // Everything (the record at #1 and the requests of 2023) is older than the cut.
    expect(await store.prune?.({ before: Date.parse("2026-01-01") })).toMatchObject({ events: 7 });
    const [record] = await store.listAudit({ limit: 10 });
    expect(record).toMatchObject({ seq: 8, data: { kind: CHECKPOINTS_STARTED } });
    for (let i = 3; i < 5; i++) await createAndDecide(store, `req_${i}`, "approved");
    await store.close();
    const raw = new Database(db);
    raw.prepare("DELETE FROM audit WHERE seq > 10").run();
    raw.prepare("DELETE FROM requests WHERE id = 'req_4'").run();
    raw
      .prepare("UPDATE audit_head SET seq = 10, hash = (SELECT hash FROM audit WHERE seq = 10)")
      .run();
    raw.close();
    const reader = sqlite(db, { auditKey: KEY });
    expect(await verifyAuditLog(reader, { key: KEY })).toMatchObject({ ok: false, badSeq: 8 });
    rmSync(file);
    const v = await verifyAuditLog(reader, { key: KEY, checkpointFile: file });
    expect(v.ok ? "" : v.reason).toMatch(/event #8 records .* holds none/);
  });

  it("a resumed verify needs the file from before its mark when the mark says it was written", async () => {
    const d = folder();
    const db = join(d, "a.db");
    const file = join(d, "checkpoints");
    await seeded(sqlite(db, { auditKey: KEY, checkpointFile: file }));
    const reader = sqlite(db, { auditKey: KEY });
    const opts = { key: KEY, checkpointFile: file };
    expect(await verifyAuditLog(reader, { ...opts, recordMark: true })).toMatchObject({ ok: true });
    const writer = sqlite(db, { auditKey: KEY, checkpointFile: file });
    await writer.migrate();
    for (let i = 3; i < 5; i++) await createAndDecide(writer, `req_${i}`, "approved");
    await writer.close();
    expect(await verifyAuditLog(reader, { ...opts, resume: true })).toMatchObject({
      ok: true,
      startedAt: "mark",
      from: 7,
    });
    // After the mark: req_4's events cut, the head moved back, the file deleted.
    const raw = new Database(db);
    raw.prepare("DELETE FROM audit WHERE seq > 9").run();
    raw.prepare("DELETE FROM requests WHERE id = 'req_4'").run();
    raw
      .prepare("UPDATE audit_head SET seq = 9, hash = (SELECT hash FROM audit WHERE seq = 9)")
      .run();
    raw.close();
    rmSync(file);
    const v = await verifyAuditLog(reader, { ...opts, resume: true });
    expect(v).toMatchObject({ ok: false, badSeq: 7 });
    expect(v.ok ? "" : v.reason).toMatch(
      /the verified mark at event #7 says signed checkpoints .* holds none from before it/,
    );
  });

  it("a log made before the record existed verifies as before, with or without its file", async () => {
    const d = folder();
    const db = join(d, "old.db");
    const file = join(d, "checkpoints");
    // Keyed without checkpoints, then given a file that already holds checkpoints (as an older
    // Airlock wrote it): nothing records a start.
    const keyed = sqlite(db, { auditKey: KEY });
    await keyed.migrate();
    await createAndDecide(keyed, "req_old", "approved");
    const head = await keyed.auditHead();
    await keyed.close();
    if (!head) throw new Error("no head");
    const older = createCheckpointWriter({ file, key: KEY_BYTES });
    older.note(head);
    await older.flush();
    const later = sqlite(db, { auditKey: KEY, checkpointFile: file });
    await later.migrate();
    await createAndDecide(later, "req_new", "rejected");
    await later.close();
    const store = sqlite(db, { auditKey: KEY });
    const events = await store.listAudit({ limit: 100 });
    expect(events.some((e) => e.data.kind === CHECKPOINTS_STARTED)).toBe(false);
    expect(await verifyAuditLog(store, { key: KEY, checkpointFile: file })).toMatchObject({
      ok: true,
      count: 4,
    });
    rmSync(file);
    expect(await verifyAuditLog(store, { key: KEY, checkpointFile: file })).toMatchObject({
      ok: true,
      count: 4,
    });
  });

  it("a look-alike recorded without the key asks for nothing", async () => {
    const d = folder();
    const db = join(d, "a.db");
    const store = sqlite(db, { auditKey: KEY });
    await store.migrate();
    await store.appendAudit([
      {
        type: "notified",
        actor: "airlock",
        at: 1,
        data: { kind: CHECKPOINTS_STARTED, mac: "0".repeat(64) },
      },
    ]);
    // A genuine record's data and time copied by someone recording under another name.
    await store.appendAudit([{ ...checkpointsStartedDraft(KEY_BYTES, 2), actor: "mallory" }]);
    expect(existsSync(join(d, "checkpoints"))).toBe(false);
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({ ok: true, count: 2 });
    // The store's own record (as the store writes it) does ask for the file.
    await store.appendAudit([checkpointsStartedDraft(KEY_BYTES, 3)]);
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({ ok: false, badSeq: 3 });
  });
});

await describePg("the record that checkpoints start, on PostgreSQL", ({ url }) => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const s of schemas) await dropSchema(url, s);
  });

  // PostgreSQL keeps its checkpoints in the same kind of file, on the machine running Airlock (the
  // `checkpointFile` option; `--checkpoint-file` or AIRLOCK_CHECKPOINT_FILE for the command), which
  // whoever controls that machine can delete as well as rewrite the database.
  it("truncated tail + rewritten head + deleted checkpoint file: verify fails", async () => {
    const schema = freshSchema("airlock_cp_start");
    schemas.push(schema);
    const file = join(folder(), "checkpoints");
    const open = (o: { checkpointFile?: string } = {}) => {
      const s = postgresStore(url, { schema, max: 2, auditKey: KEY, ...o });
      cleanups.push(() => s.close());
      return s;
    };
    await seeded(open({ checkpointFile: file }));
    expect(readFileSync(file, "utf8")).toMatch(/"seq":1,/);
    const q = (text: string) => adminQuery(url, text.replaceAll("S.", `"${schema}".`));
    await q("DELETE FROM S.audit WHERE seq > 5");
    await q("DELETE FROM S.requests WHERE id = 'req_2'");
    await q("UPDATE S.audit_head SET seq = 5, hash = (SELECT hash FROM S.audit WHERE seq = 5)");
    rmSync(file);
    const store = open();
    const v = await verifyAuditLog(store, { key: KEY, checkpointFile: file });
    expect(v).toMatchObject({ ok: false, badSeq: 1 });
    expect(v.ok ? "" : v.reason).toMatch(/event #1 records .* the checkpoint file .* holds none/);

    // Started again on a new file: the record at #1 still has no checkpoint.
    const restarted = open({ checkpointFile: file });
    await restarted.migrate();
    await createAndDecide(restarted, "req_later", "approved");
    await restarted.close();
    const again = await verifyAuditLog(store, { key: KEY, checkpointFile: file });
    expect(again.ok ? "" : again.reason).toMatch(/#1 .* has no checkpoint of it/);
  });

  it("a resumed verify needs the file from before its mark", async () => {
    const schema = freshSchema("airlock_cp_resume");
    schemas.push(schema);
    const file = join(folder(), "checkpoints");
    const opened = (o: { checkpointFile?: string } = {}) => {
      const s = postgresStore(url, { schema, max: 2, auditKey: KEY, ...o });
      cleanups.push(() => s.close());
      return s;
    };
    await seeded(opened({ checkpointFile: file }));
    const reader = opened();
    const opts = { key: KEY, checkpointFile: file };
    expect(await verifyAuditLog(reader, { ...opts, recordMark: true })).toMatchObject({ ok: true });
    const writer = opened({ checkpointFile: file });
    await writer.migrate();
    for (let i = 3; i < 5; i++) await createAndDecide(writer, `req_${i}`, "approved");
    await writer.close();
    expect(await verifyAuditLog(reader, { ...opts, resume: true })).toMatchObject({ ok: true });
    const q = (text: string) => adminQuery(url, text.replaceAll("S.", `"${schema}".`));
    await q("DELETE FROM S.audit WHERE seq > 9");
    await q("DELETE FROM S.requests WHERE id = 'req_4'");
    await q("UPDATE S.audit_head SET seq = 9, hash = (SELECT hash FROM S.audit WHERE seq = 9)");
    rmSync(file);
    const v = await verifyAuditLog(reader, { ...opts, resume: true });
    expect(v.ok ? "" : v.reason).toMatch(
      /the verified mark at event #7 .* holds none from before it/,
    );
  });

  it("a prune that deletes the record records it again", async () => {
    const schema = freshSchema("airlock_cp_prune");
    schemas.push(schema);
    const file = join(folder(), "checkpoints");
    await seeded(postgresStore(url, { schema, max: 2, auditKey: KEY, checkpointFile: file }));
    const store = postgresStore(url, { schema, max: 2, auditKey: KEY, checkpointFile: file });
    cleanups.push(() => store.close());
    await store.migrate();
    expect(await store.prune?.({ before: Date.parse("2026-01-01") })).toMatchObject({ events: 7 });
    const [record] = await store.listAudit({ limit: 10 });
    expect(record).toMatchObject({ seq: 8, data: { kind: CHECKPOINTS_STARTED } });
    expect(await verifyAuditLog(store, { key: KEY, checkpointFile: file })).toMatchObject({
      ok: true,
    });
    rmSync(file);
    const v = await verifyAuditLog(store, { key: KEY, checkpointFile: file });
    expect(v.ok ? "" : v.reason).toMatch(/event #8 records .* holds none/);
  });
});
