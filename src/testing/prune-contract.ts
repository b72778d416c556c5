// The Store contract's part on retention (Store.prune, auditMarks, saveVerifiedMark): run by
// `runStoreContract`. A store that leaves these optional methods out names the tests in `skip`,
// with its reason.
import { expect } from "vitest";
import { verifyAuditLog } from "../audit/verify.js";
import { hashArgs } from "../core/hash.js";
import type { ApprovalRequest } from "../core/schemas.js";
import type { PruneOptions, PruneResult, Store } from "../core/store.js";

let counter = 0;
/** A pending request last changed at `at`. */
function pending(at: number): ApprovalRequest {
  counter++;
  const id = `req_prune_${String(counter).padStart(8, "0")}`;
  return {
    id,
    action: "files.write",
    title: `prune ${counter}`,
    args: { n: counter },
    argsHash: hashArgs({ n: counter }),
    items: [],
    allowed: ["approve", "reject"],
    level: "full",
    requester: "agent",
    approvers: [],
    quorum: 1,
    onTimeout: "reject",
    escalations: 0,
    correlationId: `corr-prune-${counter}`,
    metadata: {},
    status: "pending",
    decisions: [],
    inputHash: `input-prune-${counter}`,
    createdAt: at,
    updatedAt: at,
    version: 1,
  };
}

async function create(store: Store, at: number): Promise<ApprovalRequest> {
  const r = pending(at);
  await store.insertRequest(r, [
    { type: "created", requestId: r.id, actor: r.requester, at, data: { title: r.title } },
  ]);
  return r;
}

async function approve(store: Store, r: ApprovalRequest, at: number): Promise<ApprovalRequest> {
  const next: ApprovalRequest = { ...r, status: "approved", version: r.version + 1, updatedAt: at };
  const t = await store.transition(next, r.version, [
    { type: "decided", requestId: r.id, actor: "alice", at, data: { outcome: "approved" } },
  ]);
  if (!t.ok) throw new Error(`could not approve ${r.id}`);
  return next;
}

function prune(store: Store, options: PruneOptions): Promise<PruneResult> {
  if (!store.prune || !store.auditMarks) {
    throw new Error(`the ${store.kind} store has no prune methods: name these tests in skip`);
  }
  return store.prune(options);
}

const OLD = 1_700_000_000_000;
const CUTOFF = OLD + 10_000_000;
const RECENT = CUTOFF + 10_000_000;

export function pruneContract(
  test: (name: string, fn: () => Promise<void>) => void,
  current: () => Store,
): void {
  test("prune deletes old terminal requests and a prefix of the log, up to the first event it must keep", async () => {
    const store = current();
    const a = await approve(store, await create(store, OLD), OLD + 1);
    const b = await approve(store, await create(store, OLD + 2), OLD + 3);
    const p = await create(store, OLD + 4); // still pending: its events and all after are kept
    const c = await approve(store, await create(store, OLD + 5), OLD + 6);
    const r = await approve(store, await create(store, RECENT), RECENT + 1);

    const result = await prune(store, { before: CUTOFF });
    expect(result).toMatchObject({ requests: 2, events: 4 });
    expect(result.anchor?.seq).toBe(4);
    expect(await store.getRequest(a.id)).toBeUndefined();
    expect(await store.getRequest(b.id)).toBeUndefined();
    for (const kept of [p, c, r]) expect((await store.getRequest(kept.id))?.id).toBe(kept.id);
    const [first] = await store.listAudit({ limit: 1 });
    expect(first).toMatchObject({ seq: 5, requestId: p.id, type: "created" });

    const verified = await verifyAuditLog(store);
    expect(verified).toMatchObject({ ok: true, count: 5, anchorSeq: 4, startedAt: "anchor" });
    // Nothing more is prunable while p is pending: a second run changes nothing.
    expect(await prune(store, { before: CUTOFF })).toMatchObject({ requests: 0, events: 0 });
  });

  test("prune with a cutoff before every change deletes nothing and writes no anchor", async () => {
    const store = current();
    await approve(store, await create(store, RECENT), RECENT + 1);
    const result = await prune(store, { before: CUTOFF });
    expect(result).toEqual({ requests: 0, events: 0, outbox: 0 });
    expect((await store.auditMarks?.())?.anchor).toBeUndefined();
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true, count: 2, startedAt: "genesis" });
  });

  test("prune in small batches ends where one batch would, and the chain continues after it", async () => {
    const store = current();
    for (let i = 0; i < 5; i++)
      await approve(store, await create(store, OLD + 2 * i), OLD + 2 * i + 1);
    const result = await prune(store, { before: CUTOFF, batchEvents: 3 });
    expect(result).toMatchObject({ requests: 5, events: 10, anchor: { seq: 10 } });
    expect(await store.listAudit({})).toEqual([]);
    // Every event was pruned: the next one still follows the last pruned event.
    const next = await create(store, RECENT);
    const [e] = await store.listAudit({ requestId: next.id });
    expect(e?.seq).toBe(11);
    expect(e?.prevHash).toBe(result.anchor?.hash);
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true, count: 1, anchorSeq: 10 });
  });

  test("a request with an event after a kept event holds the cut before its own first event", async () => {
    const store = current();
    const a = await approve(store, await create(store, OLD), OLD + 1);
    const b = await approve(store, await create(store, OLD + 2), OLD + 3);
    const p = await create(store, OLD + 4);
    // `a` is viewed after p was created: pruning a's first events would leave a's later one behind.
    await store.appendAudit([
      { type: "viewed", requestId: a.id, actor: "bob", at: OLD + 9, data: {} },
    ]);
    expect(await prune(store, { before: CUTOFF })).toMatchObject({ requests: 0, events: 0 });
    for (const kept of [a, b, p]) expect((await store.getRequest(kept.id))?.id).toBe(kept.id);
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true, count: 6 });
  });

  test("verify with resume starts at the mark a previous run recorded", async () => {
    const store = current();
    await approve(store, await create(store, RECENT), RECENT + 1);
    const full = await verifyAuditLog(store, { recordMark: true });
    expect(full).toMatchObject({ ok: true, count: 2, startedAt: "genesis" });
    expect((await store.auditMarks?.())?.verified?.seq).toBe(2);
    await approve(store, await create(store, RECENT + 2), RECENT + 3);
    const resumed = await verifyAuditLog(store, { resume: true, recordMark: true });
    expect(resumed).toMatchObject({ ok: true, count: 2, from: 2, startedAt: "mark", requests: 1 });
    expect((await store.auditMarks?.())?.verified?.seq).toBe(4);
    // Without resume everything is checked again.
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true, count: 4 });
  });
}
