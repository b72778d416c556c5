// Pending quotas on the gate round trip (issue 37). The create of `gateRoundTrip` three ways, in
// interleaved rounds on each store (SQLite file; PostgreSQL when reachable, a fresh schema dropped
// afterwards), one gate at a time and 64 in flight:
// - plain: no quota (what an in-process engine does, and `sqlite.roundtrips_per_s`);
// - quota: the server's default quota (1000 requests, 64 MiB), checked by the store in the insert's
//   own transaction (what `POST /v1/requests` does since issue 37);
// - read_first: the scheme it replaced, a `pendingUsage` read and then an unchecked insert (not
//   atomic: parallel creates passed it).
import { join } from "node:path";
import type { PendingQuota } from "../src/core/store.js";
import { type Airlock, createAirlock } from "../src/engine/engine.js";
import { postgresStore } from "../src/store/postgres.js";
import { sqliteStore } from "../src/store/sqlite.js";
import { tempDir } from "../test/helpers.js";
import { bounded, type Figure } from "./figures.js";
import { findDatabase } from "./postgres.js";
import { concurrentRoundTrips, gateRoundTrip } from "./round-trip.js";

/** The server's defaults (src/server/limits.ts). */
const QUOTA: PendingQuota = { count: 1000, bytes: 64 * 1024 * 1024 };
const ROUNDS = 3;
const MAX_MS = 2_500;
const MAX_TRIPS = 20_000;
const IN_FLIGHT = 64;

type Variant = "plain" | "quota" | "read_first";
const VARIANTS: Variant[] = ["plain", "quota", "read_first"];

export async function benchQuota(): Promise<Figure[]> {
  const t = tempDir("airlock-bench-quota-");
  const out: Figure[] = [];
  try {
    const sqlite = await createAirlock({ store: sqliteStore(join(t.dir, "quota.db")) });
    try {
      out.push(...(await measure("sqlite", sqlite)));
    } finally {
      await sqlite.close();
    }
  } finally {
    t.cleanup();
  }
  const url = await findDatabase("quota");
  if (!url) return out;
  const schema = `airlock_bench_quota_${Date.now().toString(36)}`;
  const store = postgresStore(url, { schema });
  const pg = await createAirlock({ store });
  try {
    out.push(...(await measure("postgres", pg)));
  } finally {
    await pg.close();
    const { default: pgLib } = await import("pg");
    const admin = new pgLib.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
  return out;
}

/** The engine with its create done one of the three ways. */
function creatingWith(engine: Airlock, variant: Variant): Airlock {
  const request: Airlock["request"] = async (input) => {
    if (variant === "quota") return engine.request(input, { quota: QUOTA });
    if (variant === "read_first") {
      const used = await engine.pendingUsage(input.requester ?? "anonymous");
      if (used.count + 1 > QUOTA.count) throw new Error("bench: over quota");
    }
    return engine.request(input);
  };
  return Object.assign(Object.create(engine) as Airlock, { request });
}

async function measure(store: string, engine: Airlock): Promise<Figure[]> {
  const sums = new Map<string, number>();
  const add = (name: string, v: number) => sums.set(name, (sums.get(name) ?? 0) + v / ROUNDS);
  await bounded(200, 2_000, () => gateRoundTrip(engine).then(() => undefined));
  for (let round = 0; round < ROUNDS; round++) {
    for (const variant of VARIANTS) {
      const e = creatingWith(engine, variant);
      const seq = await bounded(MAX_TRIPS, MAX_MS, () => gateRoundTrip(e).then(() => undefined));
      add(`quota.${store}_${variant}_roundtrips_per_s`, (seq.n / seq.ms) * 1000);
      add(
        `quota.${store}_${variant}_concurrent64_roundtrips_per_s`,
        await concurrentRoundTrips(e, IN_FLIGHT, MAX_TRIPS, MAX_MS),
      );
    }
  }
  return [...sums].map(([name, value]) => ({ name, value, unit: "1/s" }));
}
