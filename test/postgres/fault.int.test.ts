// Faults: the server kills the store's connections (pg_terminate_backend) while requests are pending
// and a waiter waits; the database goes away and comes back (a loopback proxy in front of it); a
// connection dies just before COMMIT, or just after BEGIN. The store recovers, writes nothing half,
// and says clearly when it cannot reach the database.
import { afterAll, expect, it } from "vitest";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { postgresStore } from "../../src/store/postgres.js";
import { adminQuery, describePg, dropSchema, freshSchema } from "./pg-env.js";
import { startProxy } from "./tcp-proxy.js";

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

await describePg("postgres: faults and recovery", ({ url }) => {
  const schema = freshSchema("airlock_fault");
  const engines: Airlock[] = [];
  const stops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const e of engines) await e.close();
    for (const s of stops) await s();
    await dropSchema(url, schema);
  });
  const count = async (table: string, where = "true", values: unknown[] = []) => {
    const [row] = await adminQuery<{ n: number }>(
      url,
      `SELECT COUNT(*)::int AS n FROM "${schema}".${table} WHERE ${where}`,
      values,
    );
    return row?.n ?? -1;
  };

  it("recovers when the server terminates its connections, and the waiter still resumes", async () => {
    const app = `airlock-fault-${schema.slice(-6)}`;
    const reported: Error[] = [];
    const a = await createAirlock({
      store: postgresStore(url, {
        schema,
        max: 3,
        applicationName: app,
        reconnectMinMs: 50,
        onError: (err) => reported.push(err),
      }),
      sweepMaxSleepMs: 500,
    });
    // B decides while A's connections are down; it has no sweeper, so A's must time r2 out.
    const b = await createAirlock({
      store: postgresStore(url, { schema, max: 2 }),
      sweeper: false,
    });
    engines.push(a, b);

    const r1 = await a.request({ title: "waited on", requester: "agent" });
    // Its deadline comes well after r1 is decided: A's own sweep must not be what wakes w1.
    const r2 = await a.request({ title: "times out", requester: "agent", timeoutMs: 5_000 });
    const w1 = a.waitFor(r1.id, { timeoutMs: 20_000 });
    const w2 = a.waitFor(r2.id, { timeoutMs: 20_000 });
    w2.catch(() => {}); // awaited below; this only keeps a failed run from also reporting it unhandled
    // Several pooled connections open and idle, and the listener in place.
    await Promise.all([a.get(r1.id), a.get(r2.id), a.list({})]);
    const backends = async () =>
      adminQuery<{ pid: number; query: string }>(
        url,
        "SELECT pid, query FROM pg_stat_activity WHERE application_name = $1",
        [app],
      );
    await until("A listens", async () =>
      (await backends()).some((x) => x.query.startsWith("LISTEN")),
    );
    const before = await backends();
    const listenerBefore = before.find((x) => x.query.startsWith("LISTEN"))?.pid;
    expect(before.length).toBeGreaterThanOrEqual(2);

    const killed = await adminQuery<{ ok: boolean }>(
      url,
      "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1",
      [app],
    );
    expect(killed.filter((k) => k.ok).length).toBeGreaterThanOrEqual(before.length);
    // Decided at once, while A is not listening: that NOTIFY never reaches A.
    await b.decide(r1.id, { outcome: "approved", reviewer: "bob" });

    // Only the re-read after the listener reconnects can tell A about it, and it must be prompt.
    const soon = new Promise<never>((_, reject) => {
      setTimeout(() => reject(new Error("w1 did not resume within 2 s of the decision")), 2_000);
    });
    expect((await Promise.race([w1, soon])).status).toBe("approved");
    // A's pool works again (dead idle connections were dropped or retried)...
    const r3 = await a.request({ title: "after the fault", requester: "agent" });
    expect((await a.get(r3.id)).status).toBe("pending");
    // ...its sweeper still fires deadlines, and a second waiter resumes too.
    expect((await w2).status).toBe("timed_out");
    // The listener is back on a new connection, and the loss was reported, password-free.
    await until("A listens again", async () =>
      (await backends()).some((x) => x.query.startsWith("LISTEN") && x.pid !== listenerBefore),
    );
    expect(reported.length).toBeGreaterThan(0);
    for (const e of reported) {
      expect(e).toMatchObject({ code: "store_unavailable" });
      expect(e.message).toContain("PostgreSQL at postgres://");
    }
    expect(await a.verifyAudit()).toMatchObject({ ok: true });
  });

  it("fails clearly while the database is away, writes nothing, and recovers", async () => {
    const proxy = await startProxy(Number(new URL(url).port || 5432));
    stops.push(() => proxy.stop());
    const viaProxy = proxy.url(url);
    const e = await createAirlock({
      store: postgresStore(viaProxy, { schema, max: 2, connectionTimeoutMs: 1_000 }),
      sweeper: false,
    });
    engines.push(e);
    const r = await e.request({ title: "survives an outage", requester: "agent" });
    const waiting = e.waitFor(r.id, { timeoutMs: 20_000 });
    const requests = await count("requests");
    const events = await count("audit");

    await proxy.stop();
    const refused = await e.request({ title: "during the outage", requester: "agent" }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toMatchObject({ code: "store_unavailable" });
    expect((refused as Error).message).toContain(`127.0.0.1:${proxy.port}`);
    await expect(e.decide(r.id, { outcome: "approved", reviewer: "alice" })).rejects.toMatchObject({
      code: "store_unavailable",
    });
    expect(await count("requests")).toBe(requests);
    expect(await count("audit")).toBe(events);

    await proxy.start();
    const decided = await e.decide(r.id, { outcome: "approved", reviewer: "alice" });
    expect(decided.status).toBe("approved");
    expect((await waiting).status).toBe("approved");
    expect(await count("audit")).toBe(events + 1);
  });

  it("writes nothing when the connection drops at COMMIT, and says the outcome is unknown", async () => {
    const proxy = await startProxy(Number(new URL(url).port || 5432));
    stops.push(() => proxy.stop());
    const e = await createAirlock({
      store: postgresStore(proxy.url(url), { schema, max: 2 }),
      sweeper: false,
    });
    engines.push(e);
    const r = await e.request({ title: "decided twice", requester: "agent" });
    const events = await count("audit", "request_id = $1", [r.id]);

    const cut = proxy.cutWhen("COMMIT\0");
    const failed = await e.decide(r.id, { outcome: "approved", reviewer: "alice" }).then(
      () => undefined,
      (err: unknown) => err,
    );
    await cut;
    expect(failed).toMatchObject({ code: "store_unavailable" });
    expect((failed as Error).message).toMatch(/unknown/);
    // PostgreSQL rolled the transaction back: still pending, no decision event.
    expect((await e.get(r.id)).status).toBe("pending");
    expect(await count("audit", "request_id = $1", [r.id])).toBe(events);
    // The caller retries; the compare-and-set makes that safe.
    expect((await e.decide(r.id, { outcome: "approved", reviewer: "alice" })).status).toBe(
      "approved",
    );
    expect(await count("audit", "request_id = $1", [r.id])).toBe(events + 1);
  });

  it("retries once, on a fresh connection, when a connection dies before COMMIT", async () => {
    const proxy = await startProxy(Number(new URL(url).port || 5432));
    stops.push(() => proxy.stop());
    const e = await createAirlock({
      store: postgresStore(proxy.url(url), { schema, max: 2 }),
      sweeper: false,
    });
    engines.push(e);
    const accepted = proxy.accepted;
    const cut = proxy.cutWhen("BEGIN\0");
    const r = await e.request({ key: "retried-once", title: "retried", requester: "agent" });
    await cut;
    expect(proxy.accepted).toBeGreaterThan(accepted);
    expect(await count("requests", "key = $1", ["retried-once"])).toBe(1);
    expect(await count("audit", "request_id = $1", [r.id])).toBe(1);
    expect(await e.verifyAudit()).toMatchObject({ ok: true });
  });
});
