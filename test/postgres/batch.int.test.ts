// Grouped writes on PostgreSQL (postgres-writes.ts): many transitions in flight from two store
// objects (two pools, each with its own idea of the chain head) commit in batches, and the audit
// chain stays contiguous, in commit order and verifiable, keyed or not; a write that loses inside a
// batch, or fails it, affects only its own caller. And title search (ListFilter.q).
import pg from "pg";
import { afterAll, afterEach, expect, it } from "vitest";
import { verifyAuditLog } from "../../src/audit/verify.js";
import type { ApprovalRequest, AuditDraft } from "../../src/core/schemas.js";
import type { Store } from "../../src/core/store.js";
import { deadlineKey, titleMatches } from "../../src/store/paging.js";
import { type PostgresStoreOptions, postgresStore } from "../../src/store/postgres.js";
import { fillTitleLower } from "../../src/store/postgres-migrations.js";
import { searchRows, WALK_ROWS } from "../../src/store/postgres-search.js";
import { type Query, statements } from "../../src/store/postgres-sql.js";
import { request } from "../audit/fixtures.js";
import { allIds } from "../helpers.js";
import { adminQuery, describePg, dropSchema, freshSchema } from "./pg-env.js";

const KEY = "b".repeat(32);

await describePg("postgres grouped writes and title search", ({ url }) => {
  const schemas: string[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    for (const s of schemas) await dropSchema(url, s);
  });
  const fresh = () => {
    const s = freshSchema("airlock_batch");
    schemas.push(s);
    return s;
  };
  const open = async (schema: string, o: PostgresStoreOptions = {}): Promise<Store> => {
    const s = postgresStore(url, { schema, max: 4, ...o });
    cleanups.push(() => s.close());
    await s.migrate();
    return s;
  };
  const created = (id: string): AuditDraft => ({
    type: "created",
    requestId: id,
    actor: "writer",
    at: 1,
    data: { id },
  });
  const decided = (id: string): AuditDraft => ({
    type: "decided",
    requestId: id,
    actor: "alice",
    at: 2,
    data: { outcome: "approved" },
  });

  /** Creates and decides `n` requests with ids `prefix0..`, all in flight at once. */
  const churn = (store: Store, prefix: string, n: number) =>
    Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const id = `${prefix}${String(i).padStart(4, "0")}`;
        const r = request(id);
        const made = await store.insertRequest(r, [created(id)]);
        expect(made.created).toBe(true);
        const t = await store.transition({ ...r, status: "approved", version: 2 }, 1, [
          decided(id),
        ]);
        expect(t.ok).toBe(true);
      }),
    );

  for (const keyed of [false, true]) {
    it(`commits batches of two stores as one contiguous, verifiable chain${keyed ? " (keyed)" : ""}`, async () => {
      const schema = fresh();
      const o = keyed ? { auditKey: KEY } : {};
      const a = await open(schema, o);
      const b = await open(schema, o);
      await Promise.all([churn(a, "req_a", 150), churn(b, "req_b", 150)]);

      const events = await a.listAudit({ limit: 10_000 });
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 600 }, (_, i) => i + 1));
      // Each request: created exactly once, then decided exactly once, in that order.
      const seen = new Map<string, string[]>();
      for (const e of events)
        seen.set(e.requestId ?? "", [...(seen.get(e.requestId ?? "") ?? []), e.type]);
      expect(seen.size).toBe(300);
      for (const types of seen.values()) expect(types).toEqual(["created", "decided"]);
      // The stored head is the last event, and the chain verifies (with the key when keyed).
      expect(await a.auditHead()).toEqual({ seq: 600, hash: events[599]?.hash });
      expect(await verifyAuditLog(b, o.auditKey ? { key: o.auditKey } : {})).toMatchObject({
        ok: true,
        count: 600,
      });
    });
  }

  it("a write that loses inside a batch loses alone; the winner's request is returned", async () => {
    const schema = fresh();
    const store = await open(schema);
    const r = request("req_race");
    await store.insertRequest(r, [created(r.id)]);
    const others = Array.from({ length: 8 }, (_, i) => request(`req_other${i}`));
    // All sent together: one batch holding two transitions of the same version of req_race.
    const [first, second, ...rest] = await Promise.all([
      store.transition({ ...r, status: "approved", version: 2 }, 1, [decided(r.id)]),
      store.transition({ ...r, status: "rejected", version: 2 }, 1, [decided(r.id)]),
      ...others.map((o) => store.insertRequest(o, [created(o.id)])),
    ]);
    const outcomes = [first, second];
    expect(outcomes.filter((t) => t?.ok)).toHaveLength(1);
    const lost = outcomes.find((t) => !t?.ok);
    const won = outcomes.find((t) => t?.ok);
    expect(lost?.request?.status).toBe(won?.request?.status);
    expect(lost?.events).toEqual([]);
    for (const x of rest) expect(x).toMatchObject({ created: true });
    expect((await store.getRequest(r.id))?.status).toBe(won?.request?.status);
    expect(await store.listAudit({ requestId: r.id })).toHaveLength(2);
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true, count: 10 });
  });

  it("a write that fails a batch fails alone: the others commit", async () => {
    const schema = fresh();
    const store = await open(schema);
    await store.insertRequest(request("req_taken"), [created("req_taken")]);
    const fresh8 = Array.from({ length: 8 }, (_, i) => request(`req_ok${i}`));
    const results = await Promise.allSettled([
      // Same id, another key: the primary key refuses it.
      store.insertRequest(request("req_taken", { key: "another" }), [created("req_taken")]),
      ...fresh8.map((o) => store.insertRequest(o, [created(o.id)])),
    ]);
    expect(results[0]).toMatchObject({ status: "rejected" });
    for (const x of results.slice(1)) expect(x).toMatchObject({ status: "fulfilled" });
    expect(await store.countRequests({})).toBe(9);
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true, count: 9 });
  });

  it("an idempotent create in a batch returns the request that holds the key", async () => {
    const schema = fresh();
    const store = await open(schema);
    const first = request("req_k1", { key: "same" });
    await store.insertRequest(first, [created(first.id)]);
    const [again, other] = await Promise.all([
      store.insertRequest(request("req_k2", { key: "same" }), [created("req_k2")]),
      store.insertRequest(request("req_k3"), [created("req_k3")]),
    ]);
    expect(again).toMatchObject({ created: false, events: [] });
    expect(again?.request.id).toBe("req_k1");
    expect(other).toMatchObject({ created: true });
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true, count: 2 });
  });

  it("lookups asked for together are answered each with its own request (or none)", async () => {
    const schema = fresh();
    const store = await open(schema);
    const ids = Array.from({ length: 40 }, (_, i) => `req_get${i}`);
    await Promise.all(ids.map((id) => store.insertRequest(request(id), [created(id)])));
    // Known ids, each twice, and unknown ones, all at once: most wait behind the first lookups.
    const asked = [...ids, ...ids, "req_missing1", "req_missing2"];
    const got = await Promise.all(asked.map((id) => store.getRequest(id)));
    for (const [i, id] of asked.entries()) {
      if (id.startsWith("req_missing")) expect(got[i]).toBeUndefined();
      else expect(got[i]?.id).toBe(id);
    }
  });

  const TITLES = [
    "Deploy to production",
    "deploy 100% of traffic",
    "rename file_name.txt",
    "filename",
    "path C:\\temp\\x",
    "ÄRGER im Büro",
    "İstanbul trip",
    "ΟΔΟΣ closed",
    "plain",
    "",
  ];
  const QUERIES = [
    "deploy",
    "100%",
    "%",
    "_",
    "file_",
    "\\",
    "\\t",
    "ärger",
    "i̇stanbul",
    "οδος",
    "ς",
    "DEPLOY TO",
    "nothing",
    "",
  ];

  it("q lists and counts exactly what titleMatches says, wildcards and Unicode included", async () => {
    const schema = fresh();
    const store = await open(schema);
    for (const [i, title] of TITLES.entries()) {
      await store.insertRequest(request(`req_t${i}`, { title }), []);
    }
    for (const q of QUERIES) {
      const expected = TITLES.filter((t) => titleMatches(t, q)).sort();
      const page = await store.listSummaries({ q, limit: 100 });
      expect(page.items.map((x) => x.title).sort(), `q=${JSON.stringify(q)}`).toEqual(expected);
      expect(await store.countRequests({ q }), `count q=${JSON.stringify(q)}`).toBe(
        expected.length,
      );
      const docs = await store.listRequests({ q, limit: 100, order: "deadline" });
      expect(docs.items.map((x) => x.title).sort()).toEqual(expected);
    }
  });

  it("a search walks the listing's order, then asks the trigram index after the last row walked: pages equal titleMatches in every order and scope", async () => {
    const schema = fresh();
    // Walks of 3 and 7 rows make every page cross from the walk to the index; the default walks
    // the whole listing.
    const stores = [
      await open(schema, { titleWalkRows: 3 }),
      await open(schema, { titleWalkRows: 7 }),
      await open(schema),
    ];
    const writer = stores[2] as Store;
    const rs: ApprovalRequest[] = [];
    for (let i = 0; i < 240; i++) {
      const title = i % 9 === 2 ? `Beacon ${i}` : i % 50 === 7 ? `rare find ${i}` : `filler ${i}`;
      const r = request(`req_${String(i).padStart(4, "0")}`, {
        title,
        ...(i % 4 === 0 ? {} : { deadline: 1_800_000_000_000 + (i % 13) * 1000 }),
        // A reviewer's scope (approvers) and an action filter drop some of the walk's matches.
        approvers: i % 5 === 1 ? ["ops"] : i % 5 === 2 ? [] : ["finance"],
        action: i % 7 === 3 ? "deploy" : "files.write",
      });
      await writer.insertRequest(r, []);
      if (i % 3 === 0) {
        const approved = { ...r, status: "approved" as const, version: 2 };
        expect((await writer.transition(approved, 1, [])).ok).toBe(true);
        rs.push(approved);
      } else rs.push(r);
    }
    const opsMay = (r: ApprovalRequest) => r.approvers.length === 0 || r.approvers.includes("ops");
    const want = (
      q: string,
      status: string | undefined,
      order: string,
      keep: (r: ApprovalRequest) => boolean = () => true,
    ) =>
      rs
        .filter(
          (r) =>
            (status === undefined || r.status === status) && titleMatches(r.title, q) && keep(r),
        )
        .sort((a, b) =>
          order === "deadline"
            ? deadlineKey(a) - deadlineKey(b) || (a.id < b.id ? -1 : 1)
            : (a.id < b.id ? -1 : 1) * (order === "newest" ? -1 : 1),
        )
        .map((r) => r.id);
    for (const [n, store] of stores.entries()) {
      for (const q of ["beacon", "rare find", "filler 1", "nothing here", "be"]) {
        for (const status of [undefined, "pending", "approved"] as const) {
          for (const order of ["newest", "oldest", "deadline"] as const) {
            const ids = await allIds(store, { q, status, order, limit: 4 });
            expect(ids, `store ${n} q=${q} status=${status} order=${order}`).toEqual(
              want(q, status, order),
            );
          }
        }
        const docs = await store.listRequests({ q, status: "pending", limit: 500 });
        expect(docs.items.map((r) => r.id)).toEqual(want(q, "pending", "newest"));
        for (const order of ["newest", "deadline"] as const) {
          const scope = `store ${n} q=${q} order=${order}`;
          const reviewer = await allIds(store, {
            q,
            status: "pending",
            order,
            approver: ["alice", "ops"],
            limit: 3,
          });
          expect(reviewer, `${scope} approver`).toEqual(want(q, "pending", order, opsMay));
          const deploys = await allIds(store, { q, order, action: "deploy", limit: 2 });
          expect(deploys, `${scope} action`).toEqual(
            want(q, undefined, order, (r) => r.action === "deploy"),
          );
        }
      }
    }
  });

  it("a reviewer's search fills its page from the walk when the approver filter drops half the matches", async () => {
    const schema = fresh();
    const store = await open(schema);
    const rs: ApprovalRequest[] = [];
    for (let i = 0; i < 400; i++) {
      const r = request(`req_${String(i).padStart(4, "0")}`, {
        title: i % 3 === 0 ? `Invoice ${i}` : `filler ${i}`,
        approvers: i % 2 === 0 ? ["ops"] : ["finance"],
      });
      await store.insertRequest(r, []);
      rs.push(r);
    }
    // searchRows itself, reading through a client of its own, to see which statements it runs.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    cleanups.push(() => client.end());
    const texts: string[] = [];
    const read = async <R>(q: Query): Promise<R[]> => {
      texts.push(q.text);
      return (await client.query(q.text, q.values as unknown[])).rows as R[];
    };
    const filter = { q: "invoice", status: "pending" as const, approver: ["ops"], limit: 10 };
    const rows = await searchRows<{ id: string; dkey: number }>(
      statements(schema),
      filter,
      "id",
      WALK_ROWS,
      read,
      async () => 0.3,
    );
    const want = rs
      .filter((r) => titleMatches(r.title, "invoice") && r.approvers.includes("ops"))
      .map((r) => r.id)
      .sort()
      .reverse();
    expect(rows.map((r) => r.id)).toEqual(want.slice(0, 11));
    // Walks and reads by id only: the trigram index was never asked.
    expect(texts.length).toBeGreaterThan(2);
    for (const t of texts) expect(t.includes("UNION ALL") || t.includes("= ANY(")).toBe(true);
    expect(await allIds(store, filter)).toEqual(want);
  });

  it("rows written before title search are filled the way titleMatches lower-cases", async () => {
    const schema = fresh();
    const store = await open(schema);
    for (const [i, title] of TITLES.entries()) {
      await store.insertRequest(request(`req_m${i}`, { title }), []);
    }
    // As migration 5 leaves rows written before it: ASCII titles filled in SQL, the others empty.
    await adminQuery(
      url,
      `UPDATE "${schema}".requests SET title_lower = CASE WHEN octet_length(title) = char_length(title)
        THEN translate(title, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') END`,
    );
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      expect(await fillTitleLower(client, `"${schema}"`)).toBe(3);
    } finally {
      await client.end();
    }
    for (const q of QUERIES) {
      const expected = TITLES.filter((t) => titleMatches(t, q)).length;
      expect(await store.countRequests({ q }), `q=${JSON.stringify(q)}`).toBe(expected);
    }
    const [idx] = await adminQuery<{ idx: string | null }>(
      url,
      "SELECT to_regclass($1)::text AS idx",
      [`"${schema}".requests_title_trgm`],
    );
    expect(idx?.idx).toBeTruthy();
  });
});
