// `airlock mcp` in local mode acts as one agent (--requester): through MCP over stdio, a real child
// process on a temporary SQLite file lists, reads and waits for its own agent's requests only; another
// agent's request on the same file is answered like a missing one, args included.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { runCli } from "../cli/run-cli.js";
import { airlockArgs, tempDir } from "../helpers.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let tmp: { dir: string; cleanup: () => void };
let db: string;
const clients: Client[] = [];

beforeEach(() => {
  tmp = tempDir("airlock-mcp-scope-");
  db = join(tmp.dir, "airlock.db");
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  tmp.cleanup();
});

function env(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("AIRLOCK_")) out[k] = v;
  }
  return { ...out, AIRLOCK_MCP_MAX_WAIT_MS: "300" };
}

async function connect(...args: string[]): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...airlockArgs(), "mcp", "--db", db, ...args],
    env: env(),
    cwd: ROOT,
    stderr: "pipe",
  });
  const client = new Client({ name: "airlock-scope-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args }, { timeout: 60_000 });
  const text = (result.content as { type: string; text?: string }[])
    .map((c) => c.text ?? "")
    .join("\n");
  return { result, text, data: (result.structuredContent ?? {}) as Record<string, unknown> };
}

/** The ids a list_pending answer lists. */
function listedIds(data: Record<string, unknown>): string[] {
  return ((data.requests ?? []) as { id: string }[]).map((r) => r.id);
}

describe("airlock mcp local mode", () => {
  it("lists, reads and waits for its own agent's requests only", async () => {
    // Another agent's pending request, with secret-looking args, on the same database file.
    const engine = await createAirlock({ store: sqliteStore(db) });
    const theirs = await engine.request({
      title: "Rotate the billing key",
      requester: "billing-agent",
      args: { key: "sk_live_other" },
    });
    await engine.close();

    const client = await connect("--requester", "Research-Agent");
    const mine = await call(client, "request_approval", {
      title: "Search the archive",
      args: { q: "airlock" },
    });
    expect(mine.result.isError).toBeFalsy();
    const mineId = mine.data.id as string;

    const listed = await call(client, "list_pending", {});
    expect(listed.result.isError).toBeFalsy();
    expect(listedIds(listed.data)).toEqual([mineId]);
    expect(listed.text).not.toContain("billing");

    const got = await call(client, "get_request", { id: theirs.id });
    expect(got.result.isError).toBe(true);
    expect(got.text).toBe(`request \`${theirs.id}\` does not exist`);
    expect(got.text).not.toContain("sk_live_other");

    const waited = await call(client, "wait_for_decision", { id: theirs.id });
    expect(waited.result.isError).toBe(true);
    expect(waited.text).toBe(`request \`${theirs.id}\` does not exist`);

    const own = await call(client, "get_request", { id: mineId });
    expect(own.result.isError).toBeFalsy();
    expect(own.data).toMatchObject({ id: mineId, args: { q: "airlock" } });

    // The other agent's own server sees its request, and not this one.
    const other = await connect("--requester", "billing-agent");
    const theirList = await call(other, "list_pending", {});
    expect(listedIds(theirList.data)).toEqual([theirs.id]);
  });

  it("says in --help that local mode is single-user", async () => {
    const r = await runCli(["mcp", "--help"], env());
    expect(r.code).toBe(0);
    const help = r.stdout.replace(/\s+/g, " ");
    expect(help).toContain("Local mode (on a database file, without AIRLOCK_URL) is single-user");
    expect(help).toContain("lists and reads only that agent's requests");
  });
});
