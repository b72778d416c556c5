// The HTTP server under load, all on loopback, on the embedded SQLite store (a file on disk):
//   http.requests_per_s       gate life cycles (create, read, decide) from 32 concurrent clients
//   http.resume_p99_ms        200 concurrent long-polling waiters; each decision sent over HTTP until
//                             its waiter has the answer (p50 reported too)
//   http.ops_per_s_64_clients 64 keep-alive clients each creating a gate, long-polling it and deciding
//                             it: creates + decisions per second; http.resume_p99_ms_64_clients is
//                             decide sent → that gate's long-poll answered, under the same load. The
//                             clients run in a child process, as real clients do, so the server
//                             has this process to itself; *_same_thread is the same loop with
//                             clients and server sharing one event loop (the figure of earlier runs)
//   http.bare_ops_per_s_64_clients  the same load on a bare server (http-bare.ts: no engine, store
//                             or auth), the machine's HTTP limit, in blocks alternating with the
//                             load on Airlock's server; http.ops_to_bare_ratio_64_clients,
//                             and http.resume_p99_to_bare_ratio_64_clients (p99 over the bare p99)
//   http.rss_mb_100k_pending  the server's resident memory with 100,000 pending requests in the store,
//                             measured in a child process, beside the same figure on an empty store
// Every loop is bounded in count and time. Run alone: `node --import tsx bench/index.ts http`.
import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { newRequestId } from "../src/core/ids.js";
import { createAirlock } from "../src/engine/engine.js";
import { createServer } from "../src/server/server.js";
import { createToken, hashToken, memoryTokenStore } from "../src/server/tokens.js";
import { sqliteStore } from "../src/store/sqlite.js";
import { tempDir } from "../test/helpers.js";
import { type BenchOptions, bounded, type Figure, percentile } from "./figures.js";
import { bareGateServer } from "./http-bare.js";
import {
  FULL_LOAD,
  json,
  type LoadResult,
  type LoadSizes,
  pooled,
  underLoad,
} from "./http-client.js";

const CLIENTS = 32;
const WAITERS = 200;
interface Sizes {
  /** Gate life cycles of the 32 clients at most, and their bound in time. */
  cycles: number;
  cycleMaxMs: number;
  /** The 64-client loads (Airlock's, the bare server's, the same-thread one). */
  load: LoadSizes;
  /** Whether the same-thread load runs. */
  sameThread: boolean;
  /** Rounds of WAITERS long-polls. */
  rounds: number;
  /** Whether the resident memory with 100,000 pending requests is measured (filling takes long). */
  rss: boolean;
}
const FULL: Sizes = {
  cycles: 3_000,
  cycleMaxMs: 8_000,
  load: FULL_LOAD,
  sameThread: true,
  rounds: 2,
  rss: true,
};
/** `--quick` (the guard's run): the 64-client loads of Airlock's server and the bare one as many
 * cycles as in full but a shorter bound in time, the rest shorter, and neither the same-thread load
 * nor the resident memory figures (filling 100,000 requests takes long). */
const QUICK: Sizes = {
  cycles: 1_500,
  cycleMaxMs: 3_000,
  load: { cycles: 3_000, maxMs: 5_000 },
  sameThread: false,
  rounds: 1,
  rss: false,
};
const PENDING = 100_000;
const CHILD_FLAG = "--airlock-bench-http-child";
const CHILD_TIMEOUT_MS = 60_000;
/** The load process's bound: every block of both servers' loads. */
const LOAD_TIMEOUT_MS = 120_000;

export async function benchHttp(options: BenchOptions = {}): Promise<Figure[]> {
  const s = options.quick ? QUICK : FULL;
  const t = tempDir("airlock-bench-http-");
  try {
    const live = await benchLive(join(t.dir, "live.db"), s);
    if (!s.rss) return live;
    const rssEmpty = await serverRss(join(t.dir, "empty.db"), 0);
    const rssFull = await serverRss(join(t.dir, "full.db"), PENDING);
    return [
      ...live,
      { name: "http.rss_mb_0_pending", value: rssEmpty, unit: "MB" },
      { name: "http.rss_mb_100k_pending", value: rssFull, unit: "MB" },
    ];
  } finally {
    t.cleanup();
  }
}

async function benchLive(file: string, s: Sizes): Promise<Figure[]> {
  const airlock = await createAirlock({
    store: sqliteStore(file),
    logger: pino({ level: "silent" }),
  });
  const tokens = memoryTokenStore();
  const agent = (await createToken(tokens, { name: "bench-agent", roles: ["agent"] })).token;
  const reviewer = (await createToken(tokens, { name: "bench-reviewer", roles: ["reviewer"] }))
    .token;
  const server = createServer({ airlock, auth: { tokens }, rateLimit: false });
  const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
  const api = (token: string, method: string, path: string, body?: unknown) =>
    json(url, token, method, path, body);
  try {
    // Warm-up: JIT, connections, page cache.
    await bounded(200, 2_000, async () => {
      await cycle(api, agent, reviewer);
    });

    let requests = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, () =>
        bounded(Math.ceil(s.cycles / CLIENTS), s.cycleMaxMs, async () => {
          // Not `requests += await ...`: that reads `requests` before the await and loses updates.
          const made = await cycle(api, agent, reviewer);
          requests += made;
        }),
      ),
    );
    const rate = (requests / (performance.now() - start)) * 1000;

    const { airlock: load, bare } = await loadsInterleaved(url, agent, reviewer, s.load);
    const shared = s.sameThread ? await underLoad(url, agent, reviewer, s.load) : undefined;

    const latencies: number[] = [];
    for (let round = 0; round < s.rounds; round++) {
      latencies.push(...(await resumeRound(api, agent, reviewer)));
    }
    latencies.sort((a, b) => a - b);
    return [
      { name: "http.requests_per_s", value: rate, unit: "1/s" },
      { name: "http.resume_p50_ms", value: percentile(latencies, 0.5), unit: "ms" },
      { name: "http.resume_p99_ms", value: percentile(latencies, 0.99), unit: "ms" },
      { name: "http.ops_per_s_64_clients", value: load.opsPerS, unit: "1/s" },
      { name: "http.resume_p50_ms_64_clients", value: percentile(load.latencies, 0.5), unit: "ms" },
      {
        name: "http.resume_p99_ms_64_clients",
        value: percentile(load.latencies, 0.99),
        unit: "ms",
      },
      // The same load on a bare server (http-bare.ts): what this machine's HTTP allows at all.
      { name: "http.bare_ops_per_s_64_clients", value: bare.opsPerS, unit: "1/s" },
      {
        name: "http.bare_resume_p99_ms_64_clients",
        value: percentile(bare.latencies, 0.99),
        unit: "ms",
      },
      {
        name: "http.ops_to_bare_ratio_64_clients",
        value: load.opsPerS / bare.opsPerS,
        unit: "ratio",
      },
      {
        name: "http.resume_p99_to_bare_ratio_64_clients",
        value: percentile(load.latencies, 0.99) / percentile(bare.latencies, 0.99),
        unit: "ratio",
      },
      ...(shared
        ? [
            { name: "http.ops_per_s_64_clients_same_thread", value: shared.opsPerS, unit: "1/s" },
            {
              name: "http.resume_p99_ms_64_clients_same_thread",
              value: percentile(shared.latencies, 0.99),
              unit: "ms",
            },
          ]
        : []),
    ];
  } finally {
    await server.close();
    await airlock.close();
  }
}

type Api = (token: string, method: string, path: string, body?: unknown) => Promise<unknown>;

/** One gate's life over HTTP: create, read, decide. Returns the number of requests made. */
async function cycle(api: Api, agent: string, reviewer: string): Promise<number> {
  const r = (await api(agent, "POST", "/v1/requests", { title: "bench" })) as { id: string };
  await api(agent, "GET", `/v1/requests/${r.id}`);
  await api(reviewer, "POST", `/v1/requests/${r.id}/decisions`, { outcome: "approved" });
  return 3;
}

/** Blocks of the 64-client load, alternating between Airlock's server and the bare one. */
const LOAD_BLOCKS = 4;

/** The 64-client load on Airlock's server at `url` and on a bare server (http-bare.ts), from one
 * child process of clients (bench/http-load-clients.ts), in alternating blocks so that the two
 * meet the same moments of the machine; each side's blocks pooled. */
async function loadsInterleaved(
  url: string,
  agent: string,
  reviewer: string,
  sizes: LoadSizes,
): Promise<{ airlock: LoadResult; bare: LoadResult }> {
  const bare = await bareGateServer();
  const child = fork(fileURLToPath(new URL("./http-load-clients.ts", import.meta.url)), [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), LOAD_TIMEOUT_MS);
  const load = async (target: string, a: string, r: string) => {
    const block = { cycles: sizes.cycles / LOAD_BLOCKS, maxMs: sizes.maxMs / LOAD_BLOCKS };
    child.send({ url: target, agent: a, reviewer: r, sizes: block });
    const m = (await message(child)) as { result?: LoadResult; error?: string };
    if (!m.result) throw new Error(`the load process failed: ${m.error}`);
    return m.result;
  };
  try {
    const runs = { airlock: [] as LoadResult[], bare: [] as LoadResult[] };
    for (let b = 0; b < LOAD_BLOCKS; b++) {
      runs.airlock.push(await load(url, agent, reviewer));
      runs.bare.push(await load(bare.url, "bare-agent", "bare-reviewer"));
    }
    return { airlock: pooled(runs.airlock), bare: pooled(runs.bare) };
  } finally {
    clearTimeout(killer);
    if (child.exitCode === null) child.kill("SIGKILL");
    await bare.close();
  }
}

/** WAITERS long-polls in flight at once; decisions go one by one; each latency runs from just
 * before the decision is sent to the moment its waiter has the answer. */
async function resumeRound(api: Api, agent: string, reviewer: string): Promise<number[]> {
  const ids: string[] = [];
  for (let i = 0; i < WAITERS; i++) {
    ids.push(
      ((await api(agent, "POST", "/v1/requests", { title: `wait ${i}` })) as { id: string }).id,
    );
  }
  const answered = new Map<string, number>();
  const waiters = ids.map((id) =>
    api(agent, "GET", `/v1/requests/${id}/wait?timeout=60`).then((r) => {
      if ((r as { status: string }).status === "pending") throw new Error(`waiter ${id} timed out`);
      answered.set(id, performance.now());
    }),
  );
  await sleep(500); // let every long-poll reach the server
  const sent = new Map<string, number>();
  for (const id of ids) {
    sent.set(id, performance.now());
    await api(reviewer, "POST", `/v1/requests/${id}/decisions`, { outcome: "approved" });
  }
  await Promise.all(waiters);
  return ids.map((id) => (answered.get(id) ?? Number.NaN) - (sent.get(id) ?? Number.NaN));
}

/** Fills a database with `pending` requests, serves it from a child process, exercises it a little,
 * and returns the child's resident memory in MB. */
async function serverRss(file: string, pending: number): Promise<number> {
  await fill(file, pending);
  const token = `bench-${Math.random().toString(36).slice(2)}-token`;
  const child = fork(fileURLToPath(import.meta.url), [CHILD_FLAG, file], {
    execArgv: ["--import", "tsx", "--expose-gc"],
    env: { ...process.env, AIRLOCK_BENCH_TOKEN: token },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), CHILD_TIMEOUT_MS);
  try {
    const { port } = (await message(child)) as { port: number };
    const url = `http://127.0.0.1:${port}`;
    const page = (await json(url, token, "GET", "/v1/requests?status=pending&limit=50")) as {
      items: { id: string }[];
    };
    for (const r of page.items.slice(0, 10)) {
      await json(url, token, "GET", `/v1/requests/${r.id}/wait?timeout=0.05`);
    }
    await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } }).then((r) =>
      r.text(),
    );
    child.send({ type: "rss" });
    const { rss } = (await message(child)) as { rss: number };
    child.send({ type: "stop" });
    await new Promise<void>((resolve) => child.once("exit", () => resolve()));
    return rss / (1024 * 1024);
  } finally {
    clearTimeout(killer);
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}

/** Inserts `n` pending requests through the store (the audit log is left out: it plays no part in
 * what the server keeps in memory). */
async function fill(file: string, n: number): Promise<void> {
  const store = sqliteStore(file);
  const airlock = await createAirlock({ store, sweeper: false });
  try {
    if (n === 0) return;
    const template = await airlock.request({
      title: "template",
      requester: "bench",
      approvers: ["ops"],
    });
    const now = Date.now();
    for (let i = 1; i < n; i++) {
      const id = newRequestId(now);
      await store.insertRequest({ ...template, id, correlationId: id, title: `pending ${i}` }, []);
    }
  } finally {
    await airlock.close();
  }
}

function message(child: ChildProcess): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) =>
      reject(new Error(`the bench server exited early (code ${code})`));
    child.once("exit", onExit);
    child.once("message", (m) => {
      child.off("exit", onExit);
      resolve(m);
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The child: a server on the filled database, answering "rss" and "stop" over IPC. */
async function childMain(file: string): Promise<void> {
  const token = process.env.AIRLOCK_BENCH_TOKEN ?? "";
  const airlock = await createAirlock({
    store: sqliteStore(file),
    logger: pino({ level: "silent" }),
  });
  const tokens = memoryTokenStore();
  await tokens.put(
    { id: "tok_bench", name: "bench-admin", roles: ["admin"], groups: [], createdAt: Date.now() },
    hashToken(token),
  );
  const server = createServer({ airlock, auth: { tokens }, rateLimit: false });
  const { port } = await server.listen({ port: 0, host: "127.0.0.1" });
  process.on("message", (m: { type: string }) => {
    if (m.type === "rss") {
      // A collection first, so the figure is what the server keeps, not garbage not yet collected.
      (globalThis as { gc?: () => void }).gc?.();
      process.send?.({ rss: process.memoryUsage.rss() });
    } else if (m.type === "stop") {
      void server
        .close()
        .then(() => airlock.close())
        .then(() => process.disconnect?.());
    }
  });
  process.send?.({ port });
}

const flag = process.argv.indexOf(CHILD_FLAG);
if (flag !== -1) {
  const file = process.argv[flag + 1];
  if (!file) throw new Error(`${CHILD_FLAG} needs the database file`);
  await childMain(file);
}
