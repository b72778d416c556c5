// What `airlock mcp-proxy` adds to a call it lets pass: a read-only tool (audited as `auto_executed`,
// forwarded) called through the proxy, next to the same call straight to the same upstream server,
// both over stdio from the SDK's client, interleaved in the same run. Issue 15's target: under 1 ms
// at p50. The proxy works on the embedded SQLite store in a temp folder.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { tempDir } from "../test/helpers.js";
import { type BenchOptions, bounded, type Figure, percentile } from "./figures.js";

/** Calls of each kind at most and their bound in time. */
const FULL = { rounds: 2_000, maxMs: 10_000 };
/** `--quick` (the guard's run): the same interleaved calls, fewer. */
const QUICK = { rounds: 800, maxMs: 4_000 };
const WARM_UP = 50;

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const UPSTREAM = join(ROOT, "test", "mcp", "upstream-server.ts");
/** The built command line (`npm run bench` builds first). */
const MAIN = join(ROOT, "dist", "src", "cli", "main.js");

function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("AIRLOCK_")) env[k] = v;
  }
  return { ...env, ...extra };
}

async function connect(args: string[], env: Record<string, string>): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env,
    stderr: "ignore",
  });
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(transport);
  return client;
}

export async function benchMcp(options: BenchOptions = {}): Promise<Figure[]> {
  const s = options.quick ? QUICK : FULL;
  const t = tempDir("airlock-bench-mcp-");
  const env = childEnv({ UPSTREAM_LOG: join(t.dir, "writes.jsonl") });
  const clients: Client[] = [];
  try {
    const direct = await connect(["--import", "tsx", UPSTREAM], env);
    clients.push(direct);
    const proxied = await connect(
      [
        MAIN,
        "--db",
        join(t.dir, "airlock.db"),
        "mcp-proxy",
        "--",
        process.execPath,
        "--import",
        "tsx",
        UPSTREAM,
      ],
      env,
    );
    clients.push(proxied);
    const call = { name: "read_file", arguments: { path: "bench.txt" } };
    const timed = async (client: Client): Promise<number> => {
      const start = performance.now();
      const result = await client.callTool(call);
      const ms = performance.now() - start;
      if (result.isError) throw new Error("bench: read_file failed through the proxy");
      return ms;
    };
    for (let i = 0; i < WARM_UP; i++) {
      await timed(direct);
      await timed(proxied);
    }
    const directMs: number[] = [];
    const proxiedMs: number[] = [];
    await bounded(s.rounds, s.maxMs, async () => {
      directMs.push(await timed(direct));
      proxiedMs.push(await timed(proxied));
    });
    directMs.sort((a, b) => a - b);
    proxiedMs.sort((a, b) => a - b);
    const p50 = percentile(proxiedMs, 0.5) - percentile(directMs, 0.5);
    const p99 = percentile(proxiedMs, 0.99) - percentile(directMs, 0.99);
    return [
      { name: "mcp.proxy_passthrough_overhead_ms_p50", value: p50, unit: "ms" },
      { name: "mcp.proxy_passthrough_overhead_ms_p99", value: p99, unit: "ms" },
      { name: "mcp.direct_call_ms_p50", value: percentile(directMs, 0.5), unit: "ms" },
      { name: "mcp.proxy_call_ms_p50", value: percentile(proxiedMs, 0.5), unit: "ms" },
      {
        name: "mcp.proxy_to_direct_p50_ratio",
        value: percentile(proxiedMs, 0.5) / percentile(directMs, 0.5),
        unit: "ratio",
      },
    ];
  } finally {
    for (const c of clients) await c.close().catch(() => {});
    t.cleanup();
  }
}
