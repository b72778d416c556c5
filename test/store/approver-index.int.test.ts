// The approver index of both SQL stores (src/store/approver-index.ts): its triggers keep it equal
// to what the requests say through inserts, decisions, renames, escalations and deletes, and a
// reviewer's listing read from it is the listing the row-by-row filter gives, page by page, in every
// order, with and without a title search.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import type { ListFilter, ListOrder, Store } from "../../src/core/store.js";
import type { ApproverIndexUse } from "../../src/store/approver-index.js";
import { postgresStore } from "../../src/store/postgres.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { request } from "../audit/fixtures.js";
import { allIds, tempDir } from "../helpers.js";
import { adminQuery, describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const APPROVERS = [[], ["ops"], ["alice"], ["alice", "ops"], ["ops", "ops"], ["sec"]];
const WORDS = ["alpha", "beta", "gamma"];

/** 90 requests over the approver lists above; some decided, renamed, escalated or given deadlines. */
async function seed(store: Store): Promise<ApprovalRequest[]> {
  const rs: ApprovalRequest[] = [];
  for (let i = 0; i < 90; i++) {
    const id = `req_${String(i).padStart(4, "0")}`;
    const r = request(id, {
      title: `${WORDS[i % 3]} task ${i}`,
      approvers: APPROVERS[i % APPROVERS.length] as string[],
      ...(i % 4 === 0 ? {} : { deadline: 1_800_000_000_000 + ((i * 37) % 11) * 1000 }),
    });
    await store.insertRequest(r, [{ type: "created", requestId: id, actor: "w", at: 1, data: {} }]);
    rs.push(r);
  }
  const change = async (i: number, next: Partial<ApprovalRequest>) => {
    const r = rs[i] as ApprovalRequest;
    const updated = { ...r, ...next, version: r.version + 1 };
    const res = await store.transition(updated, r.version, []);
    expect(res.ok).toBe(true);
    rs[i] = updated;
  };
  for (let i = 0; i < 90; i += 5) await change(i, { status: "approved", deadline: undefined });
  for (let i = 2; i < 90; i += 7) await change(i, { title: `renamed omega ${i}` });
  for (let i = 1; i < 90; i += 9) await change(i, { approvers: ["ops", "sec"] });
  for (let i = 3; i < 90; i += 11) await change(i, { deadline: 1_700_000_000_000 + i });
  for (let i = 6; i < 90; i += 13) await change(i, { approvers: [] });
  return rs;
}

interface Backend {
  /** A store on the backend's one database; every call opens another on the same data. */
  open(options?: { approverIndex?: ApproverIndexUse }): Promise<Store>;
  /** The index's rows, and the rows the requests say it should hold, in one order. */
  indexRows(): Promise<{ stored: unknown[]; derived: unknown[] }>;
  /** Deletes requests behind the store's back (as a prune does), to fire the delete trigger. */
  remove(ids: string[]): Promise<void>;
}

const sqliteBackend = (): Backend => {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const path = join(t.dir, "a.db");
  const inFile = <T>(f: (db: Database.Database) => T): T => {
    const db = new Database(path);
    try {
      return f(db);
    } finally {
      db.close();
    }
  };
  return {
    async open(options = {}) {
      const s = sqliteStore(path, options);
      cleanups.push(() => s.close());
      return s;
    },
    async indexRows() {
      return inFile((db) => ({
        stored: db
          .prepare(
            "SELECT approver, status, id, dkey, title_lower FROM request_approvers ORDER BY 1, 2, 3",
          )
          .all(),
        derived: db
          .prepare(
            `SELECT DISTINCT j.value AS approver, r.status, r.id, COALESCE(r.deadline, 9e15) AS dkey, r.title_lower
             FROM requests AS r, json_each(CASE WHEN r.approvers = '[]' THEN '[""]' ELSE r.approvers END) AS j
             ORDER BY 1, 2, 3`,
          )
          .all(),
      }));
    },
    async remove(ids) {
      inFile((db) =>
        db
          .prepare(`DELETE FROM requests WHERE id IN (${ids.map(() => "?").join(",")})`)
          .run(...ids),
      );
    },
  };
};

const postgresBackend = (url: string): Backend => {
  const schema = freshSchema("airlock_approvers");
  cleanups.push(() => dropSchema(url, schema));
  const s = `"${schema}"`;
  return {
    async open(options = {}) {
      const store = postgresStore(url, { schema, ...options });
      await store.migrate();
      cleanups.push(() => store.close());
      return store;
    },
    async indexRows() {
      return {
        stored: await adminQuery(
          url,
          `SELECT approver, status, id, dkey, title_lower FROM ${s}.request_approvers ORDER BY 1, 2, 3`,
        ),
        derived: await adminQuery(
          url,
          `SELECT DISTINCT k AS approver, r.status, r.id, COALESCE(r.deadline, 9e15) AS dkey, r.title_lower
           FROM ${s}.requests AS r,
             unnest(CASE WHEN cardinality(r.approvers) = 0 THEN ARRAY['']::text[] ELSE r.approvers END) AS k
           ORDER BY 1, 2, 3`,
        ),
      };
    },
    async remove(ids) {
      await adminQuery(url, `DELETE FROM ${s}.requests WHERE id = ANY($1::text[])`, [ids]);
    },
  };
};

function approverIndexSuite(backend: () => Backend) {
  it("holds one row per approver and request, kept by the triggers through every change", async () => {
    const b = backend();
    await seed(await b.open());
    const { stored, derived } = await b.indexRows();
    expect(stored.length).toBeGreaterThan(90);
    expect(stored).toEqual(derived);

    await b.remove(["req_0003", "req_0004", "req_0010"]);
    const after = await b.indexRows();
    expect(after.stored).toEqual(after.derived);
    expect(after.stored.some((r) => (r as { id: string }).id === "req_0003")).toBe(false);
  });

  it("lists a reviewer's requests from the index exactly as the row-by-row filter does", async () => {
    const b = backend();
    const indexed = await b.open();
    await seed(indexed);
    // The same data listed without the index, with it always, and as the store chooses.
    const rowByRow = await b.open({ approverIndex: "never" });
    const always = await b.open({ approverIndex: "always" });

    // The last: more names than narrowSql merges lists for (MAX_LISTS), so it reads them all
    // (as many lists as that would pass SQLite's limit of 500 terms in a compound SELECT).
    const many = [...Array.from({ length: 90 }, (_, i) => `g${i}`), "sec"];
    const approvers = [["ops"], ["alice"], ["alice", "ops"], [], ["nobody"], "sec", many];
    const statuses = [undefined, "pending", ["approved", "rejected"]] as const;
    const orders: ListOrder[] = ["newest", "oldest", "deadline"];
    let checked = 0;
    for (const approver of approvers) {
      for (const status of statuses) {
        for (const order of orders) {
          for (const q of [undefined, "alpha", "OMEGA", "no such"]) {
            const filter = {
              approver,
              order,
              ...(status === undefined ? {} : { status }),
              ...(q === undefined ? {} : { q }),
            } as ListFilter;
            const want = await allIds(rowByRow, filter);
            const label = JSON.stringify(filter);
            expect(await allIds(indexed, filter), label).toEqual(want);
            expect(await allIds(always, filter), label).toEqual(want);
            expect(
              (await always.listRequests({ ...filter, limit: 100 })).items.map((r) => r.id),
              label,
            ).toEqual(want);
            if (want.length > 0) checked++;
          }
        }
      }
    }
    // Most combinations list something (a check of empty lists alone would prove little).
    expect(checked).toBeGreaterThan(120);
  });
}

describe("the SQLite approver index", () => {
  approverIndexSuite(sqliteBackend);

  it("chooses the index for a reviewer of few of the newest requests, the listing's order else", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const statements: string[] = [];
    const store = sqliteStore(join(t.dir, "c.db"), {
      configure: (db) => {
        const prepare = db.prepare.bind(db);
        db.prepare = ((sql: string) => {
          statements.push(sql);
          return prepare(sql);
        }) as typeof db.prepare;
      },
    });
    cleanups.push(() => store.close());
    // 1,200 requests: one in forty for "few" (2.5 %), the others for "bulk".
    for (let i = 0; i < 1200; i++) {
      const id = `req_${String(i).padStart(5, "0")}`;
      const approvers = i % 40 === 7 ? ["few"] : ["bulk"];
      const r = request(id, { title: `task ${i}`, approvers, deadline: 1_800_000_000_000 + i });
      await store.insertRequest(r, []);
    }
    const fromIndex = async (filter: ListFilter) => {
      statements.length = 0;
      const page = await store.listSummaries({ status: "pending", limit: 10, ...filter });
      expect(page.items.length).toBeGreaterThan(0);
      return statements.some((sql) => /FROM request_approvers\s+WHERE/.test(sql));
    };
    expect(await fromIndex({ approver: ["few"] })).toBe(true);
    expect(await fromIndex({ approver: ["few"], order: "deadline" })).toBe(true);
    expect(await fromIndex({ approver: ["few"], q: "task 4" })).toBe(true);
    expect(await fromIndex({ approver: ["bulk"] })).toBe(false);
    expect(await fromIndex({ approver: ["bulk"], order: "deadline" })).toBe(false);
    // Another filter the index does not hold: the listing's order.
    expect(await fromIndex({ approver: ["few"], requester: "writer" })).toBe(false);
  });

  it("refuses an unknown approverIndex", () => {
    expect(() => sqliteStore(":memory:", { approverIndex: "sometimes" as never })).toThrow(
      /approverIndex/,
    );
  });
});

await describePg("the PostgreSQL approver index", ({ url }) => {
  approverIndexSuite(() => postgresBackend(url));

  it("refuses an unknown approverIndex", () => {
    expect(() => postgresStore(url, { approverIndex: "sometimes" as never })).toThrow(
      /approverIndex/,
    );
  });
});
