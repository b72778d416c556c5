// Three processes on one PostgreSQL schema: 2,000 requests created (and replayed) by all three,
// deadlines spread over a few seconds, two deciders per request racing each other and three timeout
// sweepers. Afterwards every request has exactly one terminal decision, escalations happened at most
// once, the audit chain verifies, and every cross-process waiter saw the stored outcome.
import { afterAll, expect, it } from "vitest";
import { createAirlock } from "../../src/engine/engine.js";
import { postgresStore } from "../../src/store/postgres.js";
import { POSTGRES_MIGRATIONS } from "../../src/store/postgres-migrations.js";
import { type Child, type Message, startChild } from "./child.js";
import { adminQuery, describePg, dropSchema, freshSchema } from "./pg-env.js";
import { escalates, TOTAL, undecided, WORKERS } from "./race-plan.js";

interface Done extends Message {
  won: number;
  lost: number;
  errors: string[];
  errorCount: number;
  waited: Record<string, string>;
  stillPending: number;
  createdMs: number;
  totalMs: number;
}

await describePg("postgres: three processes race deciders and timeouts", ({ url }) => {
  const schema = freshSchema("airlock_race");
  const children: Child[] = [];
  afterAll(async () => {
    await Promise.all(children.map((c) => c.stop()));
    await dropSchema(url, schema);
  });

  it("ends every request exactly once, across processes", { timeout: 120_000 }, async () => {
    // The children start on a schema that does not exist yet: they migrate it concurrently.
    for (let i = 0; i < WORKERS; i++) {
      children.push(
        startChild("./race-child.ts", {
          PG_URL: url,
          PG_SCHEMA: schema,
          WORKER_INDEX: String(i),
        }),
      );
    }
    await Promise.all(children.map((c) => c.next("ready", 30_000)));
    for (const c of children) c.send({ type: "go" });
    const reports = await Promise.all(children.map((c) => c.next<Done>("done", 80_000)));
    for (const c of children) c.send({ type: "exit" });
    expect(await Promise.all(children.map((c) => c.exited))).toEqual([0, 0, 0]);

    for (const r of reports) {
      expect(r.errors).toEqual([]);
      expect(r.stillPending).toBe(0);
    }

    // Each schema was migrated exactly once although three processes started on it together.
    const versions = await adminQuery(url, `SELECT version FROM "${schema}".airlock_migrations`);
    expect(versions).toHaveLength(POSTGRES_MIGRATIONS.length);

    const rows = await adminQuery<{ k: number; id: string; status: string; decisions: number }>(
      url,
      `SELECT (doc::jsonb->'metadata'->>'k')::int AS k, id, status,
         jsonb_array_length(doc::jsonb->'decisions') AS decisions
       FROM "${schema}".requests`,
    );
    expect(rows).toHaveLength(TOTAL);
    const byStatus = new Map<string, number>();
    for (const r of rows) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    const decided = (byStatus.get("approved") ?? 0) + (byStatus.get("rejected") ?? 0);
    const timedOut = byStatus.get("timed_out") ?? 0;
    expect(byStatus.get("pending") ?? 0).toBe(0);
    expect(decided + timedOut).toBe(TOTAL);
    // Both sides of the race won sometimes, and deciders lost to each other or to the timeout.
    expect(decided).toBeGreaterThan(0);
    expect(timedOut).toBeGreaterThan(0);
    const won = reports.reduce((s, r) => s + r.won, 0);
    const lost = reports.reduce((s, r) => s + r.lost, 0);
    expect(won).toBe(decided);
    expect(lost).toBeGreaterThan(0);

    // Per request, from the audit log: one creation, one terminal event, at most one escalation.
    const events = await adminQuery<{
      request_id: string;
      created: number;
      terminal: number;
      escalated: number;
    }>(
      url,
      `SELECT request_id,
         COUNT(*) FILTER (WHERE type = 'created')::int AS created,
         COUNT(*) FILTER (WHERE type IN ('decided', 'timed_out', 'cancelled'))::int AS terminal,
         COUNT(*) FILTER (WHERE type = 'escalated')::int AS escalated
       FROM "${schema}".audit GROUP BY request_id`,
    );
    expect(events).toHaveLength(TOTAL);
    const audit = new Map(events.map((e) => [e.request_id, e]));
    let escalations = 0;
    for (const r of rows) {
      const e = audit.get(r.id);
      expect(e, r.id).toMatchObject({ created: 1, terminal: 1 });
      expect(r.decisions, r.id).toBe(1);
      if (!escalates(r.k)) expect(e?.escalated, r.id).toBe(0);
      else {
        expect(e?.escalated, r.id).toBeLessThanOrEqual(1);
        // Timing out an escalating request takes its escalation first.
        if (r.status === "timed_out") expect(e?.escalated, r.id).toBe(1);
        escalations += e?.escalated ?? 0;
      }
      if (undecided(r.k)) expect(r.status, r.id).toBe("timed_out");
    }
    expect(escalations).toBeGreaterThan(0);

    // Every waiter (a third of the requests in each process) resumed with the stored outcome,
    // whichever process decided or timed the request out.
    const status = new Map(rows.map((r) => [r.id, r.status]));
    const waited = reports.flatMap((r) => Object.entries(r.waited));
    expect(waited.length).toBe(TOTAL);
    for (const [id, s] of waited) expect(s, id).toBe(status.get(id));

    // One valid chain, with as many events as rows in the log.
    const [{ n } = { n: 0 }] = await adminQuery<{ n: number }>(
      url,
      `SELECT COUNT(*)::int AS n FROM "${schema}".audit`,
    );
    const engine = await createAirlock({
      store: postgresStore(url, { schema, max: 2 }),
      sweeper: false,
    });
    try {
      const verdict = await engine.verifyAudit();
      expect(verdict).toMatchObject({ ok: true, count: n });
    } finally {
      await engine.close();
    }
    process.stderr.write(
      `[race] decided ${decided}, timed out ${timedOut}, escalations ${escalations}, lost races ${lost}, ` +
        `creation ${Math.max(...reports.map((r) => r.createdMs))} ms, total ${Math.max(...reports.map((r) => r.totalMs))} ms\n`,
    );
  });
});
