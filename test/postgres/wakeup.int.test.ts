// Cross-process wake-ups: a waiter in process B resumes when process A decides, or when A's sweeper
// times the request out. B runs no sweeper and never polls, so only LISTEN/NOTIFY can wake it.
import { afterAll, expect, it } from "vitest";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { postgresStore } from "../../src/store/postgres.js";
import { type Child, type Message, startChild } from "./child.js";
import { adminQuery, describePg, dropSchema, freshSchema } from "./pg-env.js";

interface Resumed extends Message {
  id: string;
  status: string;
  reviewer: string | null;
  at: number;
}

await describePg("postgres: cross-process wake-ups", ({ url }) => {
  const schema = freshSchema("airlock_wakeup");
  const app = `airlock-waiter-${schema.slice(-6)}`;
  let a: Airlock | undefined;
  let b: Child | undefined;
  afterAll(async () => {
    await b?.stop();
    await a?.close();
    await dropSchema(url, schema);
  });

  async function processB(): Promise<Child> {
    if (b) return b;
    a = await createAirlock({ store: postgresStore(url, { schema, max: 3 }) });
    b = startChild("./waiter-child.ts", { PG_URL: url, PG_SCHEMA: schema, PG_APP: app });
    await b.next("ready", 30_000);
    return b;
  }

  it("resumes a waiter in another process when this one decides", async () => {
    const child = await processB();
    const engine = a as Airlock;
    const r = await engine.request({ title: "deploy?", requester: "agent" });
    child.send({ type: "wait", id: r.id });
    await child.next("waiting");
    // B is now idle, its listener connected (LISTEN shows as its connection's last statement).
    await until(async () => {
      const rows = await adminQuery(
        url,
        "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND query ILIKE 'LISTEN%'",
        [app],
      );
      return rows.length === 1;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const decidedAt = Date.now();
    await engine.decide(r.id, { outcome: "approved", reviewer: "alice" });
    const resumed = await child.next<Resumed>("resumed", 5_000);
    expect(resumed).toMatchObject({ id: r.id, status: "approved", reviewer: "alice" });
    expect(resumed.at - decidedAt).toBeLessThan(2_000);
  });

  it("resumes a waiter in another process when this one's sweeper times the request out", async () => {
    const child = await processB();
    const engine = a as Airlock;
    const r = await engine.request({ title: "deploy?", requester: "agent", timeoutMs: 500 });
    child.send({ type: "wait", id: r.id });
    await child.next("waiting");
    const resumed = await child.next<Resumed>("resumed", 10_000);
    expect(resumed).toMatchObject({ id: r.id, status: "timed_out", reviewer: "system" });
    expect(resumed.at).toBeGreaterThanOrEqual(r.deadline ?? Number.POSITIVE_INFINITY);
  });
});

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
