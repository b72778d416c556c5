import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { isSensitiveKey, REDACTED, redact } from "../../src/audit/redact.js";
import { createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function seeded(n: number) {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const db = join(t.dir, "a.db");
  const engine = await createAirlock({ store: sqliteStore(db) });
  for (let i = 0; i < n; i++) {
    const r = await engine.request({ title: `r${i}`, requester: "agent" });
    await engine.decide(r.id, { outcome: "approved", reviewer: "alice", comment: `ok ${i}` });
  }
  await engine.close();
  return db;
}

async function verify(db: string) {
  const engine = await createAirlock({ store: sqliteStore(db), sweeper: false });
  const v = await engine.verifyAudit();
  await engine.close();
  return v;
}

function tamper(db: string, sql: string) {
  const d = new Database(db);
  d.prepare(sql).run();
  d.close();
}

describe("audit hash chain", () => {
  it("an intact log verifies", async () => {
    const db = await seeded(5);
    expect(await verify(db)).toMatchObject({ ok: true, count: 10 });
  });

  it("an edited row is named as the first bad event", async () => {
    const db = await seeded(5);
    tamper(db, "UPDATE audit SET data = replace(data, 'ok 2', 'ok 9') WHERE seq = 6");
    expect(await verify(db)).toMatchObject({ ok: false, badSeq: 6 });
  });

  it("an edited actor or broken JSON is caught too", async () => {
    const db = await seeded(3);
    tamper(db, "UPDATE audit SET actor = 'mallory' WHERE seq = 2");
    expect(await verify(db)).toMatchObject({ ok: false, badSeq: 2 });
    const db2 = await seeded(3);
    tamper(db2, "UPDATE audit SET data = '{broken' WHERE seq = 3");
    expect(await verify(db2)).toMatchObject({ ok: false, badSeq: 3 });
  });

  it("a deleted row in the middle is caught", async () => {
    const db = await seeded(5);
    tamper(db, "DELETE FROM audit WHERE seq = 4");
    expect(await verify(db)).toMatchObject({ ok: false, badSeq: 5 });
  });

  it("deleting the newest rows is caught by the chain head", async () => {
    const db = await seeded(5);
    tamper(db, "DELETE FROM audit WHERE seq >= 9");
    const v = await verify(db);
    expect(v).toMatchObject({ ok: false, badSeq: 9 });
  });
});

describe("redaction", () => {
  it("recognises sensitive keys case-insensitively", () => {
    for (const k of [
      "password",
      "DB_PASSWORD",
      "clientSecret",
      "token",
      "X-Auth-Token",
      "api_key",
      "apiKey",
      "credentials",
      "Authorization",
    ]) {
      expect(isSensitiveKey(k), k).toBe(true);
    }
    for (const k of ["path", "amount", "title", "user"]) expect(isSensitiveKey(k), k).toBe(false);
  });

  it("redacts nested values without touching the input", () => {
    const input = { a: 1, auth: { user: "u" }, list: [{ secret: 2, keep: 3 }], s: "password" };
    const out = redact(input);
    expect(out).toEqual({
      a: 1,
      auth: REDACTED,
      list: [{ secret: REDACTED, keep: 3 }],
      s: "password",
    });
    expect(input.list[0]?.secret).toBe(2);
  });

  it("survives cycles", () => {
    const a: Record<string, unknown> = { x: 1 };
    a.self = a;
    expect(redact(a)).toEqual({ x: 1, self: "[Circular]" });
  });
});
