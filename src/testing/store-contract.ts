// The contract every Store must pass, for Airlock's own stores and for yours: call
// `runStoreContract` from a vitest test file with a way to create a fresh store, and every method of
// the Store port is checked against what the engine relies on. Differences are declared with a reason
// in `skip` (shown in the skipped test's name), never hidden inside a test. Needs vitest (an optional
// peer dependency of this package).
//
//   import { runStoreContract } from "airlock-hitl/testing";
//   runStoreContract({ name: "my store", create: async () => myStore(), destroy: async (s) => ... });

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { auditKeyBytes, auditKeyId, createVerifier, hashEvent } from "../audit/chain.js";
import { verifyAuditLog } from "../audit/verify.js";
import { hashArgs } from "../core/hash.js";
import type { OutboxClaim, OutboxDraft, OutboxFilter } from "../core/outbox.js";
import type { ApprovalRequest, AuditDraft } from "../core/schemas.js";
import type { ListFilter, ListOrder, Store } from "../core/store.js";
import { summaryOf } from "../store/paging.js";
import { pruneContract } from "./prune-contract.js";
import { trustRuleContract } from "./trust-contract.js";

/** What `runStoreContract` needs to know about a store. */
export interface StoreContractOptions {
  /** Names the suite: "Store contract: <name>". */
  name: string;
  /** A new, empty store. Each test gets its own; the suite calls `migrate()` and, after the test,
   * `destroy` and then `close()`. */
  create(): Promise<Store>;
  /** Cleans up after a test (drop its schema, remove its file), before the suite closes `store`. */
  destroy?(store: Store): Promise<void>;
  /** A second store object on the same database as `store`, as another process would open it: the
   * change-signal tests commit through it. A store with no second connection (in memory) leaves it
   * out and names those tests in `skip`, with the reason. The suite closes what this returns. */
  reopen?(store: Store): Promise<Store>;
  /** A store with an audit key (and a checkpoint file), for the keyed-chain tests; stores without
   * keys leave it out and those tests are skipped. */
  createKeyed?(options: { auditKey: string; checkpointFile?: string }): Promise<Store>;
  /** Tests this store does not pass, by name, each group with its reason. A name that is not a test
   * of the contract fails the suite, so a skip cannot outlive its test. */
  skip?: { reason: string; tests: string[] }[];
}

/** @deprecated the earlier name of `StoreContractOptions`. */
export type StoreInitializer = StoreContractOptions;

let counter = 0;
/** A valid pending request with a fresh id (ids grow, as the engine's do), for store tests. */
export function makeRequest(over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  counter++;
  const now = 1_700_000_000_000 + counter;
  return {
    id: `req_${String(counter).padStart(8, "0")}`,
    action: "files.write",
    title: `request ${counter}`,
    args: { path: "/tmp/x", n: counter },
    argsHash: hashArgs({ path: "/tmp/x", n: counter }),
    items: [],
    allowed: ["approve", "reject", "revise", "select", "edit"],
    level: "full",
    requester: "agent",
    approvers: [],
    quorum: 1,
    onTimeout: "reject",
    escalations: 0,
    correlationId: `corr-${counter}`,
    metadata: {},
    status: "pending",
    decisions: [],
    inputHash: `input-${counter}`,
    createdAt: now,
    updatedAt: now,
    version: 1,
    ...over,
  };
}

const created = (r: ApprovalRequest): AuditDraft => ({
  type: "created",
  requestId: r.id,
  actor: r.requester,
  at: r.createdAt,
  data: { title: r.title },
});

function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "airlock-contract-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Resolves once `check()` is true, polling; fails naming `what` after `ms`. */
async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Strings no text column keeps as written: a NUL, a lone high and a lone low surrogate. */
const UNSTORABLE = ["a\u0000b", "x\ud800y", "\udc00z"];

let outboxCounter = 0;
/** An outbox draft with a fresh id (ids grow, as the engine's do). */
function outboxDraft(over: Partial<OutboxDraft> = {}): OutboxDraft {
  outboxCounter++;
  return {
    id: `msg_${String(outboxCounter).padStart(8, "0")}`,
    target: "slack",
    topic: "created",
    payload: { n: outboxCounter, text: "é ✓" },
    ...over,
  };
}

/** The outbox part of the contract: messages written with the change that caused them, claimed with a
 * lease, settled once by their holder, listed oldest first. */
function outboxContract(test: (name: string, fn: () => Promise<void>) => void, get: () => Store) {
  const ids = (ms: readonly { id: string }[]) => ms.map((m) => m.id);
  const claim = (now: number, owner: string, over: Partial<OutboxClaim> = {}) =>
    get().claimOutbox({ now, owner, limit: 100, leaseMs: 100, ...over });

  test("outbox: insertRequest writes its messages with the request, a key replay none", async () => {
    const store = get();
    const r = makeRequest({ key: "outbox-key" });
    const now = r.updatedAt;
    const plain = outboxDraft({ requestId: r.id });
    const later = outboxDraft({ requestId: r.id, target: "email", availableAt: r.updatedAt + 500 });
    const res = await store.insertRequest(r, [created(r)], [plain, later]);
    expect(res.created).toBe(true);
    const rows = await store.listOutbox({ requestId: r.id });
    expect(rows).toEqual([
      {
        id: plain.id,
        target: "slack",
        topic: "created",
        requestId: r.id,
        payload: plain.payload,
        status: "pending",
        attempts: 0,
        availableAt: now,
        createdAt: now,
        updatedAt: now,
      },
      {
        id: later.id,
        target: "email",
        topic: "created",
        requestId: r.id,
        payload: later.payload,
        status: "pending",
        attempts: 0,
        availableAt: r.updatedAt + 500,
        createdAt: now,
        updatedAt: now,
      },
    ]);
    // Optional fields are absent, not null.
    expect(Object.keys(rows[0] ?? {})).not.toContain("leaseOwner");
    expect(Object.keys(rows[0] ?? {})).not.toContain("receipt");

    const replay = await store.insertRequest(
      makeRequest({ key: "outbox-key" }),
      [],
      [outboxDraft({ requestId: r.id })],
    );
    expect(replay.created).toBe(false);
    expect(ids(await store.listOutbox({}))).toEqual([plain.id, later.id]);
  });

  test("outbox: transition writes its messages only when its compare-and-set wins", async () => {
    const store = get();
    const r = makeRequest();
    await store.insertRequest(r, [created(r)]);
    const won = outboxDraft({ requestId: r.id, topic: "decided" });
    const next = { ...r, status: "approved" as const, version: 2, updatedAt: r.updatedAt + 7 };
    const ok = await store.transition(next, 1, [], [won]);
    expect(ok.ok).toBe(true);
    const lost = await store.transition(
      { ...r, status: "rejected", version: 2 },
      1,
      [{ type: "decided", requestId: r.id, actor: "bob", at: 1, data: {} }],
      [outboxDraft({ requestId: r.id, topic: "decided" })],
    );
    expect(lost.ok).toBe(false);
    const ghost = makeRequest();
    const none = await store.transition({ ...ghost, version: 2 }, 1, [], [outboxDraft()]);
    expect(none.ok).toBe(false);
    const rows = await store.listOutbox({});
    expect(ids(rows)).toEqual([won.id]);
    expect(rows[0]).toMatchObject({ availableAt: next.updatedAt, createdAt: next.updatedAt });
    expect(await store.listAudit({ requestId: r.id })).toHaveLength(1);
  });

  test("outbox: a refused message writes nothing, the request and its events included", async () => {
    const store = get();
    const bads: Partial<OutboxDraft>[] = [
      ...UNSTORABLE.flatMap((bad) => [{ id: bad }, { target: bad }, { requestId: bad }]),
      { topic: "nonsense" as OutboxDraft["topic"] },
      { payload: [] as unknown as Record<string, unknown> },
      { availableAt: Number.NaN },
      { id: "" },
    ];
    for (const over of bads) {
      const r = makeRequest();
      await expect(
        store.insertRequest(r, [created(r)], [outboxDraft(), outboxDraft(over)]),
      ).rejects.toMatchObject({ code: "invalid_input" });
      expect(await store.getRequest(r.id)).toBeUndefined();
      await expect(store.enqueueOutbox([outboxDraft(), outboxDraft(over)])).rejects.toMatchObject({
        code: "invalid_input",
      });
    }
    const r = makeRequest();
    await store.insertRequest(r, [created(r)]);
    await expect(
      store.transition({ ...r, version: 2 }, 1, [], [outboxDraft({ target: "a\u0000" })]),
    ).rejects.toMatchObject({ code: "invalid_input", field: "target" });
    expect(await store.getRequest(r.id)).toEqual(r);
    expect(await store.listOutbox({})).toEqual([]);
    expect(await store.listAudit({})).toHaveLength(1);
  });

  test("outbox: enqueue is idempotent by id and keeps payloads exactly", async () => {
    const store = get();
    const odd = { nul: "a\u0000b", lone: "x\ud800", nested: { list: [1, null, "é"] } };
    const a = outboxDraft({ topic: "reminder", payload: odd });
    const b = outboxDraft({ topic: "test" });
    const c = outboxDraft();
    expect(await store.enqueueOutbox([])).toBe(0);
    expect(await store.enqueueOutbox([a, b])).toBe(2);
    expect(await store.enqueueOutbox([a, c, c])).toBe(1);
    const rows = await store.listOutbox({});
    expect(ids(rows)).toEqual([a.id, b.id, c.id]);
    expect(rows[0]?.payload).toEqual(odd);
    expect(rows[0]?.requestId).toBeUndefined();
    expect(rows[0]?.availableAt).toBe(rows[0]?.createdAt);
  });

  test("outbox: claim takes due rows oldest first, leases them and counts attempts", async () => {
    const store = get();
    const a = outboxDraft({ availableAt: 1000 });
    const b = outboxDraft({ availableAt: 500 });
    const c = outboxDraft({ availableAt: 5000 });
    const d = outboxDraft({ availableAt: 500 });
    await store.enqueueOutbox([a, b, c, d]);
    expect(await claim(499, "A")).toEqual([]);
    const first = await claim(1000, "A");
    expect(ids(first)).toEqual([b.id, d.id, a.id]);
    for (const m of first) {
      expect(m).toMatchObject({ leaseOwner: "A", leaseUntil: 1100, attempts: 1, updatedAt: 1000 });
    }
    // Leased: nobody else gets them until the lease ends.
    expect(await claim(1099, "B")).toEqual([]);
    expect(await claim(1050, "A")).toEqual([]);
    const again = await claim(1100, "B", { limit: 2 });
    expect(ids(again)).toEqual([b.id, d.id]);
    expect(again.map((m) => m.attempts)).toEqual([2, 2]);
    const listed = await store.listOutbox({});
    expect(listed.map((m) => [m.id, m.leaseOwner, m.attempts])).toEqual([
      [a.id, "A", 1],
      [b.id, "B", 2],
      [c.id, undefined, 0],
      [d.id, "B", 2],
    ]);
    await expect(claim(1, "")).rejects.toMatchObject({ code: "invalid_input" });
    await expect(claim(1, "A", { limit: 0 })).rejects.toMatchObject({ code: "invalid_input" });
    await expect(claim(1, "A", { leaseMs: 0 })).rejects.toMatchObject({ code: "invalid_input" });
  });

  test("outbox: only the lease holder settles: delivered, pending, failed, gone", async () => {
    const store = get();
    const [a, b, c, d] = [outboxDraft(), outboxDraft(), outboxDraft(), outboxDraft()];
    if (!a || !b || !c || !d) throw new Error("drafts");
    await store.enqueueOutbox([
      { ...a, availableAt: 10 },
      { ...b, availableAt: 10 },
      { ...c, availableAt: 10 },
      { ...d, availableAt: 10 },
    ]);
    expect(await claim(100, "A", { leaseMs: 1000 })).toHaveLength(4);
    const before = await store.listOutbox({});

    expect(await store.settleOutbox(a.id, "B", { status: "delivered" })).toBe(false);
    expect(await store.settleOutbox("msg_missing", "A", { status: "delivered" })).toBe(false);
    expect(await store.listOutbox({})).toEqual(before);

    const receipt = { channel: "C1", ts: "1.2" };
    expect(await store.settleOutbox(a.id, "A", { status: "delivered", receipt })).toBe(true);
    const [delivered] = await store.listOutbox({ status: "delivered" });
    expect(delivered).toMatchObject({ id: a.id, status: "delivered", receipt, attempts: 1 });
    expect(typeof delivered?.deliveredAt).toBe("number");
    expect(delivered?.leaseOwner).toBeUndefined();
    expect(delivered?.leaseUntil).toBeUndefined();
    // Settled once: not again, and never claimed again.
    expect(await store.settleOutbox(a.id, "A", { status: "failed", error: "late" })).toBe(false);

    expect(
      await store.settleOutbox(b.id, "A", { status: "pending", availableAt: 5000, error: "503" }),
    ).toBe(true);
    expect(await store.settleOutbox(c.id, "A", { status: "failed", error: "400 bad" })).toBe(true);
    expect(await store.settleOutbox(d.id, "A", { status: "gone", error: "410" })).toBe(true);
    const rows = await store.listOutbox({});
    expect(rows.map((m) => [m.id, m.status, m.lastError, m.leaseOwner])).toEqual([
      [a.id, "delivered", undefined, undefined],
      [b.id, "pending", "503", undefined],
      [c.id, "failed", "400 bad", undefined],
      [d.id, "gone", "410", undefined],
    ]);
    expect(rows[1]?.availableAt).toBe(5000);
    expect(rows[2]?.deliveredAt).toBeUndefined();
    // The retry comes back when due, and only the pending one.
    expect(await claim(4999, "A")).toEqual([]);
    const retried = await claim(5000, "B");
    expect(retried.map((m) => [m.id, m.attempts, m.lastError])).toEqual([[b.id, 2, "503"]]);
    // A lease that ran out and was claimed by another: the first holder can no longer settle.
    expect(await claim(5100, "C")).toEqual([
      { ...retried[0], leaseOwner: "C", leaseUntil: 5200, attempts: 3, updatedAt: 5100 },
    ]);
    expect(await store.settleOutbox(b.id, "B", { status: "delivered" })).toBe(false);
    expect(await store.settleOutbox(b.id, "C", { status: "delivered" })).toBe(true);
    const [settled] = await store.listOutbox({ status: "delivered", after: a.id });
    expect(settled?.lastError).toBe("503");
    expect(settled?.receipt).toBeUndefined();
    await expect(
      store.settleOutbox(b.id, "C", { status: "failed", error: "x\u0000" }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "error" });
  });

  test("outbox: settling appends its events to the audit chain, a refused settle none", async () => {
    const store = get();
    const r = makeRequest();
    const m = outboxDraft({ requestId: r.id, availableAt: 1 });
    await store.insertRequest(r, [created(r)], [m]);
    await claim(10, "A");
    const notified = (actor: string): AuditDraft => ({
      type: "notified",
      requestId: r.id,
      actor,
      at: 20,
      data: { target: "slack", outbox: m.id },
    });
    expect(await store.settleOutbox(m.id, "B", { status: "delivered" }, [notified("system")])).toBe(
      false,
    );
    expect(await store.listAudit({ requestId: r.id })).toHaveLength(1);
    await expect(
      store.settleOutbox(m.id, "A", { status: "delivered" }, [notified("a\u0000")]),
    ).rejects.toMatchObject({ code: "invalid_input" });
    expect((await store.listOutbox({}))[0]?.status).toBe("pending");
    expect(await store.settleOutbox(m.id, "A", { status: "delivered" }, [notified("system")])).toBe(
      true,
    );
    const events = await store.listAudit({ requestId: r.id });
    expect(events.map((e) => e.type)).toEqual(["created", "notified"]);
    expect(events[1]?.data).toEqual({ target: "slack", outbox: m.id });
    const v = createVerifier();
    for (const e of await store.listAudit({})) expect(v.push(e)).toBeUndefined();
    expect(await store.auditHead()).toEqual({ seq: 2, hash: events[1]?.hash });
  });

  test("outbox: the log filters by request, target, status and topic, and pages after an id", async () => {
    const store = get();
    const r1 = makeRequest();
    const r2 = makeRequest();
    const m = [
      outboxDraft({ requestId: r1.id, target: "slack", topic: "created" }),
      outboxDraft({ requestId: r1.id, target: "email", topic: "created" }),
      outboxDraft({ requestId: r2.id, target: "slack", topic: "created" }),
      outboxDraft({ requestId: r1.id, target: "slack", topic: "decided" }),
      outboxDraft({ target: "slack", topic: "test" }),
    ];
    await store.insertRequest(
      r1,
      [created(r1)],
      [m[0], m[1]].filter((x) => x !== undefined),
    );
    await store.insertRequest(
      r2,
      [created(r2)],
      [m[2]].filter((x) => x !== undefined),
    );
    await store.enqueueOutbox([m[3], m[4]].filter((x) => x !== undefined));
    const all = ids(m.filter((x) => x !== undefined));
    expect(ids(await store.listOutbox({}))).toEqual(all);
    expect(ids(await store.listOutbox({ requestId: r1.id }))).toEqual([all[0], all[1], all[3]]);
    expect(ids(await store.listOutbox({ target: "slack" }))).toEqual([
      all[0],
      all[2],
      all[3],
      all[4],
    ]);
    expect(ids(await store.listOutbox({ topic: "decided" }))).toEqual([all[3]]);
    expect(
      ids(await store.listOutbox({ requestId: r1.id, target: "slack", topic: "created" })),
    ).toEqual([all[0]]);
    await claim(Number.MAX_SAFE_INTEGER, "A", { limit: 1 });
    await store.settleOutbox(all[0] ?? "", "A", { status: "failed", error: "no" });
    expect(ids(await store.listOutbox({ status: "failed" }))).toEqual([all[0]]);
    expect(ids(await store.listOutbox({ status: "pending", target: "slack" }))).toEqual([
      all[2],
      all[3],
      all[4],
    ]);
    // Paging: after the last row of a page, in insertion order.
    const page1 = await store.listOutbox({ limit: 2 });
    const page2 = await store.listOutbox({ limit: 2, after: page1[1]?.id });
    const page3 = await store.listOutbox({ limit: 2, after: page2[1]?.id });
    expect([...ids(page1), ...ids(page2), ...ids(page3)]).toEqual(all);
    expect(ids(await store.listOutbox({ after: all[1], target: "slack" }))).toEqual([
      all[2],
      all[3],
      all[4],
    ]);
    expect(await store.listOutbox({ after: "msg_unknown" })).toEqual([]);
    expect(await store.listOutbox({ limit: 0 })).toHaveLength(1);
    await expect(
      store.listOutbox({ status: "nope" as OutboxFilter["status"] }),
    ).rejects.toMatchObject({ code: "invalid_input" });
    for (const bad of UNSTORABLE) {
      await expect(store.listOutbox({ requestId: bad })).rejects.toMatchObject({
        code: "invalid_input",
        field: "requestId",
      });
      await expect(store.listOutbox({ after: bad })).rejects.toMatchObject({
        code: "invalid_input",
      });
    }
  });

  test("outbox: the default page is 100 rows and at most 1000 are listed", async () => {
    const store = get();
    const drafts = Array.from({ length: 1005 }, () => outboxDraft());
    for (let i = 0; i < drafts.length; i += 250) {
      expect(await store.enqueueOutbox(drafts.slice(i, i + 250))).toBe(
        Math.min(250, drafts.length - i),
      );
    }
    expect(await store.listOutbox({})).toHaveLength(100);
    const most = await store.listOutbox({ limit: 5000 });
    expect(most).toHaveLength(1000);
    expect(ids(await store.listOutbox({ after: most[999]?.id }))).toEqual(ids(drafts.slice(1000)));
  });
}

/** Defines the contract's tests (vitest `describe`/`it`) for one store. */
export function runStoreContract(init: StoreContractOptions): void {
  const skipped = new Map<string, string>();
  for (const s of init.skip ?? []) for (const t of s.tests) skipped.set(t, s.reason);
  const names = new Set<string>();
  const test = (name: string, fn: () => Promise<void>) => {
    names.add(name);
    const reason = skipped.get(name);
    if (reason) it.skip(`${name} (skipped on ${init.name}: ${reason})`, fn);
    else it(name, fn);
  };

  describe(`Store contract: ${init.name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await init.create();
      await store.migrate();
    });
    afterEach(async () => {
      await init.destroy?.(store);
      await store.close();
    });

    test("migrate is idempotent", async () => {
      await store.migrate();
      await store.migrate();
      expect(await store.countPending()).toBe(0);
    });

    test("inserts and reads back a request unchanged", async () => {
      const r = makeRequest({ items: [{ id: "a", label: "A", detail: "d" }], deadline: 123 });
      const res = await store.insertRequest(r, [created(r)]);
      expect(res.created).toBe(true);
      expect(res.events).toHaveLength(1);
      expect(await store.getRequest(r.id)).toEqual(r);
      expect(await store.getRequest("req_missing")).toBeUndefined();
    });

    test("insert is idempotent by key and writes nothing the second time", async () => {
      const first = makeRequest({ key: "k1" });
      await store.insertRequest(first, [created(first)]);
      const second = makeRequest({ key: "k1", title: "other" });
      const res = await store.insertRequest(second, [created(second)]);
      expect(res.created).toBe(false);
      expect(res.request).toEqual(first);
      expect(res.events).toEqual([]);
      expect(await store.getRequest(second.id)).toBeUndefined();
      expect(await store.listAudit({})).toHaveLength(1);
    });

    test("transition is a compare-and-set on version", async () => {
      const r = makeRequest();
      await store.insertRequest(r, [created(r)]);
      const a = { ...r, status: "approved" as const, version: 2 };
      const b = { ...r, status: "rejected" as const, version: 2 };
      const draft: AuditDraft = { type: "decided", requestId: r.id, actor: "x", at: 1, data: {} };
      const [ra, rb] = await Promise.all([
        store.transition(a, 1, [draft]),
        store.transition(b, 1, [draft]),
      ]);
      expect([ra.ok, rb.ok].filter(Boolean)).toHaveLength(1);
      const loser = ra.ok ? rb : ra;
      expect(loser.events).toEqual([]);
      expect(loser.request?.version).toBe(2);
      expect((await store.getRequest(r.id))?.status).toBe(ra.ok ? "approved" : "rejected");
      expect(await store.listAudit({ requestId: r.id })).toHaveLength(2);
    });

    test("transition of an unknown request fails without writing", async () => {
      const r = makeRequest();
      const res = await store.transition({ ...r, version: 2 }, 1, [
        { type: "decided", requestId: r.id, actor: "x", at: 1, data: {} },
      ]);
      expect(res.ok).toBe(false);
      expect(res.request).toBeUndefined();
      expect(await store.listAudit({})).toEqual([]);
    });

    test("lists newest first with cursor pagination and filters", async () => {
      const rs = [];
      for (let i = 0; i < 7; i++) {
        const r = makeRequest({
          action: i % 2 ? "a.odd" : "a.even",
          status: i === 0 ? "approved" : "pending",
          approvers: i === 3 ? ["ops"] : i === 4 ? ["alice"] : [],
          requester: i === 5 ? "bot" : "agent",
        });
        rs.push(r);
        await store.insertRequest(r, [created(r)]);
      }
      const ids = rs.map((r) => r.id).reverse();
      const p1 = await store.listRequests({ limit: 3 });
      expect(p1.items.map((r) => r.id)).toEqual(ids.slice(0, 3));
      expect(p1.nextCursor).toBeDefined();
      const p2 = await store.listRequests({ limit: 3, cursor: p1.nextCursor });
      expect(p2.items.map((r) => r.id)).toEqual(ids.slice(3, 6));
      const p3 = await store.listRequests({ limit: 3, cursor: p2.nextCursor });
      expect(p3.items.map((r) => r.id)).toEqual(ids.slice(6));
      expect(p3.nextCursor).toBeUndefined();

      expect((await store.listRequests({ status: "approved" })).items.map((r) => r.id)).toEqual([
        rs[0]?.id,
      ]);
      expect((await store.listRequests({ status: ["pending"] })).items).toHaveLength(6);
      expect((await store.listRequests({ action: "a.odd" })).items).toHaveLength(3);
      expect((await store.listRequests({ requester: "bot" })).items.map((r) => r.id)).toEqual([
        rs[5]?.id,
      ]);
      // Approver filter: listed by name or group, plus requests open to everyone.
      const forBob = (await store.listRequests({ approver: ["bob"] })).items.map((r) => r.id);
      expect(forBob).not.toContain(rs[3]?.id);
      expect(forBob).not.toContain(rs[4]?.id);
      expect(forBob).toHaveLength(5);
      const forOps = (await store.listRequests({ approver: ["carol", "ops"] })).items.map(
        (r) => r.id,
      );
      expect(forOps).toContain(rs[3]?.id);
      expect(forOps).not.toContain(rs[4]?.id);
    });

    test("idempotency keys are scoped per requester", async () => {
      const a = makeRequest({ key: "k-shared", requester: "agent-a" });
      const b = makeRequest({ key: "k-shared", requester: "agent-b" });
      expect((await store.insertRequest(a, [created(a)])).created).toBe(true);
      // Agent B using A's key creates its own request and learns nothing of A's.
      const rb = await store.insertRequest(b, [created(b)]);
      expect(rb.created).toBe(true);
      expect(rb.request).toEqual(b);
      // Each agent's replay finds its own request.
      const againA = await store.insertRequest(
        makeRequest({ key: "k-shared", requester: "agent-a" }),
        [],
      );
      expect(againA).toMatchObject({ created: false, request: a });
      const againB = await store.insertRequest(
        makeRequest({ key: "k-shared", requester: "agent-b" }),
        [],
      );
      expect(againB).toMatchObject({ created: false, request: b });
      expect(await store.countRequests({})).toBe(2);
    });

    test("lists in newest, oldest and deadline order, with cursors for each", async () => {
      const rs: ApprovalRequest[] = [];
      // Deadlines out of id order, some equal, some absent, one terminal (no live deadline).
      const deadlines = [500, undefined, 100, 300, 100, undefined, 200, 50];
      for (let i = 0; i < deadlines.length; i++) {
        const d = deadlines[i];
        const r = makeRequest({
          ...(d !== undefined ? { deadline: d } : {}),
          status: i === 7 ? "approved" : "pending",
          action: i % 2 ? "a.odd" : "a.even",
        });
        rs.push(r);
        await store.insertRequest(r, [created(r)]);
      }
      const walk = async (filter: ListFilter) => {
        const ids: string[] = [];
        let cursor: string | undefined;
        for (let guard = 0; guard < 20; guard++) {
          const page = await store.listRequests({ ...filter, limit: 3, cursor });
          const sums = await store.listSummaries({ ...filter, limit: 3, cursor });
          expect(sums.items.map((x) => x.id)).toEqual(page.items.map((x) => x.id));
          expect(sums.nextCursor).toEqual(page.nextCursor);
          ids.push(...page.items.map((x) => x.id));
          if (!page.nextCursor) return ids;
          cursor = page.nextCursor;
        }
        throw new Error("paging did not end");
      };
      const byId = [...rs].sort((a, b) => (a.id < b.id ? -1 : 1)).map((r) => r.id);
      expect(await walk({})).toEqual([...byId].reverse());
      expect(await walk({ order: "newest" })).toEqual([...byId].reverse());
      expect(await walk({ order: "oldest" })).toEqual(byId);
      const key = (r: ApprovalRequest) =>
        r.status === "pending" && r.deadline !== undefined ? r.deadline : Number.POSITIVE_INFINITY;
      const byDeadline = [...rs]
        .sort((a, b) => key(a) - key(b) || (a.id < b.id ? -1 : 1))
        .map((r) => r.id);
      expect(await walk({ order: "deadline" })).toEqual(byDeadline);
      const pending = rs.filter((r) => r.status === "pending");
      expect(await walk({ order: "deadline", status: "pending" })).toEqual(
        byDeadline.filter((id) => pending.some((r) => r.id === id)),
      );
      expect(await walk({ order: "oldest", action: "a.odd" })).toEqual(
        byId.filter((id) => rs.find((r) => r.id === id)?.action === "a.odd"),
      );
      // A cursor of another order is refused, not misread.
      const first = await store.listRequests({ order: "deadline", limit: 2 });
      expect(first.nextCursor).toBeDefined();
      await expect(
        store.listRequests({ order: "deadline", cursor: "req_00000001" }),
      ).rejects.toMatchObject({ code: "invalid_input" });
      await expect(store.listRequests({ order: "sideways" as ListOrder })).rejects.toMatchObject({
        code: "invalid_input",
      });
    });

    test("counts with a filter, whatever the page size", async () => {
      for (let i = 0; i < 7; i++) {
        const r = makeRequest({
          status: i < 2 ? "rejected" : "pending",
          requester: i === 3 ? "bot" : "agent",
          approvers: i === 4 ? ["ops"] : [],
        });
        await store.insertRequest(r, [created(r)]);
      }
      expect(await store.countRequests({})).toBe(7);
      expect(await store.countRequests({ status: "pending" })).toBe(5);
      expect(await store.countRequests({ status: ["pending", "rejected"], limit: 1 })).toBe(7);
      expect(await store.countRequests({ requester: "bot" })).toBe(1);
      expect(await store.countRequests({ approver: "alice", status: "pending" })).toBe(4);
      expect(await store.countRequests({ action: "nothing" })).toBe(0);
    });

    test("stops counting at upTo, and refuses a cap that is not a positive integer", async () => {
      for (let i = 0; i < 6; i++) {
        const r = makeRequest({ title: i < 4 ? `Refund ${i}` : `Deploy ${i}` });
        await store.insertRequest(r, [created(r)]);
      }
      expect(await store.countRequests({ status: "pending" }, { upTo: 4 })).toBe(4);
      expect(await store.countRequests({ status: "pending" }, { upTo: 10 })).toBe(6);
      expect(await store.countRequests({ status: "pending" }, { upTo: 6 })).toBe(6);
      expect(await store.countRequests({ q: "refund" }, { upTo: 3 })).toBe(3);
      expect(await store.countRequests({ q: "deploy" }, { upTo: 3 })).toBe(2);
      expect(await store.countRequests({ status: "pending" }, {})).toBe(6);
      for (const upTo of [0, -1, 2.5, Number.NaN]) {
        await expect(store.countRequests({}, { upTo })).rejects.toThrow(
          /upTo must be a positive integer/,
        );
      }
    });

    test("summaries carry what a list shows, terminal decision included", async () => {
      const a = makeRequest({
        key: "sum-k",
        risk: "high",
        confidence: 42.5,
        level: "quick",
        deadline: 999,
        approvers: ["ops", "alice"],
        quorum: 2,
        revisionOf: "req_earlier",
        items: [
          { id: "i1", label: "one" },
          { id: "i2", label: "two" },
        ],
        preview: "x".repeat(10_000),
      });
      const b = makeRequest();
      for (const r of [a, b]) await store.insertRequest(r, [created(r)]);
      const decidedB: ApprovalRequest = {
        ...b,
        status: "rejected",
        version: 2,
        updatedAt: b.updatedAt + 7,
        decision: {
          outcome: "rejected",
          method: "reject",
          reviewer: "carol",
          channel: "web",
          decidedAt: b.createdAt + 5,
        },
      };
      delete decidedB.deadline;
      await store.transition(decidedB, 1, []);
      const page = await store.listSummaries({ order: "oldest" });
      expect(page.items).toEqual([summaryOf(a), summaryOf(decidedB)]);
      expect(page.items[0]).toMatchObject({
        key: "sum-k",
        risk: "high",
        confidence: 42.5,
        level: "quick",
        deadline: 999,
        approvers: ["ops", "alice"],
        quorum: 2,
        revisionOf: "req_earlier",
        itemCount: 2,
      });
      expect(page.items[0]).not.toHaveProperty("preview");
      expect(page.items[1]?.decision).toEqual({
        outcome: "rejected",
        method: "reject",
        reviewer: "carol",
        decidedAt: b.createdAt + 5,
      });
    });

    test("pending usage counts a requester's pending requests and their stored bytes", async () => {
      expect(await store.pendingUsage("bot")).toEqual({ count: 0, bytes: 0 });
      const big = makeRequest({ requester: "bot", args: { blob: "é".repeat(5000) } });
      const small = makeRequest({ requester: "bot" });
      const other = makeRequest({ requester: "someone-else" });
      for (const r of [big, small, other]) await store.insertRequest(r, [created(r)]);
      const bytes = (r: ApprovalRequest) => Buffer.byteLength(JSON.stringify(r), "utf8");
      expect(await store.pendingUsage("bot")).toEqual({
        count: 2,
        bytes: bytes(big) + bytes(small),
      });
      const done = { ...big, status: "cancelled" as const, version: 2 };
      await store.transition(done, 1, []);
      expect(await store.pendingUsage("bot")).toEqual({ count: 1, bytes: bytes(small) });
      // A change that leaves a request pending and grows its document counts at its new size.
      const grown = { ...small, version: 2, metadata: { note: "x".repeat(3000) } };
      await store.transition(grown, 1, []);
      expect(await store.pendingUsage("bot")).toEqual({ count: 1, bytes: bytes(grown) });
    });

    test("pending quota: parallel creates leave exactly the quota pending, refusals write nothing", async () => {
      const quota = { count: 5, bytes: 10_000_000 };
      const rs = Array.from({ length: 20 }, (_, i) =>
        makeRequest({ requester: "bot", key: `quota-${i}` }),
      );
      const settled = await Promise.allSettled(
        rs.map((r) => store.insertRequest(r, [created(r)], [], { quota })),
      );
      const made = settled.filter((x) => x.status === "fulfilled");
      const refused = settled.flatMap((x) => (x.status === "rejected" ? [x.reason] : []));
      expect(made).toHaveLength(5);
      expect(refused).toHaveLength(15);
      for (const err of refused) {
        expect(err).toMatchObject({ code: "quota_exceeded", limit: "count", max: 5 });
      }
      expect(await store.pendingUsage("bot")).toMatchObject({ count: 5 });
      // Nothing of a refused create is stored: neither the request nor its event.
      expect(await store.countRequests({})).toBe(5);
      expect(await store.listAudit({})).toHaveLength(5);
      // A replay of a stored key returns its request, quota full or not, and counts nothing.
      const first = rs.find((_, i) => settled[i]?.status === "fulfilled") as ApprovalRequest;
      const again = { ...makeRequest({ requester: "bot", key: first.key }) };
      const replay = await store.insertRequest(again, [created(again)], [], { quota });
      expect(replay).toMatchObject({ created: false, request: { id: first.id } });
      expect(await store.pendingUsage("bot")).toMatchObject({ count: 5 });
      // Another requester has its own quota; a request created settled is not counted.
      const other = makeRequest({ requester: "bot2" });
      expect((await store.insertRequest(other, [created(other)], [], { quota })).created).toBe(
        true,
      );
      const auto = makeRequest({ requester: "bot", status: "approved", level: "auto" });
      expect((await store.insertRequest(auto, [created(auto)], [], { quota })).created).toBe(true);
      // Deciding one frees a place.
      const done = { ...first, status: "cancelled" as const, version: 2 };
      expect((await store.transition(done, 1, [])).ok).toBe(true);
      const next = makeRequest({ requester: "bot" });
      expect((await store.insertRequest(next, [created(next)], [], { quota })).created).toBe(true);
      await expect(
        store.insertRequest(makeRequest({ requester: "bot" }), [], [], { quota }),
      ).rejects.toMatchObject({ code: "quota_exceeded", pending: 5 });
    });

    test("pending quota: parallel creates leave the byte quota's worth pending", async () => {
      const blob = "b".repeat(200_000);
      const rs = Array.from({ length: 4 }, () =>
        makeRequest({ requester: "bot", args: { blob }, argsHash: hashArgs({ blob }) }),
      );
      const quota = { count: 1000, bytes: 300_000 };
      const settled = await Promise.allSettled(
        rs.map((r) => store.insertRequest(r, [created(r)], [], { quota })),
      );
      expect(settled.filter((x) => x.status === "fulfilled")).toHaveLength(1);
      const refused = settled.flatMap((x) => (x.status === "rejected" ? [x.reason] : []));
      expect(refused).toHaveLength(3);
      for (const err of refused) {
        expect(err).toMatchObject({ code: "quota_exceeded", limit: "bytes", pending: 1 });
      }
      const usage = await store.pendingUsage("bot");
      expect(usage.count).toBe(1);
      expect(usage.bytes).toBeGreaterThan(200_000);
      expect(usage.bytes).toBeLessThanOrEqual(300_000);
      // A quota that is not two positive integers is refused before anything is written.
      const r = makeRequest({ requester: "bot3" });
      await expect(
        store.insertRequest(r, [created(r)], [], { quota: { count: 0, bytes: 1 } }),
      ).rejects.toMatchObject({ code: "invalid_input" });
      expect(await store.getRequest(r.id)).toBeUndefined();
    });

    test("statuses list every request by id, with the stored document's status", async () => {
      const rs = [makeRequest(), makeRequest(), makeRequest()];
      for (const r of rs) await store.insertRequest(r, [created(r)]);
      const second = rs[1] as ApprovalRequest;
      await store.transition({ ...second, status: "approved", version: 2 }, 1, []);
      const all = await store.listStatuses(undefined, 10);
      expect(all).toEqual(
        rs.map((r, i) => ({
          id: r.id,
          status: i === 1 ? "approved" : "pending",
          docStatus: i === 1 ? "approved" : "pending",
        })),
      );
      expect((await store.listStatuses(rs[0]?.id, 1)).map((s) => s.id)).toEqual([second.id]);
    });

    test("the chain state reads the head and says the chain is not keyed", async () => {
      expect(await store.auditChainState()).toEqual({ head: undefined, headRowMissing: false });
      const r = makeRequest();
      const res = await store.insertRequest(r, [created(r)]);
      const state = await store.auditChainState();
      expect(state).toEqual({
        head: { seq: 1, hash: res.events[0]?.hash },
        headRowMissing: false,
      });
      expect(state.head).toEqual(await store.auditHead());
    });

    test("limits are clamped", async () => {
      const r = makeRequest();
      await store.insertRequest(r, [created(r)]);
      expect((await store.listRequests({ limit: 0 })).items).toHaveLength(1);
      expect((await store.listRequests({ limit: 1e9 })).items).toHaveLength(1);
    });

    test("audit events form one hash chain with a matching head", async () => {
      for (let i = 0; i < 5; i++) {
        const r = makeRequest();
        await store.insertRequest(r, [created(r)]);
        await store.appendAudit([
          {
            type: "viewed",
            requestId: r.id,
            actor: "alice",
            at: 5,
            data: { secret: "[REDACTED]" },
          },
        ]);
      }
      const all = await store.listAudit({});
      expect(all.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      const v = createVerifier();
      for (const e of all) expect(v.push(e)).toBeUndefined();
      const head = await store.auditHead();
      expect(head).toEqual({ seq: 10, hash: all[9]?.hash });
      expect(v.done().lastHash).toBe(head?.hash);
      expect(await store.listAudit({ after: 8 })).toHaveLength(2);
      expect(await store.listAudit({ after: 2, limit: 3 })).toHaveLength(3);
      const firstId = all[0]?.requestId;
      expect(await store.listAudit({ requestId: firstId })).toHaveLength(2);
    });

    test("audit data round-trips exactly", async () => {
      const data = { nested: { list: [1, "two", null, true], n: 1.5 }, s: "é ✓" };
      const [e] = await store.appendAudit([{ type: "notified", actor: "system", at: 9, data }]);
      const [back] = await store.listAudit({});
      expect(back).toEqual(e);
      expect(back?.data).toEqual(data);
      expect(back?.requestId).toBeUndefined();
    });

    test("deadlines: next and due, pending only", async () => {
      expect(await store.nextDeadline()).toBeUndefined();
      const a = makeRequest({ deadline: 300 });
      const b = makeRequest({ deadline: 100 });
      const c = makeRequest({ deadline: 200 });
      const d = makeRequest();
      for (const r of [a, b, c, d]) await store.insertRequest(r, [created(r)]);
      expect(await store.nextDeadline()).toBe(100);
      expect((await store.dueRequests(250, 10)).map((r) => r.id)).toEqual([b.id, c.id]);
      expect((await store.dueRequests(250, 1)).map((r) => r.id)).toEqual([b.id]);
      const decided = { ...b, status: "timed_out" as const, version: 2 };
      delete decided.deadline;
      await store.transition(decided, 1, []);
      expect(await store.nextDeadline()).toBe(200);
      expect((await store.dueRequests(1000, 10)).map((r) => r.id)).toEqual([c.id, a.id]);
    });

    test("execution leases: stale claims, the next lease end, and listing by execution state", async () => {
      expect(await store.nextLeaseEnd()).toBeUndefined();
      const approvedAt = (r: ApprovalRequest): ApprovalRequest => ({
        ...r,
        status: "approved",
        version: 2,
        decision: {
          outcome: "approved",
          method: "approve_all",
          reviewer: "alice",
          channel: "api",
          decidedAt: r.createdAt + 10,
        },
      });
      const claim = (r: ApprovalRequest, leaseUntil: number): ApprovalRequest => ({
        ...r,
        version: r.version + 1,
        execution: { state: "claimed", attempt: 1, claimedAt: 1, claimedBy: "bot", leaseUntil },
      });
      const [a, b, c, d] = [makeRequest(), makeRequest(), makeRequest(), makeRequest()];
      for (const r of [a, b, c, d]) await store.insertRequest(r, [created(r)]);
      const [a2, b2, c2] = [approvedAt(a), approvedAt(b), approvedAt(c)];
      for (const r of [a2, b2, c2]) await store.transition(r, 1, []);
      const [a3, b3, c3] = [claim(a2, 300), claim(b2, 100), claim(c2, 200)];
      for (const r of [a3, b3, c3]) await store.transition(r, 2, []);
      expect(await store.nextLeaseEnd()).toBe(100);
      expect((await store.staleExecutions(250, 10)).map((r) => r.id)).toEqual([b.id, c.id]);
      expect((await store.staleExecutions(250, 1)).map((r) => r.id)).toEqual([b.id]);
      // A claim that became unknown has no lease; one that was executed neither.
      const { leaseUntil: _b, ...bx } = b3.execution ?? {
        state: "claimed" as const,
        attempt: 1,
        claimedAt: 1,
        claimedBy: "bot",
      };
      const unknown: ApprovalRequest = {
        ...b3,
        version: 4,
        execution: { ...bx, state: "unknown" },
      };
      await store.transition(unknown, 3, []);
      const { leaseUntil: _c, ...cx } = c3.execution ?? {
        state: "claimed" as const,
        attempt: 1,
        claimedAt: 1,
        claimedBy: "bot",
      };
      const executed: ApprovalRequest = {
        ...c3,
        version: 4,
        execution: { ...cx, state: "executed", endedAt: 5 },
      };
      await store.transition(executed, 3, []);
      expect(await store.nextLeaseEnd()).toBe(300);
      expect((await store.staleExecutions(1000, 10)).map((r) => r.id)).toEqual([a.id]);
      const ids = async (filter: ListFilter) =>
        (await store.listRequests(filter)).items.map((r) => r.id).sort();
      expect(await ids({ execution: "unknown" })).toEqual([b.id]);
      expect(await ids({ execution: ["unknown", "claimed"] })).toEqual([a.id, b.id].sort());
      expect(await ids({ execution: "executed", status: "approved" })).toEqual([c.id]);
      expect(await store.countRequests({ execution: "unknown" })).toBe(1);
      const summaries = await store.listSummaries({ execution: ["unknown", "executed"] });
      expect(Object.fromEntries(summaries.items.map((r) => [r.id, r.execution]))).toEqual({
        [b.id]: "unknown",
        [c.id]: "executed",
      });
      // d was never approved: in no execution listing, and not stale.
      expect(
        await ids({
          execution: ["claimed", "executed", "failed", "unknown", "released", "abandoned"],
        }),
      ).not.toContain(d.id);
    });

    test("outcomes and pending count", async () => {
      const a = makeRequest();
      const b = makeRequest();
      for (const r of [a, b]) await store.insertRequest(r, [created(r)]);
      expect(await store.countPending()).toBe(2);
      const decided: ApprovalRequest = {
        ...a,
        status: "approved",
        version: 2,
        decision: {
          outcome: "approved",
          method: "select",
          reviewer: "alice",
          channel: "web",
          decidedAt: a.createdAt + 500,
        },
      };
      await store.transition(decided, 1, []);
      expect(await store.countPending()).toBe(1);
      const rows = await store.outcomes(0);
      expect(rows).toEqual([
        {
          action: a.action,
          status: "approved",
          method: "select",
          createdAt: a.createdAt,
          decidedAt: a.createdAt + 500,
        },
      ]);
      expect(await store.outcomes(a.createdAt + 501)).toEqual([]);
    });

    test("counts settled requests into the metrics counters, in the settling write only", async () => {
      if (!store.outcomeStats) return; // optional: the engine reads `outcomes` instead
      const t0 = 1_800_000_000_000;
      const a = makeRequest({ createdAt: t0, updatedAt: t0 });
      const b = makeRequest({ createdAt: t0, updatedAt: t0, action: "files.delete" });
      const c = makeRequest({ createdAt: t0, updatedAt: t0 });
      for (const r of [a, b, c]) await store.insertRequest(r, [created(r)]);
      const settle = (r: ApprovalRequest, status: "approved" | "timed_out", at: number) => {
        const method = status === "approved" ? "approve_all" : "timeout";
        const next: ApprovalRequest = {
          ...r,
          status,
          version: r.version + 1,
          updatedAt: at,
          decision: { outcome: status, method, reviewer: "alice", channel: "web", decidedAt: at },
        };
        const type = status === "approved" ? "decided" : "timed_out";
        return {
          next,
          event: { type, requestId: r.id, actor: "alice", at, data: {} } as AuditDraft,
        };
      };
      const approved = settle(a, "approved", t0 + 1500);
      expect((await store.transition(approved.next, 1, [approved.event])).ok).toBe(true);
      const timedOut = settle(b, "timed_out", t0 + 3_600_000);
      expect((await store.transition(timedOut.next, 1, [timedOut.event])).ok).toBe(true);
      // A write that loses its compare-and-set counts nothing.
      expect((await store.transition({ ...c, version: 2 }, 1, [])).ok).toBe(true);
      const lost = settle(c, "approved", t0 + 2000);
      expect((await store.transition(lost.next, 1, [lost.event])).ok).toBe(false);
      // A later change of a settled request (its execution claimed) counts nothing either.
      const claimed = { ...approved.next, version: 3, executedAt: t0 + 1600, updatedAt: t0 + 1600 };
      const executed: AuditDraft = {
        type: "executed",
        requestId: a.id,
        actor: "agent",
        at: t0 + 1600,
        data: {},
      };
      expect((await store.transition(claimed, 2, [executed])).ok).toBe(true);
      // A request settled when it is created (a policy approved it) counts at once.
      const auto = makeRequest({ createdAt: t0 + 10, updatedAt: t0 + 10 });
      const autoApproved = settle(auto, "approved", t0 + 10);
      await store.insertRequest({ ...autoApproved.next, version: 1 }, [
        created(auto),
        autoApproved.event,
      ]);

      const hour = Math.floor(t0 / 3_600_000);
      const stats = (await store.outcomeStats(0)).map((s) => ({
        ...s,
        hour: Number(s.hour),
        n: Number(s.n),
      }));
      const key = (s: { action: string; status: string; hour: number; bucket: number }) =>
        `${s.hour}:${s.action}:${s.status}:${s.bucket}`;
      const byKey = (x: (typeof stats)[number], y: (typeof stats)[number]) =>
        key(x) < key(y) ? -1 : 1;
      // a: 1.5 s of review (bucket 1); auto: settled as created (bucket 0); b: one hour (bucket 13).
      expect(stats.sort(byKey)).toEqual(
        [
          { hour, action: a.action, status: "approved", method: "approve_all", bucket: 0, n: 1 },
          { hour, action: a.action, status: "approved", method: "approve_all", bucket: 1, n: 1 },
          {
            hour: hour + 1,
            action: b.action,
            status: "timed_out",
            method: "timeout",
            bucket: 13,
            n: 1,
          },
        ].sort(byKey),
      );
      // The window starts at the hour of `since`.
      expect((await store.outcomeStats(t0 + 3_600_000)).map((s) => s.status)).toEqual([
        "timed_out",
      ]);
    });

    test("keeps a response of any JSON and the responseSchema, and lists, counts and tallies responded", async () => {
      const t0 = 1_850_000_000_000;
      const responseSchema = {
        type: "object",
        properties: { budget: { type: "integer" }, regions: { type: "array" } },
      };
      const answers: unknown[] = [
        { budget: 500, regions: ["eu", "us"], note: "zoë 🚀", nested: { ok: true, none: null } },
        "just text",
        42,
        null,
      ];
      const rs = answers.map(() =>
        makeRequest({
          createdAt: t0,
          updatedAt: t0,
          action: "research.plan",
          allowed: ["approve", "respond"],
          responseSchema,
        }),
      );
      for (const r of rs) await store.insertRequest(r, [created(r)]);
      for (const [i, r] of rs.entries()) {
        const at = t0 + 2500;
        const decision = {
          outcome: "responded" as const,
          method: "respond" as const,
          reviewer: "alice",
          channel: "web" as const,
          decidedAt: at,
          response: answers[i],
        };
        const next: ApprovalRequest = {
          ...r,
          status: "responded",
          version: 2,
          updatedAt: at,
          decision,
          decisions: [decision],
        };
        const event: AuditDraft = {
          type: "decided",
          requestId: r.id,
          actor: "alice",
          at,
          data: { outcome: "responded", method: "respond", response: answers[i] },
        };
        expect((await store.transition(next, 1, [event])).ok).toBe(true);
      }
      for (const [i, r] of rs.entries()) {
        const back = await store.getRequest(r.id);
        expect(back?.status).toBe("responded");
        expect(back?.responseSchema).toEqual(responseSchema);
        expect(back?.allowed).toEqual(["approve", "respond"]);
        expect(back?.decision?.response).toEqual(answers[i]);
        expect(back?.decisions[0]?.response).toEqual(answers[i]);
      }
      const listed = await store.listRequests({ status: "responded" });
      expect(listed.items.map((r) => r.id).sort()).toEqual(rs.map((r) => r.id).sort());
      const summaries = await store.listSummaries({ status: "responded" });
      expect(summaries.items.map((r) => r.status)).toEqual(rs.map(() => "responded"));
      expect(await store.countRequests({ status: "responded" })).toBe(rs.length);
      expect(await store.countRequests({ status: "pending" })).toBe(0);
      const audit = await store.listAudit({ requestId: rs[0]?.id ?? "" });
      expect(audit.find((e) => e.type === "decided")?.data.response).toEqual(answers[0]);
      const outcomes = (await store.outcomes(t0)).filter((o) => o.action === "research.plan");
      expect(outcomes.map((o) => [o.status, o.method])).toEqual(
        rs.map(() => ["responded", "respond"]),
      );
      if (store.outcomeStats) {
        const stats = (await store.outcomeStats(t0)).filter((x) => x.action === "research.plan");
        expect(stats.map((x) => [x.status, x.method, Number(x.n)])).toEqual([
          ["responded", "respond", rs.length],
        ]);
      }
    });

    test("counts settling writes made at once exactly, a losing one not at all", async () => {
      if (!store.outcomeStats) return;
      const t0 = 1_900_000_000_000;
      const rs = Array.from({ length: 12 }, () => makeRequest({ createdAt: t0, updatedAt: t0 }));
      for (const r of rs) await store.insertRequest(r, [created(r)]);
      const moved = rs[11] as ApprovalRequest;
      expect((await store.transition({ ...moved, version: 2 }, 1, [])).ok).toBe(true);
      // Sent together, so a store that commits writes in batches counts them in one: 8 bumps of
      // one counter, 3 of another, and a write that loses its compare-and-set.
      const results = await Promise.all(
        rs.map((r, i) => {
          const outcome = i < 8 ? "approved" : "rejected";
          const at = t0 + 1500;
          const next: ApprovalRequest = {
            ...r,
            status: outcome,
            version: 2,
            updatedAt: at,
            decision: {
              outcome,
              method: outcome === "approved" ? "approve_all" : "reject",
              reviewer: "alice",
              channel: "web",
              decidedAt: at,
            },
          };
          const event: AuditDraft = {
            type: "decided",
            requestId: r.id,
            actor: "alice",
            at,
            data: {},
          };
          return store.transition(next, 1, [event]);
        }),
      );
      expect(results.map((x) => x.ok)).toEqual(rs.map((_, i) => i !== 11));
      const counts = (await store.outcomeStats(t0)).map((x) => [x.status, Number(x.n)]);
      expect(counts.sort()).toEqual([
        ["approved", 8],
        ["rejected", 3],
      ]);
    });

    test("reads a request back by its requester and key", async () => {
      const a = makeRequest({ key: "by-key", requester: "agent-a" });
      const b = makeRequest({ key: "by-key", requester: "agent-b" });
      for (const r of [a, b]) await store.insertRequest(r, [created(r)]);
      expect(await store.getRequestByKey("agent-a", "by-key")).toEqual(a);
      expect(await store.getRequestByKey("agent-b", "by-key")).toEqual(b);
      expect(await store.getRequestByKey("agent-c", "by-key")).toBeUndefined();
      expect(await store.getRequestByKey("agent-a", "other")).toBeUndefined();
    });

    test("due requests: pending, deadline at or before now, earliest first, at most limit", async () => {
      const late = makeRequest({ deadline: 300 });
      const early = makeRequest({ deadline: 100 });
      const exact = makeRequest({ deadline: 250 });
      const future = makeRequest({ deadline: 251 });
      const none = makeRequest();
      // A terminal request is never due, whatever its document says.
      const settled = makeRequest({ status: "approved", deadline: 50 });
      for (const r of [late, early, exact, future, none, settled]) {
        await store.insertRequest(r, [created(r)]);
      }
      expect(await store.nextDeadline()).toBe(100);
      expect(await store.dueRequests(99, 10)).toEqual([]);
      expect(await store.dueRequests(250, 10)).toEqual([early, exact]);
      expect(await store.dueRequests(250, 1)).toEqual([early]);
      expect((await store.dueRequests(10_000, 10)).map((r) => r.id)).toEqual([
        early.id,
        exact.id,
        future.id,
        late.id,
      ]);
    });

    test("due requests come back until transitioned; a transitioned one is no longer due", async () => {
      const a = makeRequest({ deadline: 100 });
      const b = makeRequest({ deadline: 200 });
      const c = makeRequest({ deadline: 300 });
      for (const r of [a, b, c]) await store.insertRequest(r, [created(r)]);
      // A sweep that stopped half way finds the same requests again.
      expect((await store.dueRequests(1000, 10)).map((r) => r.id)).toEqual([a.id, b.id, c.id]);
      expect((await store.dueRequests(1000, 10)).map((r) => r.id)).toEqual([a.id, b.id, c.id]);
      // Timed out (deadline gone), as the sweeper writes it.
      const timedOut: ApprovalRequest = { ...a, status: "timed_out", version: 2 };
      delete timedOut.deadline;
      expect((await store.transition(timedOut, 1, [])).ok).toBe(true);
      // Decided by a person, the document still naming its old deadline: not due either.
      expect((await store.transition({ ...b, status: "approved", version: 2 }, 1, [])).ok).toBe(
        true,
      );
      // Escalated: still pending, with a later deadline; due again only then.
      const escalated = { ...c, deadline: 5000, escalations: 1, version: 2 };
      expect((await store.transition(escalated, 1, [])).ok).toBe(true);
      expect(await store.dueRequests(1000, 10)).toEqual([]);
      expect(await store.nextDeadline()).toBe(5000);
      expect(await store.dueRequests(5000, 10)).toEqual([escalated]);
    });

    const reopened = async (): Promise<Store> => {
      if (!init.reopen) {
        throw new Error(
          `give runStoreContract a reopen(store) for ${init.name}, or name this test in skip with the reason`,
        );
      }
      const other = await init.reopen(store);
      await other.migrate();
      return other;
    };

    test("change signal: commits by another connection call onExternalChange", async () => {
      const other = await reopened();
      let calls = 0;
      const off = store.onExternalChange(() => {
        calls++;
      });
      try {
        const r = makeRequest({ deadline: 1000 });
        let before = calls;
        await other.insertRequest(r, [created(r)]);
        await until("a signal after another connection inserted", () => calls > before);
        expect(await store.getRequest(r.id)).toEqual(r);

        before = calls;
        const next = { ...r, status: "rejected" as const, version: 2 };
        delete next.deadline;
        expect((await other.transition(next, 1, [])).ok).toBe(true);
        await until("a signal after another connection's transition", () => calls > before);
        expect((await store.getRequest(r.id))?.status).toBe("rejected");

        before = calls;
        await other.appendAudit([
          { type: "viewed", requestId: r.id, actor: "bob", at: 2, data: {} },
        ]);
        await until("a signal after another connection appended to the audit", () => {
          return calls > before;
        });
        expect(await store.listAudit({ requestId: r.id })).toHaveLength(2);
      } finally {
        off();
        await other.close();
      }
    });

    test("pending quota: parallel creates through two connections leave exactly the quota pending", async () => {
      const other = await reopened();
      try {
        const quota = { count: 5, bytes: 10_000_000 };
        for (const n of [20, 100]) {
          const requester = `bot-${n}`;
          const rs = Array.from({ length: n }, () => makeRequest({ requester }));
          const settled = await Promise.allSettled(
            rs.map((r, i) =>
              (i % 2 === 0 ? store : other).insertRequest(r, [created(r)], [], { quota }),
            ),
          );
          expect(settled.filter((x) => x.status === "fulfilled")).toHaveLength(5);
          for (const x of settled) {
            if (x.status === "rejected") expect(x.reason).toMatchObject({ code: "quota_exceeded" });
          }
          expect(await store.pendingUsage(requester)).toMatchObject({ count: 5 });
          expect(await other.pendingUsage(requester)).toMatchObject({ count: 5 });
        }
      } finally {
        await other.close();
      }
    });

    test("change signal: each listener is called, and unsubscribing one keeps the others", async () => {
      const other = await reopened();
      let first = 0;
      let second = 0;
      const offFirst = store.onExternalChange(() => {
        first++;
      });
      const offSecond = store.onExternalChange(() => {
        second++;
      });
      try {
        const a = makeRequest();
        let before = [first, second];
        await other.insertRequest(a, [created(a)]);
        await until("both listeners", () => first > (before[0] ?? 0) && second > (before[1] ?? 0));
        offFirst();
        before = [first, second];
        const b = makeRequest();
        await other.insertRequest(b, [created(b)]);
        await until("the listener still subscribed", () => second > (before[1] ?? 0));
      } finally {
        offFirst();
        offSecond();
        await other.close();
      }
    });

    test("text a column cannot keep (NUL, lone surrogate) is refused and nothing is written", async () => {
      for (const bad of UNSTORABLE) {
        const variants: Partial<ApprovalRequest>[] = [
          { title: bad },
          { action: bad },
          { requester: bad },
          { approvers: ["ops", bad] },
          { key: bad },
          { correlationId: bad },
          { revisionOf: bad },
        ];
        for (const over of variants) {
          const r = makeRequest(over);
          await expect(store.insertRequest(r, [created(r)])).rejects.toMatchObject({
            code: "invalid_input",
          });
          expect(await store.getRequest(r.id)).toBeUndefined();
        }
        const fine = makeRequest();
        await expect(
          store.insertRequest(fine, [{ ...created(fine), actor: bad }]),
        ).rejects.toMatchObject({ code: "invalid_input" });
        expect(await store.getRequest(fine.id)).toBeUndefined();
        await expect(
          store.appendAudit([{ type: "viewed", actor: bad, at: 1, data: {} }]),
        ).rejects.toMatchObject({ code: "invalid_input" });
      }
      expect(await store.listAudit({})).toEqual([]);
      expect(await store.countRequests({})).toBe(0);

      const r = makeRequest();
      await store.insertRequest(r, [created(r)]);
      for (const bad of UNSTORABLE) {
        await expect(
          store.transition({ ...r, title: bad, version: 2 }, 1, []),
        ).rejects.toMatchObject({ code: "invalid_input" });
        const decided: ApprovalRequest = {
          ...r,
          status: "approved",
          version: 2,
          decision: {
            outcome: "approved",
            method: "approve_all",
            reviewer: bad,
            channel: "web",
            decidedAt: r.createdAt + 1,
          },
        };
        await expect(store.transition(decided, 1, [])).rejects.toMatchObject({
          code: "invalid_input",
        });
        await expect(
          store.transition({ ...r, status: "approved", version: 2 }, 1, [
            { type: "decided", requestId: r.id, actor: bad, at: 1, data: {} },
          ]),
        ).rejects.toMatchObject({ code: "invalid_input" });
      }
      expect(await store.getRequest(r.id)).toEqual(r);
      expect(await store.listAudit({})).toHaveLength(1);
    });

    test("JSON keeps NUL and lone surrogates exactly, and the chain still verifies", async () => {
      const odd = {
        nul: "a\u0000b",
        high: "x\ud800y",
        low: "\udc00",
        pair: "\ud83d\ude00",
        "k\u0000": 1,
      };
      const r = makeRequest({
        args: odd,
        argsHash: hashArgs(odd),
        preview: "p\u0000\ud800",
        metadata: { note: "\udbff" },
      });
      const res = await store.insertRequest(r, [{ ...created(r), data: { odd } }]);
      expect(res.created).toBe(true);
      expect(await store.getRequest(r.id)).toEqual(r);
      expect((await store.listRequests({})).items).toEqual([r]);
      const [event] = await store.listAudit({});
      expect(event?.data).toEqual({ odd });
      expect(event).toEqual(res.events[0]);
      const v = createVerifier();
      for (const e of await store.listAudit({})) expect(v.push(e)).toBeUndefined();
    });

    const keyedTest = (
      name: string,
      fn: (createKeyed: NonNullable<StoreContractOptions["createKeyed"]>) => Promise<void>,
    ) => {
      const createKeyed = init.createKeyed;
      names.add(name);
      if (!createKeyed)
        it.skip(`${name} (skipped on ${init.name}: no audit key support)`, () => {});
      else test(name, () => fn(createKeyed));
    };

    keyedTest(
      "a keyed store hashes with HMAC and records from which event",
      async (createKeyed) => {
        const key = "contract-key-0123456789abcdef";
        const keyed = await createKeyed({ auditKey: key });
        try {
          await keyed.migrate();
          const a = makeRequest();
          const b = makeRequest();
          await keyed.insertRequest(a, [created(a)]);
          await keyed.insertRequest(b, [created(b)]);
          const state = await keyed.auditChainState();
          expect(state).toMatchObject({
            headRowMissing: false,
            keyId: auditKeyId(auditKeyBytes(key)),
          });
          const from = state.keyedFrom ?? Number.NaN;
          const events = await keyed.listAudit({ after: from - 1 });
          expect(events.length).toBeGreaterThanOrEqual(2);
          for (const e of events) {
            expect(e.hash).toBe(hashEvent(e.seq, e, e.prevHash, auditKeyBytes(key)));
            expect(e.hash).not.toBe(hashEvent(e.seq, e, e.prevHash));
          }
          expect(await verifyAuditLog(keyed, { key })).toMatchObject({ ok: true, keyedFrom: from });
          await expect(verifyAuditLog(keyed)).rejects.toMatchObject({ code: "invalid_input" });
        } finally {
          await keyed.close();
        }
      },
    );

    keyedTest("a keyed store writes signed checkpoints of its head", async (createKeyed) => {
      const t = tempDir();
      const file = join(t.dir, "checkpoints");
      const key = "contract-key-0123456789abcdef";
      const keyed = await createKeyed({ auditKey: key, checkpointFile: file });
      try {
        await keyed.migrate();
        const a = makeRequest();
        await keyed.insertRequest(a, [created(a)]);
        const head = await keyed.auditHead();
        await keyed.close();
        const lines = readFileSync(file, "utf8").trim().split("\n");
        expect(JSON.parse(lines[lines.length - 1] ?? "{}")).toMatchObject({
          seq: head?.seq,
          hash: head?.hash,
        });
      } finally {
        await keyed.close();
        t.cleanup();
      }
    });

    outboxContract(test, () => store);
    trustRuleContract(test, () => store);
    pruneContract(test, () => store);

    test("a closed store refuses work", async () => {
      const s = await init.create();
      await s.migrate();
      await s.close();
      await s.close();
      await expect(s.getRequest("x")).rejects.toMatchObject({ code: "closed" });
      // afterEach closes the suite's own store.
    });

    // Once the tests are defined: a skip naming no test of the contract is a mistake.
    const unknown = [...skipped.keys()].filter((name) => !names.has(name));
    if (unknown.length > 0) {
      throw new Error(
        `runStoreContract(${init.name}): skip names no test of the contract: ${unknown.join(", ")}`,
      );
    }
  });
}
