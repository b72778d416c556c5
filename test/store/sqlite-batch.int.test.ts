// Group commit on SQLite: writes queued in one event-loop turn share one transaction, yet each keeps
// its own result. A write that loses its compare-and-set, one refused before the transaction and
// ones that fail inside it (a taken id, an event that cannot be written) leave the others committed,
// with the audit chain contiguous and verifiable; a process killed in the middle of a batch loses
// that whole batch and nothing before it.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { verifyAuditLog } from "../../src/audit/verify.js";
import type { ApprovalRequest, AuditDraft } from "../../src/core/schemas.js";
import type { Store } from "../../src/core/store.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { request } from "../audit/fixtures.js";
import { tempDir } from "../helpers.js";
import { startChild } from "../postgres/child.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tmpDb(): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return join(t.dir, "a.db");
}

function open(path: string): Store {
  const s = sqliteStore(path);
  cleanups.push(() => s.close());
  return s;
}

const created = (id: string): AuditDraft[] => [
  { type: "created", requestId: id, actor: "writer", at: 1, data: {} },
];
const decided = (id: string): AuditDraft[] => [
  { type: "decided", requestId: id, actor: "alice", at: 2, data: { outcome: "rejected" } },
];

function rejected(r: ApprovalRequest, over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return { ...r, status: "rejected", version: r.version + 1, updatedAt: 2, ...over };
}

describe("SQLite group commit", () => {
  it("one turn's writes: a lost compare-and-set and failing writes leave the others committed, the chain verifies", async () => {
    const store = open(tmpDb());
    const [a, b, c] = ["req_a", "req_b", "req_c"].map((id) => request(id)) as ApprovalRequest[];
    for (const r of [a, b, c] as ApprovalRequest[]) await store.insertRequest(r, created(r.id));
    const a0 = a as ApprovalRequest;
    const b0 = b as ApprovalRequest;
    const c0 = c as ApprovalRequest;

    // All queued in the same turn, so they go in one transaction.
    const results = await Promise.allSettled([
      store.transition(rejected(a0), a0.version, decided(a0.id)),
      // Lost compare-and-set: the stored version is not 7.
      store.transition(rejected(b0, { version: 8 }), 7, decided(b0.id)),
      // Refused before any transaction: a title no column can keep.
      store.transition(rejected(c0, { title: "bad \uD800" }), c0.version, decided(c0.id)),
      // Fails inside the transaction: the id is taken.
      store.insertRequest(request("req_a"), created("req_a")),
      // Fails inside the transaction after its row was written: an event that cannot be hashed.
      store.insertRequest(request("req_e"), [
        { type: "created", requestId: "req_e", actor: "writer", at: 1, data: { n: 1n } },
      ]),
      store.insertRequest(request("req_d"), created("req_d")),
      store.transition(rejected(c0), c0.version, decided(c0.id)),
    ]);
    const [ra, rb, rc, rdup, re, rd, rc2] = results;
    expect(ra?.status === "fulfilled" && ra.value.ok).toBe(true);
    expect(rb?.status === "fulfilled" && !rb.value.ok && rb.value.request?.version).toBe(
      b0.version,
    );
    expect(rc?.status === "rejected" && (rc.reason as { code?: string }).code).toBe(
      "invalid_input",
    );
    expect(rdup?.status === "rejected" && (rdup.reason as { code?: string }).code).toBe("conflict");
    expect(re?.status).toBe("rejected");
    expect(rd?.status === "fulfilled" && rd.value.created).toBe(true);
    expect(rc2?.status === "fulfilled" && rc2.value.ok).toBe(true);

    expect((await store.getRequest("req_a"))?.status).toBe("rejected");
    expect((await store.getRequest("req_b"))?.status).toBe("pending");
    expect((await store.getRequest("req_c"))?.status).toBe("rejected");
    expect(await store.getRequest("req_d")).toBeDefined();
    // The failed write left nothing behind: neither its row nor its event.
    expect(await store.getRequest("req_e")).toBeUndefined();
    const events = await store.listAudit({});
    expect(events.map((e) => `${e.seq}:${e.requestId}:${e.type}`)).toEqual([
      "1:req_a:created",
      "2:req_b:created",
      "3:req_c:created",
      "4:req_a:decided",
      "5:req_d:created",
      "6:req_c:decided",
    ]);
    // Each write got its own events back, in commit order.
    expect(rc2?.status === "fulfilled" && rc2.value.events.map((e) => e.seq)).toEqual([6]);
    expect(await store.auditHead()).toEqual({ seq: 6, hash: events[5]?.hash });
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true });
  });

  it("many writes in flight at once each commit exactly once, in a verifiable chain", async () => {
    const store = open(tmpDb());
    const ids = Array.from({ length: 300 }, (_, i) => `req_${String(i).padStart(4, "0")}`);
    await Promise.all(ids.map((id) => store.insertRequest(request(id), created(id))));
    // Two competing decisions per request: exactly one wins each compare-and-set.
    const outcomes = await Promise.all(
      ids.flatMap((id) => {
        const r = request(id);
        return [0, 1].map(() => store.transition(rejected(r), r.version, decided(id)));
      }),
    );
    expect(outcomes.filter((o) => o.ok)).toHaveLength(ids.length);
    expect(await store.countRequests({ status: "rejected" })).toBe(ids.length);
    const verified = await verifyAuditLog(store);
    expect(verified).toMatchObject({ ok: true, count: ids.length * 2 });
  });

  it("a process killed in the middle of a batch loses that batch and nothing before it", async () => {
    const path = tmpDb();
    const child = startChild("../store/batch-crash-child.ts", { DB: path });
    cleanups.push(() => {
      child.process.kill("SIGKILL");
    });
    const code = await child.exited;
    expect(code).toBeNull(); // killed by the signal, not exited
    const store = open(path);
    const ids = ["req_1", "req_2", "req_3", "req_4", "req_5"];
    for (const id of ids) {
      const r = await store.getRequest(id);
      expect(r?.status, id).toBe("pending");
    }
    const events = await store.listAudit({});
    expect(events.map((e) => e.type)).toEqual(ids.map(() => "created"));
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true });
    // The store goes on from there.
    const r = request("req_1");
    expect((await store.transition(rejected(r), r.version, decided(r.id))).ok).toBe(true);
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true });
  });
});
