// `airlock mcp-proxy` killed with SIGKILL while an approved call runs upstream (between the claim and
// the outcome): the log never says `executed`; once the claim's lease ends the call is "approved,
// not known to have run"; the same call made again through a new proxy re-attaches to that gate and
// is run again only when its rule says `idempotent`, else answered that a person must settle it.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { airlockArgs, tempDir } from "../helpers.js";

const UPSTREAM = join(fileURLToPath(new URL(".", import.meta.url)), "slow-upstream.mjs");
const tmp = tempDir("airlock-mcp-kill-");
const db = join(tmp.dir, "airlock.db");
const log = join(tmp.dir, "transfers.jsonl");
const config = join(tmp.dir, "airlock-mcp.json");
const clients: Client[] = [];
let engine: Airlock;

beforeAll(async () => {
  writeFileSync(
    config,
    JSON.stringify({
      leaseSeconds: 1,
      rules: [
        {
          name: "retry-safe",
          tools: "transfer",
          when: { kind: { equals: "idem" } },
          approvers: ["alice"],
          idempotent: true,
        },
        { name: "transfers", tools: "transfer", approvers: ["alice"] },
      ],
    }),
  );
  engine = await createAirlock({ store: sqliteStore(db) });
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await engine.close();
  tmp.cleanup();
});

async function startProxy() {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  delete env.AIRLOCK_URL;
  delete env.AIRLOCK_TOKEN;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      ...airlockArgs(),
      "--db",
      db,
      "mcp-proxy",
      "--config",
      config,
      "--",
      process.execPath,
      UPSTREAM,
    ],
    env: { ...env, UPSTREAM_LOG: log, AIRLOCK_MCP_MAX_WAIT_MS: "30000" },
    stderr: "pipe",
  });
  transport.stderr?.on("data", () => {});
  const client = new Client({ name: "proxy-kill-test", version: "1" });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

const ran = (to: string) =>
  existsSync(log)
    ? readFileSync(log, "utf8")
        .split("\n")
        .filter((l) => l.includes(`"to":"${to}"`)).length
    : 0;

const text = (r: unknown) =>
  (r as CallToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("\n");

/** Opens the gate through a proxy, approves it, and kills the proxy once the call is claimed. */
async function killedMidCall(args: { to: string; kind: string; ms: number }) {
  const { client, transport } = await startProxy();
  const call = client.callTool({ name: "transfer", arguments: args }).catch((e: unknown) => e);
  const gate = await vi.waitFor(
    async () => {
      const page = await engine.list({ status: "pending", action: "mcp.transfer" });
      const found = page.items.find((r) => r.args.to === args.to);
      if (!found) throw new Error("no gate yet");
      return found;
    },
    { timeout: 20_000, interval: 50 },
  );
  await engine.decide(gate.id, { outcome: "approved", reviewer: "alice" });
  await vi.waitFor(
    async () => expect((await engine.get(gate.id)).execution?.state).toBe("claimed"),
    { timeout: 20_000, interval: 20 },
  );
  process.kill(transport.pid as number, "SIGKILL");
  expect(await call).toBeInstanceOf(Error);
  // The lease (1 s) runs out with no outcome.
  await new Promise((r) => setTimeout(r, 1300));
  await engine.sweep();
  return gate as Pick<ApprovalRequest, "id">;
}

describe("airlock mcp-proxy killed between claim and outcome", () => {
  it("a call that is not idempotent ends unknown, and the same call again asks for a person", async () => {
    const args = { to: "acme", kind: "once", ms: 1500 };
    const gate = await killedMidCall(args);
    const after = await engine.get(gate.id);
    expect(after.execution?.state).toBe("unknown");
    const types = (await engine.audit({ requestId: gate.id })).map((e) => e.type);
    expect(types).not.toContain("executed");
    expect(types.slice(-2)).toEqual(["claimed", "execution_unknown"]);

    const again = await startProxy();
    const result = await again.client.callTool({ name: "transfer", arguments: args });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("not known to have run");
    expect(text(result)).toContain(gate.id);
    // Not run again: at most the one the killed proxy's upstream may have finished.
    expect(ran("acme")).toBeLessThanOrEqual(1);
    expect((await engine.list({ action: "mcp.transfer" })).items).toHaveLength(1);
  }, 90_000);

  it("an idempotent rule's call is re-attached and run again, and the log says it ran", async () => {
    const args = { to: "beta", kind: "idem", ms: 1500 };
    const gate = await killedMidCall(args);
    const again = await startProxy();
    const quick = { ...args };
    const result = await again.client.callTool({ name: "transfer", arguments: quick });
    expect(text(result)).toContain("sent to beta");
    const after = await engine.get(gate.id);
    expect(after.execution).toMatchObject({ state: "executed", attempt: 2 });
    expect(ran("beta")).toBeGreaterThanOrEqual(1);
    const types = (await engine.audit({ requestId: gate.id })).map((e) => e.type);
    expect(types.filter((t) => t === "executed")).toHaveLength(1);
  }, 90_000);
});
