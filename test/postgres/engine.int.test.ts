// Two engines in one process, each with its own store object and pool, on one schema: to the
// database they are two processes. Replays, racing decisions, escalations and the event stream are
// settled by PostgreSQL, not by shared memory.
import { afterAll, beforeAll, expect, it } from "vitest";
import type { AuditEvent } from "../../src/core/schemas.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { postgresStore } from "../../src/store/postgres.js";
import { adminQuery, describePg, dropSchema, freshSchema } from "./pg-env.js";

await describePg("postgres: two engines on one schema", ({ url }) => {
  const schema = freshSchema("airlock_engines");
  let a: Airlock;
  let b: Airlock;
  beforeAll(async () => {
    [a, b] = await Promise.all([
      createAirlock({ store: postgresStore(url, { schema, max: 4 }), sweepMaxSleepMs: 200 }),
      createAirlock({ store: postgresStore(url, { schema, max: 4 }), sweepMaxSleepMs: 200 }),
    ]);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await dropSchema(url, schema);
  });

  it("creates one request for one key, whichever engine asks first", async () => {
    const input = { key: "deploy-42", title: "deploy 42", requester: "agent" };
    const results = await Promise.all([
      a.request(input),
      b.request(input),
      a.request(input),
      b.request(input),
    ]);
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    const rows = await adminQuery(url, `SELECT id FROM "${schema}".requests WHERE key = $1`, [
      "deploy-42",
    ]);
    expect(rows).toHaveLength(1);
    const events = await a.audit({ requestId: results[0]?.id });
    expect(events.map((e) => e.type)).toEqual(["created"]);
    await expect(b.request({ ...input, title: "something else" })).rejects.toMatchObject({
      code: "conflict",
    });
  });

  it("lets exactly one of two racing deciders win; the loser learns the winner", async () => {
    for (let round = 0; round < 10; round++) {
      const r = await a.request({ title: `race ${round}`, requester: "agent" });
      const settled = await Promise.allSettled([
        a.decide(r.id, { outcome: "approved", reviewer: "alice" }),
        b.decide(r.id, { outcome: "rejected", reviewer: "bob" }),
      ]);
      const won = settled.filter((s) => s.status === "fulfilled");
      const lost = settled.filter((s) => s.status === "rejected");
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      const winner = (won[0] as PromiseFulfilledResult<{ decision?: { reviewer: string } }>).value;
      expect((lost[0] as PromiseRejectedResult).reason).toMatchObject({
        code: "conflict",
        decision: { reviewer: winner.decision?.reviewer },
      });
      const events = await b.audit({ requestId: r.id });
      expect(events.filter((e) => e.type === "decided")).toHaveLength(1);
    }
  });

  it("escalates once and times out once with two sweepers", async () => {
    const r = await a.request({
      title: "needs someone",
      requester: "agent",
      timeoutMs: 300,
      onTimeout: { escalate: { approvers: ["oncall"], timeoutMs: 300 } },
    });
    const done = await b.waitFor(r.id, { timeoutMs: 10_000 });
    expect(done.status).toBe("timed_out");
    const types = (await a.audit({ requestId: r.id })).map((e) => e.type);
    expect(types).toEqual(["created", "escalated", "timed_out"]);
  });

  it("streams events written by the other engine, in order", async () => {
    const controller = new AbortController();
    const seen: AuditEvent[] = [];
    const reading = (async () => {
      for await (const e of a.events({ signal: controller.signal })) {
        seen.push(e);
        if (seen.length === 2) controller.abort();
      }
    })();
    // Let the stream take its starting position before B writes.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const r = await b.request({ title: "watched", requester: "agent" });
    await b.decide(r.id, { outcome: "approved", reviewer: "carol" });
    const timer = setTimeout(() => controller.abort(), 5_000);
    await reading;
    clearTimeout(timer);
    expect(seen.map((e) => [e.type, e.requestId])).toEqual([
      ["created", r.id],
      ["decided", r.id],
    ]);
    expect(await a.verifyAudit()).toMatchObject({ ok: true });
  });
});
