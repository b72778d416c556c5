// Each transition of the SQLite store runs the narrowest UPDATE for the columns that change
// (src/store/sqlite-row-keys.ts): a claim leaves the status, deadline and approver indexes alone.
// What it guesses of the row is only a guess: a row changed behind its back (by hand, by another
// process) still gets the right UPDATE, and the indexes stay equal to the table.
import { join } from "node:path";
import type Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalRequest, AuditDraft } from "../../src/core/schemas.js";
import type { Store } from "../../src/core/store.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { type KeyColumns, rowKeys, updateKind } from "../../src/store/sqlite-row-keys.js";
import { request } from "../audit/fixtures.js";
import { tempDir } from "../helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function open(path: string): { store: Store; db: () => Database.Database } {
  let handle: Database.Database | undefined;
  const store = sqliteStore(path, {
    checkpointThread: false,
    configure: (d) => {
      handle = d;
    },
  });
  cleanups.push(() => store.close());
  return {
    store,
    db: () => {
      if (!handle) throw new Error("no database handed over");
      return handle;
    },
  };
}

function tmpDb(): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return join(t.dir, "a.db");
}

const event = (id: string, type: AuditDraft["type"]): AuditDraft[] => [
  { type, requestId: id, actor: "alice", at: 2, data: {} },
];

function approved(r: ApprovalRequest): ApprovalRequest {
  const decision: ApprovalRequest["decisions"][number] = {
    outcome: "approved",
    method: "approve_all",
    reviewer: "alice",
    channel: "api",
    decidedAt: r.createdAt + 10,
  };
  return {
    ...r,
    status: "approved",
    deadline: undefined,
    decisions: [decision],
    decision,
    version: r.version + 1,
    updatedAt: r.createdAt + 10,
  };
}

function claimed(r: ApprovalRequest, leaseUntil: number): ApprovalRequest {
  return {
    ...r,
    execution: {
      state: "claimed",
      attempt: 1,
      claimedAt: r.updatedAt + 1,
      claimedBy: "agent",
      leaseUntil,
    },
    version: r.version + 1,
    updatedAt: r.updatedAt + 1,
  };
}

interface Row {
  status: string;
  deadline: number | null;
  execution: string | null;
  lease_until: number | null;
  version: number;
}

const rowOf = (db: Database.Database, id: string) =>
  db
    .prepare<[string], Row>(
      "SELECT status, deadline, execution, lease_until, version FROM requests WHERE id = ?",
    )
    .get(id);

const integrity = (db: Database.Database) => db.pragma("integrity_check", { simple: true });

describe("SQLite transitions pick their UPDATE", () => {
  it("decide, claim and a change of the document alone each leave the row, its indexes and its listings right", async () => {
    const { store, db } = open(tmpDb());
    const r = request("req_kind", { deadline: 1_700_000_600_000 });
    await store.insertRequest(r, event(r.id, "created"));
    const a = approved(r);
    expect((await store.transition(a, 1, event(r.id, "decided"))).ok).toBe(true);
    const c = claimed(a, 1_700_000_900_000);
    expect((await store.transition(c, 2, event(r.id, "claimed"))).ok).toBe(true);
    // Only the document changes: the unindexed UPDATE.
    const noted = { ...c, metadata: { note: "x" }, version: 4, updatedAt: c.updatedAt + 1 };
    expect((await store.transition(noted, 3, [])).ok).toBe(true);
    expect(rowOf(db(), r.id)).toEqual({
      status: "approved",
      deadline: null,
      execution: "claimed",
      lease_until: 1_700_000_900_000,
      version: 4,
    });
    expect(integrity(db())).toBe("ok");
    expect((await store.getRequest(r.id))?.metadata).toEqual({ note: "x" });
    const listed = await store.listRequests({ status: "approved", execution: "claimed" });
    expect(listed.items.map((x) => x.id)).toEqual([r.id]);
    expect((await store.listRequests({ status: "pending", order: "deadline" })).items).toEqual([]);
    expect(await store.nextLeaseEnd()).toBe(1_700_000_900_000);
    expect(await store.nextDeadline()).toBeUndefined();
  });

  it("a row whose indexed columns were changed behind the store's back still gets them right", async () => {
    const { store, db } = open(tmpDb());
    const r = request("req_behind");
    await store.insertRequest(r, event(r.id, "created"));
    const a = approved(r);
    await store.transition(a, 1, event(r.id, "decided"));
    // By hand, at the same version: the store's guess (approved) is now wrong.
    db().prepare("UPDATE requests SET status = 'rejected' WHERE id = ?").run(r.id);
    const c = claimed(a, 1_700_000_900_000);
    expect((await store.transition(c, 2, event(r.id, "claimed"))).ok).toBe(true);
    expect(rowOf(db(), r.id)).toMatchObject({ status: "approved", execution: "claimed" });
    expect(integrity(db())).toBe("ok");
    expect((await store.listRequests({ status: "rejected" })).items).toEqual([]);
    expect((await store.listRequests({ status: "approved" })).items.map((x) => x.id)).toEqual([
      r.id,
    ]);
  });

  it("another process's write in between: the stale guess loses the compare-and-set, nothing is written", async () => {
    const path = tmpDb();
    const one = open(path);
    const two = open(path);
    const r = request("req_two");
    await one.store.insertRequest(r, event(r.id, "created"));
    const a = approved(r);
    await one.store.transition(a, 1, event(r.id, "decided"));
    // The other process claims it (version 3).
    expect((await two.store.transition(claimed(a, 5), 2, event(r.id, "claimed"))).ok).toBe(true);
    const lost = await one.store.transition(claimed(a, 9), 2, event(r.id, "claimed"));
    expect(lost.ok).toBe(false);
    expect(lost.request?.version).toBe(3);
    expect(rowOf(one.db(), r.id)).toMatchObject({ lease_until: 5, version: 3 });
    // From the row it read back, the first process's next write goes through.
    const current = lost.request as ApprovalRequest;
    const done = {
      ...current,
      execution: { ...current.execution, state: "executed" } as ApprovalRequest["execution"],
      version: 4,
    };
    expect((await one.store.transition(done, 3, event(r.id, "executed"))).ok).toBe(true);
    expect(rowOf(one.db(), r.id)).toMatchObject({
      execution: "executed",
      lease_until: null,
      version: 4,
    });
    expect(integrity(one.db())).toBe("ok");
  });
});

describe("updateKind and rowKeys", () => {
  const base: KeyColumns = {
    status: "approved",
    deadline: null,
    title_lower: "t",
    execution: null,
    lease_until: null,
  };
  it("names the narrowest UPDATE", () => {
    expect(updateKind(base, { ...base })).toBe("unindexed");
    expect(updateKind(base, { ...base, execution: "claimed", lease_until: 5 })).toBe("execution");
    expect(updateKind(base, { ...base, lease_until: 5 })).toBe("execution");
    expect(updateKind(base, { ...base, status: "rejected" })).toBe("full");
    expect(updateKind(base, { ...base, deadline: 5, execution: "claimed" })).toBe("full");
    expect(updateKind(base, { ...base, title_lower: "u" })).toBe("full");
  });
  it("keeps a row at the version it was written, the newest first", () => {
    const keys = rowKeys(2);
    keys.set("a", 1, base);
    keys.set("b", 1, base);
    expect(keys.get("a", 1)).toMatchObject(base);
    expect(keys.get("a", 2)).toBeUndefined();
    keys.set("a", 2, { ...base, status: "rejected" });
    keys.set("c", 1, base);
    // b was the oldest written: dropped.
    expect(keys.get("b", 1)).toBeUndefined();
    expect(keys.get("a", 2)?.status).toBe("rejected");
    keys.forget("a");
    expect(keys.get("a", 2)).toBeUndefined();
  });
});
