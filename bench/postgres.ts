// Gate round trips on the PostgreSQL store (loopback only, a fresh schema dropped afterwards):
// - postgres.roundtrips_per_s: create → waiter registered → decide → waiter resumed, one process,
//   one gate at a time, plus the same with 8 and with 64 gates in flight; one at a time and 64 in
//   flight run in blocks interleaved with the bare cycle's (postgres-bare.ts), for their ratios;
// - postgres.resume_p99_ms: decide in this process, the waiter in a child process (this same file,
//   started with AIRLOCK_BENCH_PG_ROLE=waiter), timed from before decide() to the child's message
//   that its waitFor() resumed — so it includes the decide itself, NOTIFY, and the IPC hop.
// Without a reachable PostgreSQL the suite prints why on stderr and reports no figures.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { type Airlock, createAirlock } from "../src/engine/engine.js";
import { postgresStore } from "../src/store/postgres.js";
import {
  type BenchOptions,
  bounded,
  type Figure,
  interleaved,
  percentile,
  perSecond,
} from "./figures.js";
import { openBarePostgres } from "./postgres-bare.js";
import { concurrentRoundTrips, gateRoundTrip, roundTripsInFlight } from "./round-trip.js";

const IN_FLIGHT = 64;
interface Sizes {
  /** Round trips one at a time at most, and with 64 in flight. */
  rounds: number;
  concurrentRounds: number;
  /** Each measured loop's bound in time. */
  maxMs: number;
  /** Cross-process resumes timed, and their bound in time. */
  resumeSamples: number;
  resumeMaxMs: number;
}
const FULL: Sizes = {
  rounds: 5_000,
  concurrentRounds: 20_000,
  maxMs: 5_000,
  resumeSamples: 300,
  resumeMaxMs: 10_000,
};
/** `--quick` (the guard's run): the same loops, shorter. */
const QUICK: Sizes = {
  rounds: 2_000,
  concurrentRounds: 8_000,
  maxMs: 2_000,
  resumeSamples: 50,
  resumeMaxMs: 2_000,
};
const CANDIDATES = [
  "postgres://postgres@127.0.0.1:5432/test",
  "postgres://root@127.0.0.1:5432/test",
];

type ToChild = { id: string } | { stop: true };
type FromChild = { ready: true } | { waiting: string } | { resumed: string; status: string };

export async function benchPostgres(options: BenchOptions = {}): Promise<Figure[]> {
  const s = options.quick ? QUICK : FULL;
  const url = await findDatabase("postgres");
  if (!url) return [];
  const schema = `airlock_bench_${randomBytes(5).toString("hex")}`;
  const engine = await createAirlock({ store: postgresStore(url, { schema }) });
  let child: ChildProcess | undefined;
  try {
    const m = await engineAndBare(engine, url, schema, s);

    child = startWaiter(url, schema);
    const latencies = await crossProcessResume(engine, child, s);
    latencies.sort((a, b) => a - b);
    return [
      { name: "postgres.roundtrips_per_s", value: m.sequentialPerS, unit: "1/s" },
      { name: "postgres.concurrent8_roundtrips_per_s", value: m.concurrent8PerS, unit: "1/s" },
      { name: "postgres.concurrent64_roundtrips_per_s", value: m.concurrent64PerS, unit: "1/s" },
      // The same run's bare limit: three durable single-statement transactions per cycle.
      { name: "postgres.bare_roundtrips_per_s", value: m.bareSequentialPerS, unit: "1/s" },
      {
        name: "postgres.bare_concurrent64_roundtrips_per_s",
        value: m.bareConcurrent64PerS,
        unit: "1/s",
      },
      {
        name: "postgres.engine_to_bare_ratio",
        value: m.sequentialPerS / m.bareSequentialPerS,
        unit: "ratio",
      },
      {
        name: "postgres.concurrent64_to_bare_ratio",
        value: m.concurrent64PerS / m.bareConcurrent64PerS,
        unit: "ratio",
      },
      { name: "postgres.resume_p50_ms", value: percentile(latencies, 0.5), unit: "ms" },
      { name: "postgres.resume_p99_ms", value: percentile(latencies, 0.99), unit: "ms" },
    ];
  } finally {
    child?.kill();
    await engine.close();
    await dropSchema(url, schema);
  }
}

/** Blocks the measured loops are cut into, interleaved (engine and bare, one at a time and 64). */
const BLOCKS = 4;

/** The engine's round trips and the bare cycle, one at a time and 64 in flight, in interleaved
 * blocks so that each ratio compares the same moments of the machine; then the engine with 8. */
async function engineAndBare(engine: Airlock, url: string, schema: string, s: Sizes) {
  const bare = await openBarePostgres(url, schema);
  try {
    const round = () => gateRoundTrip(engine).then(() => undefined);
    await bounded(Math.max(50, Math.floor(s.rounds / 20)), 2_000, round);
    const [rounds, many, ms] = [s.rounds / BLOCKS, s.concurrentRounds / BLOCKS, s.maxMs / BLOCKS];
    const totals = await interleaved(BLOCKS, {
      sequential: () => bounded(rounds, ms, round),
      bareSequential: () => bare.sequential(rounds, ms),
      concurrent64: () => roundTripsInFlight(engine, IN_FLIGHT, many, ms),
      bareConcurrent64: () => bare.concurrent(IN_FLIGHT, many, ms),
    });
    return {
      sequentialPerS: perSecond(totals.sequential),
      bareSequentialPerS: perSecond(totals.bareSequential),
      concurrent64PerS: perSecond(totals.concurrent64),
      bareConcurrent64PerS: perSecond(totals.bareConcurrent64),
      concurrent8PerS: await concurrentRoundTrips(engine, 8, s.rounds, s.maxMs),
    };
  } finally {
    await bare.close();
  }
}

async function crossProcessResume(
  engine: Airlock,
  child: ChildProcess,
  s: Sizes,
): Promise<number[]> {
  const inbox = messages(child);
  await inbox.next((m) => "ready" in m);
  const latencies: number[] = [];
  const WARMUP = 10;
  await bounded(s.resumeSamples + WARMUP, s.resumeMaxMs, async (i) => {
    const r = await engine.request({ title: "bench", requester: "agent", timeoutMs: 600_000 });
    child.send({ id: r.id } satisfies ToChild);
    await inbox.next((m) => "waiting" in m && m.waiting === r.id);
    // The child registered its waiter right after sending "waiting"; give it that moment.
    await new Promise((resolve) => setTimeout(resolve, 2));
    const t0 = performance.now();
    const resumed = inbox.next((m) => "resumed" in m && m.resumed === r.id);
    await engine.decide(r.id, { outcome: "approved", reviewer: "alice" });
    const m = await resumed;
    if (!("status" in m) || m.status !== "approved") {
      throw new Error("bench: the child's gate did not resume approved");
    }
    if (i >= WARMUP) latencies.push(performance.now() - t0);
  });
  child.send({ stop: true } satisfies ToChild);
  return latencies;
}

function startWaiter(url: string, schema: string): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url)], {
    env: {
      ...process.env,
      AIRLOCK_BENCH_PG_ROLE: "waiter",
      AIRLOCK_BENCH_PG_URL: url,
      AIRLOCK_BENCH_PG_SCHEMA: schema,
    },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  return child;
}

/** Waits for the next message from `child` that matches, failing if the child exits first. */
function messages(child: ChildProcess) {
  const queue: FromChild[] = [];
  let waiter: (() => void) | undefined;
  let exited = false;
  child.on("message", (m: FromChild) => {
    queue.push(m);
    waiter?.();
  });
  child.on("exit", () => {
    exited = true;
    waiter?.();
  });
  return {
    async next(match: (m: FromChild) => boolean): Promise<FromChild> {
      const deadline = performance.now() + 10_000;
      for (;;) {
        const i = queue.findIndex(match);
        if (i >= 0) return queue.splice(i, 1)[0] as FromChild;
        if (exited) throw new Error("bench: the waiter process exited");
        if (performance.now() > deadline) throw new Error("bench: no answer from the waiter");
        await new Promise<void>((resolve) => {
          waiter = resolve;
          setTimeout(resolve, 1_000).unref();
        });
        waiter = undefined;
      }
    },
  };
}

/** The child: waits on each id it is sent and reports when the wait resumed. */
async function runWaiter(): Promise<void> {
  const url = process.env.AIRLOCK_BENCH_PG_URL ?? "";
  const schema = process.env.AIRLOCK_BENCH_PG_SCHEMA ?? "";
  const engine = await createAirlock({
    store: postgresStore(url, { schema, max: 2 }),
    sweeper: false,
  });
  const send = (m: FromChild) => process.send?.(m);
  process.on("message", (m: ToChild) => {
    if ("stop" in m) {
      void engine.close().finally(() => process.exit(0));
      return;
    }
    const waiting = engine.waitFor(m.id, { timeoutMs: 10_000 });
    send({ waiting: m.id });
    waiting.then(
      (r) => send({ resumed: m.id, status: r.status }),
      (err: unknown) => send({ resumed: m.id, status: `error: ${String(err)}` }),
    );
  });
  process.on("disconnect", () => {
    void engine.close().finally(() => process.exit(0));
  });
  send({ ready: true });
}

/** The first PostgreSQL that answers (AIRLOCK_TEST_PG_URL, else loopback); when none does, says on
 * stderr that `suite`'s PostgreSQL figures are skipped and returns undefined. */
export async function findDatabase(suite: string): Promise<string | undefined> {
  const fromEnv = process.env.AIRLOCK_TEST_PG_URL;
  for (const url of fromEnv ? [fromEnv] : CANDIDATES) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    client.on("error", () => {});
    try {
      await client.connect();
      return url;
    } catch {
      // try the next candidate
    } finally {
      await client.end().catch(() => {});
    }
  }
  process.stderr.write(
    `bench ${suite}: no PostgreSQL reachable on 127.0.0.1:5432 (set AIRLOCK_TEST_PG_URL); its PostgreSQL figures skipped\n`,
  );
  return undefined;
}

/** A client connected to `url`, for setup and bulk work; the caller ends it. */
export async function connectedClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  await client.connect();
  return client;
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = await connectedClient(url);
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

if (process.env.AIRLOCK_BENCH_PG_ROLE === "waiter") await runWaiter();
