// Title search (ListFilter.q) on SQLite answers exactly what titleMatches (the memory store's rule)
// answers, through the trigram index for three characters or more (whichever of the text's trigrams
// it is asked for, and whichever way round: sqlite-search.ts) and a bounded scan below that,
// in listings, summaries, counts and across pages; a database from before the index upgrades in place.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import type { Store } from "../../src/core/store.js";
import { titleMatches } from "../../src/store/paging.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { applySqliteMigrations } from "../../src/store/sqlite-migrate.js";
import { SQLITE_MIGRATIONS } from "../../src/store/sqlite-migrations.js";
import {
  matchQuery,
  planCount,
  planSearch,
  rarestGrams,
  trigrams,
} from "../../src/store/sqlite-search.js";
import { TITLE_INDEX_BATCH } from "../../src/store/sqlite-title-index.js";
import { request } from "../audit/fixtures.js";
import { allIds, tempDir } from "../helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function open(path = ":memory:"): Store {
  const s = sqliteStore(path);
  cleanups.push(() => s.close());
  return s;
}

const TITLES = [
  "Deploy payments service",
  "DEPLOY search",
  "Rotate the API key",
  'Say "hello" to prod',
  "İstanbul office wifi",
  "Straße closure",
  "ÀBC unicode",
  "K kelvin sign K",
  "a",
  "ab",
  "nothing to see",
  "100% sure",
  "under_score and percent %",
  "emoji 🚀 launch",
];

const QUERIES = [
  "deploy",
  "DEPLOY",
  "ploy",
  "de",
  "d",
  "api key",
  '"hello"',
  '"',
  "i̇st",
  "istanbul",
  "straße",
  "STRASSE",
  "àbc",
  "k k",
  "kelvin",
  "%",
  "_",
  "% sure",
  "🚀",
  "🚀 la",
  "no such title",
  "a",
  "ab",
  "",
  "OR",
  "NEAR(x",
  "*",
];

async function seed(store: Store): Promise<ApprovalRequest[]> {
  const rs: ApprovalRequest[] = [];
  for (const [i, title] of TITLES.entries()) {
    const id = `req_${String(i).padStart(3, "0")}`;
    const r = request(id, { title });
    await store.insertRequest(r, []);
    rs.push(r);
  }
  return rs;
}

/** The ids titleMatches picks, newest first (ids grow with time). */
function expected(rs: ApprovalRequest[], q: string): string[] {
  return rs
    .filter((r) => titleMatches(r.title, q))
    .map((r) => r.id)
    .sort()
    .reverse();
}

describe("SQLite title search (q)", () => {
  it("lists, summarises and counts exactly the titles titleMatches picks, page by page", async () => {
    const store = open();
    const rs = await seed(store);
    for (const q of QUERIES) {
      const want = expected(rs, q);
      const listed = await store.listRequests({ q, limit: 100 });
      expect(
        listed.items.map((r) => r.id),
        `listRequests q=${q}`,
      ).toEqual(want);
      expect(await allIds(store, { q }), `paged q=${q}`).toEqual(want);
      expect(await store.countRequests({ q }), `count q=${q}`).toBe(want.length);
      const oldest = await store.listSummaries({ q, order: "oldest", limit: 100 });
      expect(
        oldest.items.map((s) => s.id),
        `oldest q=${q}`,
      ).toEqual([...want].reverse());
    }
  });

  it("a common text pages the same whether the first rows fill the page or the index answers", async () => {
    const store = open();
    const rs: ApprovalRequest[] = [];
    for (let i = 0; i < 40; i++) {
      const id = `req_${String(i).padStart(3, "0")}`;
      const r = request(id, { title: i % 3 === 0 ? `Common job ${i}` : `other ${i}` });
      await store.insertRequest(r, []);
      rs.push(r);
    }
    for (const q of ["common", "COMMON JOB 3", "job 1", "other 3"]) {
      const want = expected(rs, q);
      for (const limit of [1, 2, 5, 50]) {
        expect(await allIds(store, { q, limit }), `q=${q} limit=${limit}`).toEqual(want);
      }
      const deadline = await store.listRequests({ q, order: "deadline", limit: 3 });
      expect(deadline.items.length).toBe(Math.min(3, want.length));
    }
  });

  it("a text too sparse for the first rows pages the same whether the listing walks or sorts the index's candidates", async () => {
    const store = open();
    const rs: ApprovalRequest[] = [];
    // One title in 120 holds "needle": about 17 in the first 2,000 rows, too few for a page of 50,
    // so the listing walks its order against the index's candidates; one in 3,000 holds "rare":
    // none there, so the index's candidates are read and sorted.
    for (let i = 0; i < 12_000; i++) {
      const id = `req_${String(i).padStart(6, "0")}`;
      const title = i % 120 === 7 ? `Needle ${i}` : i % 3000 === 11 ? `rare ${i}` : `hay ${i}`;
      const r = request(id, { title });
      await store.insertRequest(r, []);
      rs.push(r);
    }
    for (const q of ["needle", "rare"]) {
      const want = expected(rs, q);
      for (const order of ["newest", "oldest", "deadline"] as const) {
        const ids = await allIds(store, { q, limit: 50, order });
        const sorted = order === "newest" ? want : [...want].reverse();
        expect(ids, `q=${q} order=${order}`).toEqual(order === "deadline" ? ids : sorted);
        expect(new Set(ids)).toEqual(new Set(want));
      }
    }
  });

  it("asks the index for some of the text's trigrams and still answers exactly the text", async () => {
    const store = open();
    const rs: ApprovalRequest[] = [];
    // Decoys hold the text's rarer trigrams, but apart ("zq 7" and "q 77" without "zq 77").
    for (let i = 0; i < 3000; i++) {
      const id = `req_${String(i).padStart(5, "0")}`;
      const title =
        i % 500 === 1 ? `Exact zq 77 ${i}` : i % 7 === 0 ? `zq 7 or q 77 ${i}` : `plain ${i}`;
      const r = request(id, { title });
      await store.insertRequest(r, []);
      rs.push(r);
    }
    for (const q of ["zq 77", "zq 77 1", "q 77 1"]) {
      const want = expected(rs, q);
      for (const order of ["newest", "oldest", "deadline"] as const) {
        const ids = await allIds(store, { q, limit: 50, order });
        expect(ids.length, `q=${q} order=${order}`).toBe(want.length);
        expect(new Set(ids), `q=${q} order=${order}`).toEqual(new Set(want));
      }
      expect(await store.countRequests({ q }), `count q=${q}`).toBe(want.length);
      expect(await store.countRequests({ q }, { upTo: 3 }), `capped q=${q}`).toBe(
        Math.min(3, want.length),
      );
    }
  });

  it("combines with the other filters and follows transitions and new titles", async () => {
    const store = open();
    const rs = await seed(store);
    const first = rs[0] as ApprovalRequest;
    const decided: ApprovalRequest = {
      ...first,
      status: "approved",
      version: first.version + 1,
      decision: { outcome: "approved", method: "manual", reviewer: "alice", decidedAt: 2 },
    } as unknown as ApprovalRequest;
    expect((await store.transition(decided, first.version, [])).ok).toBe(true);
    expect(
      (await store.listSummaries({ q: "deploy", status: "pending" })).items.map((s) => s.id),
    ).toEqual(["req_001"]);
    expect(await store.countRequests({ q: "deploy", status: "approved" })).toBe(1);
    // A changed title is found by its new text only.
    const renamed = { ...decided, title: "Renamed entirely", version: decided.version + 1 };
    expect((await store.transition(renamed, decided.version, [])).ok).toBe(true);
    expect(await store.countRequests({ q: "payments" })).toBe(0);
    expect((await store.listRequests({ q: "renamed ent" })).items.map((r) => r.id)).toEqual([
      first.id,
    ]);
  });

  it("new rows join the index in batches; a search sees indexed and unindexed rows alike, through renames, deletes and a reused rowid", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const path = join(t.dir, "batches.db");
    const store = open(path);
    const rs: ApprovalRequest[] = [];
    const add = async (i: number, title: string) => {
      const r = request(`req_${String(i).padStart(5, "0")}`, { title });
      await store.insertRequest(r, []);
      rs.push(r);
      return r;
    };
    // Exactly two batches: every row is in the index and nothing is past the mark.
    for (let i = 0; i < 2 * TITLE_INDEX_BATCH; i++)
      await add(i, i % 50 === 3 ? `Beacon ${i}` : `filler ${i}`);
    const raw = new Database(path);
    cleanups.push(() => {
      raw.close();
    });
    const mark = () =>
      raw.prepare<[], { upto: number }>("SELECT upto FROM title_index").get()?.upto;
    const maxRowid = () =>
      raw.prepare<[], { m: number }>("SELECT MAX(rowid) AS m FROM requests").get()?.m;
    expect(mark()).toBe(2 * TITLE_INDEX_BATCH);
    // The last row goes (as a prune would): the next create reuses its rowid, below the mark, so
    // it is indexed at once.
    raw.prepare("DELETE FROM requests WHERE rowid = ?").run(maxRowid());
    const removed = rs.pop() as ApprovalRequest;
    await add(9000, "Beacon reused rowid");
    expect(maxRowid()).toBe(mark());
    // A tail past the mark, not yet indexed.
    for (let i = 0; i < 40; i++)
      await add(10_000 + i, i % 10 === 3 ? `Beacon tail ${i}` : `tail ${i}`);
    expect(maxRowid()).toBeGreaterThan(mark() as number);
    // Renamed: an indexed row and an unindexed one; deleted: one of each.
    for (const r of [rs[3], rs[rs.length - 7]] as ApprovalRequest[]) {
      const renamed = { ...r, title: `Lighthouse ${r.id}`, version: r.version + 1 };
      expect((await store.transition(renamed, r.version, [])).ok).toBe(true);
      rs[rs.indexOf(r)] = renamed;
    }
    for (const r of [rs[53], rs[rs.length - 3]] as ApprovalRequest[]) {
      raw.prepare("DELETE FROM requests WHERE id = ?").run(r.id);
      rs.splice(rs.indexOf(r), 1);
    }
    const check = async (s: Store = store) => {
      for (const q of [
        "beacon",
        "lighthouse",
        "beacon tail",
        "reused",
        "filler 1",
        removed.title.toLowerCase(),
      ]) {
        const want = expected(rs, q);
        expect(await allIds(s, { q, limit: 7 }), `q=${q}`).toEqual(want);
        expect(await s.countRequests({ q }), `count q=${q}`).toBe(want.length);
      }
    };
    await check();
    // Opened again, the store indexes what the last one left past the mark; then the index agrees
    // with the table row for row (FTS5's own check), and the answers are the same.
    await store.close();
    const reopened = open(path);
    expect(mark()).toBe(maxRowid());
    raw.exec("INSERT INTO requests_title (requests_title, rank) VALUES ('integrity-check', 1)");
    await check(reopened);
  });

  it("a database made before the index (migration 4) is indexed when it opens", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const path = join(t.dir, "old.db");
    const before = open(path);
    const rs = await seed(before);
    await before.close();
    // Back to the schema before migration 5: the column, the search index and its triggers gone
    // (and the deadline index migration 6 drops, back; the approver index of migration 9 gone; the
    // trust rules' scope of migration 11 gone).
    const d = new Database(path);
    d.exec(`
      DROP TRIGGER request_approvers_insert; DROP TRIGGER request_approvers_update;
      DROP TRIGGER request_approvers_delete; DROP TABLE request_approvers;
      DROP TRIGGER requests_title_insert; DROP TRIGGER requests_title_delete;
      DROP TRIGGER requests_title_update;
      DROP TABLE requests_title;
      ALTER TABLE requests DROP COLUMN title_lower;
      ALTER TABLE trust_rules DROP COLUMN scope;
      DROP INDEX requests_claim_lease;
      DROP INDEX requests_unknown_execution;
      ALTER TABLE requests DROP COLUMN execution;
      ALTER TABLE requests DROP COLUMN lease_until;
      DROP TABLE tickets;
      CREATE INDEX requests_pending_deadline ON requests (deadline)
        WHERE status = 'pending' AND deadline IS NOT NULL;
      DELETE FROM airlock_migrations WHERE version >= 5;
    `);
    d.close();
    const after = open(path);
    for (const q of QUERIES) {
      expect(
        (await after.listSummaries({ q, limit: 100 })).items.map((s) => s.id),
        `upgraded q=${q}`,
      ).toEqual(expected(rs, q));
    }
    const versions = new Database(path, { readonly: true });
    const applied = versions
      .prepare<[], { v: number }>("SELECT MAX(version) AS v FROM airlock_migrations")
      .get();
    versions.close();
    expect(applied?.v).toBe(SQLITE_MIGRATIONS[SQLITE_MIGRATIONS.length - 1]?.version);
  });

  it("plans a search: the rarest trigrams of the newest titles, a walk when matches are not rare, a scan for a capped count of a common text", () => {
    const sample = {
      titles: ["deploy billing 1", "deploy billing 2", "deploy robot-17", "refund billing 3"],
    };
    // "-17" is in one sample title, "rob" "obo" "bot" "ot-" in one, "t-1" in one: ties keep order.
    expect(rarestGrams(trigrams("robot-17"), sample, "walk")).toEqual(["rob", "obo"]);
    expect(rarestGrams(trigrams("robot-17"), sample, "index")).toEqual(["rob", "obo", "bot"]);
    // Trigrams in no sample title come first.
    expect(rarestGrams(trigrams("billing zz"), sample, "walk")).toEqual(["g z", " zz"]);
    expect(planSearch("billing", sample, 0).mode).toBe("walk"); // 3 sample titles hold it
    expect(planSearch("robot-17", sample, 0).mode).toBe("index"); // 1 does
    expect(planSearch("robot-17", sample, 1).mode).toBe("walk"); // the listing's first rows did
    expect(planSearch("nothing", { titles: [] }, 0)).toEqual({
      q: "nothing",
      grams: ["not", "oth", "thi"],
      mode: "index",
    });
    expect(matchQuery(['a"b', "abc"])).toBe('"a""b" AND "abc"');
    // A capped count of a common text scans; an exact count, or a rare text, asks the index.
    expect(planCount("billing", sample, 1000)).toEqual({ q: "billing", grams: [], mode: "scan" });
    expect(planCount("billing", sample, undefined).mode).toBe("index");
    expect(planCount("robot-17", { titles: [] }, 10)).toEqual({
      q: "robot-17",
      grams: ["rob", "obo", "bot"],
      mode: "index",
    });
  });

  it("a fresh database gets every migration, the search index included", () => {
    const d = new Database(":memory:");
    applySqliteMigrations(d, "airlock_migrations", SQLITE_MIGRATIONS);
    const names = d
      .prepare<[], { name: string }>(
        "SELECT name FROM sqlite_master WHERE name LIKE 'requests_title%'",
      )
      .all()
      .map((r) => r.name);
    d.close();
    expect(names).toContain("requests_title");
    expect(names).toContain("requests_title_insert");
  });
});
