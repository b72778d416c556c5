// What the PostgreSQL store adds to the contract: concurrent migrations, schema isolation of data and
// of change signals, sweeper claims (SKIP LOCKED and leases), exact round trips of awkward content,
// pool ownership, option checks, and a clear error when the database is unreachable.
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { AuditDraft } from "../../src/core/schemas.js";
import { createAirlock } from "../../src/engine/engine.js";
import { type PostgresStore, postgresStore } from "../../src/store/postgres.js";
import { maskUrl } from "../../src/store/postgres-errors.js";
import { POSTGRES_MIGRATIONS } from "../../src/store/postgres-migrations.js";
import { makeRequest } from "../../src/testing/index.js";
import { adminQuery, describePg, dropSchema, freshSchema } from "./pg-env.js";

const created = (id: string): AuditDraft => ({
  type: "created",
  requestId: id,
  actor: "agent",
  at: 1,
  data: {},
});

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5000) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("postgres store without a database", () => {
  it("masks passwords in the URLs it names", () => {
    expect(maskUrl("postgres://alice:s3cret@db.local:5432/app")).toBe(
      "postgres://alice:***@db.local:5432/app",
    );
    expect(maskUrl("postgres://alice@db.local/app?password=s3cret&sslmode=require")).toBe(
      "postgres://alice@db.local/app?password=***&sslmode=require",
    );
    expect(maskUrl("host=db password='a b' user=alice")).toBe("host=db password=*** user=alice");
  });

  it("fails at start with one clear error naming the URL, password masked", async () => {
    const store = postgresStore("postgres://alice:s3cret@127.0.0.1:1/test");
    const err = await createAirlock({ store }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await store.close();
    expect(err).toMatchObject({ code: "store_unavailable" });
    const message = (err as Error).message;
    expect(message).toContain("postgres://alice:***@127.0.0.1:1/test");
    expect(message).not.toContain("s3cret");
    expect(message).toMatch(/ECONNREFUSED|refused/i);
    expect(message.split("\n")).toHaveLength(1);
  });

  it("checks its options, naming the one that is wrong", () => {
    expect(() => postgresStore("postgres://x@127.0.0.1/test", { schema: "" })).toThrow(/`schema`/);
    expect(() => postgresStore("postgres://x@127.0.0.1/test", { max: 0 })).toThrow(
      "Expected `max` to be an integer from 1 and up, got `0` (number)",
    );
  });
});

await describePg("postgres store", ({ url }) => {
  const schema = freshSchema();
  const other = freshSchema();
  const stores: PostgresStore[] = [];
  const open = (s = schema, options: Parameters<typeof postgresStore>[1] = {}) => {
    const store = postgresStore(url, { schema: s, max: 3, ...options });
    stores.push(store);
    return store;
  };
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await dropSchema(url, schema);
    await dropSchema(url, other);
  });

  it("migrates once when several stores start together", async () => {
    const fresh = freshSchema("airlock_migrate");
    const many = Array.from({ length: 5 }, () => open(fresh));
    try {
      await Promise.all(many.map((s) => s.migrate()));
      const rows = await adminQuery(url, `SELECT version FROM "${fresh}".airlock_migrations`);
      expect(rows).toEqual(POSTGRES_MIGRATIONS.map((m) => ({ version: m.version })));
      await many[0]?.migrate();
      expect(await many[1]?.countPending()).toBe(0);
      // A schema migrated by a newer Airlock is refused, not misread.
      await adminQuery(url, `INSERT INTO "${fresh}".airlock_migrations VALUES (999, 0)`);
      await expect(open(fresh).migrate()).rejects.toThrow(/migration 999, newer than this Airlock/);
    } finally {
      await dropSchema(url, fresh);
    }
  });

  it("lets a claim be a HOT update: no index of requests holds a column a claim changes", async () => {
    const store = open(schema);
    await store.migrate();
    // PostgreSQL writes no index entry for an update that changes no column any index holds (key,
    // INCLUDE, expression or predicate) when the new row fits its page. A claim changes only these
    // (it also writes claimed_until NULL, which it already is once the gate is decided).
    const claimed = ["doc", "doc_bytes", "version", "updated_at"];
    const indexes = await adminQuery<{ name: string; columns: string[]; exprs: string | null }>(
      url,
      `SELECT c.relname AS name,
         ARRAY(SELECT a.attname::text FROM pg_attribute a
           WHERE a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)) AS columns,
         concat_ws(' ', pg_get_expr(i.indexprs, i.indrelid), pg_get_expr(i.indpred, i.indrelid)) AS exprs
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       WHERE i.indrelid = '"${schema}".requests'::regclass`,
    );
    expect(indexes.length).toBeGreaterThan(3);
    for (const ix of indexes) {
      const words = new Set([...ix.columns, ...(ix.exprs ?? "").split(/[^a-z_]+/)]);
      expect(
        claimed.filter((c) => words.has(c)),
        ix.name,
      ).toEqual([]);
    }
  });

  it("keeps schemas apart, data and change signals alike", async () => {
    const a = open(schema);
    const b = open(schema);
    const elsewhere = open(other);
    await Promise.all([a.migrate(), elsewhere.migrate()]);
    let calls = 0;
    const stop = a.onExternalChange(() => {
      calls++;
    });
    // Called once when LISTEN is in place, so nothing committed before is missed.
    await until("the listener is connected", () => calls === 1);

    const r = makeRequest();
    await elsewhere.insertRequest(r, [created(r.id)]);
    expect(await a.getRequest(r.id)).toBeUndefined();
    // Our own writes need no signal either.
    const mine = makeRequest();
    await a.insertRequest(mine, [created(mine.id)]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(calls).toBe(1);

    const theirs = makeRequest();
    await b.insertRequest(theirs, [created(theirs.id)]);
    await until("another store's commit is signalled", () => calls === 2);
    stop();
  });

  it("claims due requests: other sweepers skip them until the lease ends", async () => {
    const s = freshSchema("airlock_claims");
    const a = open(s, { claimTtlMs: 1000 });
    const b = open(s, { claimTtlMs: 1000 });
    try {
      await a.migrate();
      const [r1, r2, r3] = [100, 200, 300].map((deadline) => makeRequest({ deadline }));
      if (!r1 || !r2 || !r3) throw new Error("unreachable");
      for (const r of [r1, r2, r3]) await a.insertRequest(r, [created(r.id)]);

      expect((await a.dueRequests(500, 2)).map((r) => r.id)).toEqual([r1.id, r2.id]);
      expect((await b.dueRequests(500, 10)).map((r) => r.id)).toEqual([r3.id]);
      // Each sees its own claims again (a sweep that stopped half way resumes)...
      expect((await a.dueRequests(500, 10)).map((r) => r.id)).toEqual([r1.id, r2.id]);
      // ...and plans its next sweep at the other's lease end, not at a deadline it cannot take.
      expect(await a.nextDeadline()).toBe(100);
      expect(await b.nextDeadline()).toBe(300);
      await a.transition({ ...r1, status: "timed_out", version: 2 }, 1, []);
      await a.transition({ ...r2, status: "timed_out", version: 2 }, 1, []);
      expect(await a.nextDeadline()).toBe(1500); // r3 is B's until 500 + 1000

      // A lease that ran out is free again.
      expect((await a.dueRequests(1600, 10)).map((r) => r.id)).toEqual([r3.id]);
      // A transition ends the lease: an escalation's new deadline is anyone's.
      const escalated = { ...r3, deadline: 2000, version: 2 };
      await a.transition(escalated, 1, []);
      expect((await b.dueRequests(2500, 10)).map((r) => r.id)).toEqual([r3.id]);
    } finally {
      await dropSchema(url, s);
    }
  });

  it("skips rows another transaction holds instead of waiting for them", async () => {
    const s = freshSchema("airlock_skip");
    const store = open(s);
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await store.migrate();
      const held = makeRequest({ deadline: 10 });
      const free = makeRequest({ deadline: 20 });
      for (const r of [held, free]) await store.insertRequest(r, [created(r.id)]);
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM "${s}".requests WHERE id = $1 FOR UPDATE`, [held.id]);
      const due = store.dueRequests(100, 10);
      const blocked = new Promise<"blocked">((resolve) => setTimeout(resolve, 2000, "blocked"));
      const first = await Promise.race([due, blocked]);
      await holder.query("ROLLBACK");
      expect(first === "blocked" ? first : first.map((r) => r.id)).toEqual([free.id]);
      expect((await store.dueRequests(100, 10)).map((r) => r.id)).toEqual([held.id, free.id]);
    } finally {
      await holder.end();
      await dropSchema(url, s);
    }
  });

  it("round-trips awkward content byte for byte", async () => {
    const store = open(schema);
    await store.migrate();
    const strange = "nul \u0000, quote ' \" backslash \\ emoji 🦆 é, line\nbreak";
    // The title is a column of its own (listings read it): no NUL there (the core refuses it too).
    const r = makeRequest({
      title: strange.replace("\u0000", "\\0"),
      summary: strange,
      args: { [strange]: [strange, 1.5, -0.25, 1e21, null, true] },
      approvers: ["o'brien", 'a "b"', "{curly}", "back\\slash"],
      createdAt: 1_700_000_000_000.25,
    });
    await store.insertRequest(r, [{ ...created(r.id), at: 12.5, data: { strange } }]);
    expect(await store.getRequest(r.id)).toEqual(r);
    const [e] = await store.listAudit({ requestId: r.id });
    expect(e?.data).toEqual({ strange });
    expect(e?.at).toBe(12.5);
    const forObrien = await store.listRequests({ approver: "o'brien" });
    expect(forObrien.items.map((x) => x.id)).toContain(r.id);
    const forBackslash = await store.listRequests({ approver: ["back\\slash"] });
    expect(forBackslash.items.map((x) => x.id)).toContain(r.id);
  });

  it("refuses text a column could not hold as written, before writing anything", async () => {
    const store = open(schema);
    await store.migrate();
    const before = (await store.listAudit({ limit: 10_000 })).length;
    const r = makeRequest();
    await expect(
      store.insertRequest(r, [{ ...created(r.id), actor: "al\u0000ice" }]),
    ).rejects.toMatchObject({ code: "invalid_input", field: "actor" });
    await expect(
      store.insertRequest({ ...r, approvers: ["bob\uD800"] }, [created(r.id)]),
    ).rejects.toMatchObject({ code: "invalid_input", field: "approvers" });
    await expect(
      store.insertRequest({ ...r, title: "a\u0000b" }, [created(r.id)]),
    ).rejects.toMatchObject({ code: "invalid_input", field: "title" });
    expect(await store.getRequest(r.id)).toBeUndefined();
    await store.insertRequest(r, [created(r.id)]);
    const decided = { ...r, status: "approved" as const, version: 2 };
    const draft: AuditDraft = {
      type: "decided",
      requestId: r.id,
      actor: "\uDC00x",
      at: 2,
      data: {},
    };
    await expect(store.transition(decided, 1, [draft])).rejects.toMatchObject({
      code: "invalid_input",
    });
    expect((await store.getRequest(r.id))?.version).toBe(1);
    // A surrogate pair is fine, and so is anything inside JSON.
    const ok = await store.transition(decided, 1, [
      { ...draft, actor: "🦆", data: { x: "\u0000" } },
    ]);
    expect(ok.ok).toBe(true);
    expect((await store.listAudit({ limit: 10_000 })).length).toBe(before + 2);
  });

  it("leaves a pool it was given open, and ends its own", async () => {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const borrowed = postgresStore(pool, { schema });
    await borrowed.migrate();
    await borrowed.close();
    await borrowed.close();
    expect((await pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await expect(borrowed.countPending()).rejects.toMatchObject({ code: "closed" });
    await pool.end();

    const own = postgresStore(url, { schema });
    await own.migrate();
    await own.close();
    expect(own.pool.ended).toBe(true);
  });
});
