// Store.prune on PostgreSQL, keyed: old requests and their events go, the pending one stays, the
// anchor is signed, and an edited anchor or rows deleted past it fail verification.
import { afterAll, afterEach, expect, it } from "vitest";
import { verifyAuditLog } from "../../src/audit/verify.js";
import type { OutboxDraft } from "../../src/core/outbox.js";
import type { Store } from "../../src/core/store.js";
import { postgresStore } from "../../src/store/postgres.js";
import { createAndDecide, request } from "../audit/fixtures.js";
import { adminQuery, describePg, dropSchema, freshSchema } from "./pg-env.js";

const KEY = "k".repeat(32);
const CUTOFF = 1_800_000_000_000;

const message = (id: string, requestId: string): OutboxDraft => ({
  id,
  target: "hook",
  topic: "created",
  requestId,
  payload: { id: requestId },
});

await describePg("prune on postgres", ({ url }) => {
  const schemas: string[] = [];
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    for (const s of schemas) await dropSchema(url, s);
  });
  const open = async (): Promise<{ store: Store; schema: string }> => {
    const schema = freshSchema("airlock_prune");
    schemas.push(schema);
    const store = postgresStore(url, { schema, max: 3, auditKey: KEY });
    cleanups.push(() => store.close());
    await store.migrate();
    return { store, schema };
  };

  it("prunes old requests with their outbox rows up to the pending one, in batches", async () => {
    const { store, schema } = await open();
    const old = request("req_old_outbox");
    await store.insertRequest(
      old,
      [{ type: "created", requestId: old.id, actor: old.requester, at: old.createdAt, data: {} }],
      [message("m_old", old.id)],
    );
    await store.transition(
      { ...old, status: "approved", version: 2, updatedAt: old.createdAt + 1 },
      1,
      [
        {
          type: "decided",
          requestId: old.id,
          actor: "alice",
          at: old.createdAt + 1,
          data: { outcome: "approved" },
        },
      ],
    );
    for (let i = 0; i < 3; i++) await createAndDecide(store, `req_old${i}`, "approved");
    const p = request("req_pending");
    await store.insertRequest(
      p,
      [{ type: "created", requestId: p.id, actor: p.requester, at: p.createdAt, data: {} }],
      [message("m_pending", p.id)],
    );
    await createAndDecide(store, "req_late", "rejected");

    const result = await store.prune?.({ before: CUTOFF, batchEvents: 3 });
    // m_old was never delivered: it stays (a pruned request's pending message is not lost).
    expect(result).toMatchObject({ requests: 4, events: 8, outbox: 0, anchor: { seq: 8 } });
    const ids = await adminQuery<{ id: string }>(
      url,
      `SELECT id FROM "${schema}".requests ORDER BY id`,
    );
    expect(ids.map((r) => r.id)).toEqual(["req_late", "req_pending"]);
    const outbox = await adminQuery<{ id: string }>(
      url,
      `SELECT id FROM "${schema}".outbox ORDER BY id`,
    );
    expect(outbox.map((r) => r.id)).toEqual(["m_old", "m_pending"]);
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({
      ok: true,
      count: 3,
      anchorSeq: 8,
    });
    // And the chain continues after the pruned prefix.
    await createAndDecide(store, "req_after", "approved");
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({ ok: true, count: 5 });
  });

  it("an edited anchor, or rows deleted past it, fail verification", async () => {
    const { store, schema } = await open();
    for (let i = 0; i < 3; i++) await createAndDecide(store, `req_old${i}`, "approved");
    const p = request("req_pending");
    await store.insertRequest(p, [
      { type: "created", requestId: p.id, actor: p.requester, at: p.createdAt, data: {} },
    ]);
    await createAndDecide(store, "req_late", "rejected");
    await store.prune?.({ before: CUTOFF });
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({ ok: true, anchorSeq: 6 });

    await adminQuery(url, `DELETE FROM "${schema}".audit WHERE seq = 7`);
    expect(await verifyAuditLog(store, { key: KEY })).toMatchObject({ ok: false, badSeq: 8 });

    // Hiding it by moving the anchor to #7 needs the key to sign it.
    await adminQuery(
      url,
      `UPDATE "${schema}".audit_marks SET seq = 7, hash = (SELECT prev_hash FROM "${schema}".audit WHERE seq = 8) WHERE kind = 'anchor'`,
    );
    const moved = await verifyAuditLog(store, { key: KEY });
    expect(moved).toMatchObject({
      ok: false,
      badSeq: 7,
      reason: expect.stringMatching(/signature/),
    });
  });

  it("keeps everything when a pending request comes first", async () => {
    const { store } = await open();
    const p = request("req_pending_first");
    await store.insertRequest(p, [
      { type: "created", requestId: p.id, actor: p.requester, at: p.createdAt, data: {} },
    ]);
    await createAndDecide(store, "req_old", "approved");
    expect(await store.prune?.({ before: CUTOFF })).toEqual({ requests: 0, events: 0, outbox: 0 });
    expect(await store.getRequest("req_old")).toBeDefined();
  });
});
