// `airlock mcp-proxy` as a client sees it: the SDK's Client talks stdio to a real proxy process in
// front of test/mcp/upstream-server.ts, on a temporary SQLite file that this test decides on through
// the engine (as a reviewer would through the inbox or the API).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/cli/context.js";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { airlockArgs, scriptArgs, tempDir } from "../helpers.js";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const UPSTREAM = join(HERE, "upstream-server.ts");

const tmp = tempDir("airlock-mcp-proxy-");
const db = join(tmp.dir, "airlock.db");
const upstreamLog = join(tmp.dir, "writes.jsonl");
const clients: Client[] = [];
let engine: Airlock;

const CONFIG = {
  rules: [
    {
      name: "scratch",
      tools: "write_file",
      when: { path: { prefix: "/scratch/" } },
      action: "allow",
    },
    {
      name: "short",
      tools: "write_file",
      when: { path: { prefix: "/short/" } },
      timeoutSeconds: 1,
    },
    {
      name: "short-ok",
      tools: "write_file",
      when: { path: { prefix: "/short-ok/" } },
      timeoutSeconds: 1,
      onTimeout: "approve",
    },
    { name: "crash", tools: "crash", action: "allow" },
    { name: "writes", tools: ["write_*"], approvers: ["alice"], risk: "high" },
  ],
};

function proxyArgs(config: string): string[] {
  return [
    ...airlockArgs(),
    "--db",
    db,
    "mcp-proxy",
    "--config",
    config,
    "--",
    process.execPath,
    ...scriptArgs(UPSTREAM),
  ];
}

function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  delete env.AIRLOCK_URL;
  delete env.AIRLOCK_TOKEN;
  return { ...env, UPSTREAM_LOG: upstreamLog, ...extra };
}

function writeConfig(name: string, config: unknown): string {
  const file = join(tmp.dir, name);
  writeFileSync(file, JSON.stringify(config));
  return file;
}

async function startProxy(
  maxWaitMs: number,
  extraEnv: Record<string, string> = {},
): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: proxyArgs(writeConfig("airlock-mcp.json", CONFIG)),
    env: childEnv({ AIRLOCK_MCP_MAX_WAIT_MS: String(maxWaitMs), ...extraEnv }),
    stderr: "pipe",
  });
  transport.stderr?.on("data", () => {});
  const client = new Client({ name: "proxy-test", version: "1" });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

function writes(): Record<string, unknown>[] {
  if (!existsSync(upstreamLog)) return [];
  return readFileSync(upstreamLog, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function text(result: unknown): string {
  const content = (result as CallToolResult).content;
  return content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
}

/** The pending gate of a write to `path`, once the proxy has opened it. */
async function pendingGate(path: string): Promise<ApprovalRequest> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const page = await engine.list({ status: "pending", action: "mcp.write_file" });
    for (const item of page.items) {
      const r = await engine.get(item.id);
      if (r.args.path === path) return r;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no pending gate for ${path}`);
}

beforeAll(async () => {
  engine = await createAirlock({ store: openSqliteStore(db) });
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await engine.close();
  tmp.cleanup();
});

describe("airlock mcp-proxy", () => {
  let client: Client;

  beforeAll(async () => {
    ({ client } = await startProxy(30_000));
  }, 60_000);

  it("lists the upstream's tools unchanged", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["crash", "read_file", "write_file"]);
    expect(tools.find((t) => t.name === "read_file")?.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === "write_file")?.inputSchema.properties).toHaveProperty(
      "path",
    );
  });

  it("holds a gated call until approved, then forwards it once with the approved args", async () => {
    const before = writes().length;
    const args = { path: "/data/one.txt", content: "hello" };
    const call = client.callTool({ name: "write_file", arguments: args });
    const gate = await pendingGate("/data/one.txt");
    expect(gate.action).toBe("mcp.write_file");
    expect(gate.args).toEqual(args);
    expect(gate.preview).toContain("write_file(");
    expect(gate.approvers).toEqual(["alice"]);
    expect(gate.risk).toBe("high");
    expect(writes().length).toBe(before); // nothing ran yet
    await engine.decide(gate.id, { outcome: "approved", reviewer: "alice" });
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(text(result)).toContain("wrote 5 characters");
    expect(writes().slice(before)).toEqual([args]);
    expect((await engine.get(gate.id)).executedAt).toBeDefined();
  }, 60_000);

  it("forwards the reviewer's edited args", async () => {
    const before = writes().length;
    const call = client.callTool({
      name: "write_file",
      arguments: { path: "/data/two.txt", content: "rm -rf /" },
    });
    const gate = await pendingGate("/data/two.txt");
    const edited = { path: "/data/two.txt", content: "echo safe" };
    await engine.decide(gate.id, { outcome: "approved", reviewer: "alice", editedArgs: edited });
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(writes().slice(before)).toEqual([edited]);
  }, 60_000);

  it("returns a rejection as a tool error carrying the reviewer's comment", async () => {
    const before = writes().length;
    const call = client.callTool({
      name: "write_file",
      arguments: { path: "/data/three.txt", content: "x" },
    });
    const gate = await pendingGate("/data/three.txt");
    await engine.decide(gate.id, {
      outcome: "rejected",
      reviewer: "alice",
      comment: "write under /scratch/ instead",
    });
    const result = await call;
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("rejected");
    expect(text(result)).toContain("write under /scratch/ instead");
    expect(writes().length).toBe(before);
  }, 60_000);

  it("returns a revise as a tool error carrying the comment", async () => {
    const call = client.callTool({
      name: "write_file",
      arguments: { path: "/data/four.txt", content: "x" },
    });
    const gate = await pendingGate("/data/four.txt");
    await engine.decide(gate.id, { outcome: "revise", reviewer: "alice", comment: "add a header" });
    const result = await call;
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("revise");
    expect(text(result)).toContain("add a header");
  }, 60_000);

  it("applies the rule's timeout default: reject returns an error, approve forwards", async () => {
    const before = writes().length;
    const rejected = await client.callTool({
      name: "write_file",
      arguments: { path: "/short/a.txt", content: "x" },
    });
    expect(rejected.isError).toBe(true);
    expect(text(rejected)).toContain("timed_out");
    expect(writes().length).toBe(before);
    const approved = await client.callTool({
      name: "write_file",
      arguments: { path: "/short-ok/b.txt", content: "y" },
    });
    expect(approved.isError).toBeFalsy();
    expect(writes().slice(before)).toEqual([{ path: "/short-ok/b.txt", content: "y" }]);
  }, 60_000);

  it("passes read-only tools and allowed calls without a gate, and audits them", async () => {
    const before = writes().length;
    const read = await client.callTool({ name: "read_file", arguments: { path: "/data/x" } });
    expect(read.isError).toBeFalsy();
    expect(text(read)).toContain("lines");
    const scratch = await client.callTool({
      name: "write_file",
      arguments: { path: "/scratch/s.txt", content: "free", apiKey: "sk-secret" },
    });
    expect(scratch.isError).toBeFalsy();
    expect(writes().length).toBe(before + 1);
    const audit = await engine.audit({ limit: 10_000 });
    const auto = audit.filter((e) => e.type === "auto_executed");
    const readEvent = auto.find((e) => (e.data as { tool?: string }).tool === "read_file");
    expect(readEvent?.data).toMatchObject({ tool: "read_file", because: "read-only" });
    const scratchEvent = auto.find(
      (e) => (e.data as { args?: { path?: string } }).args?.path === "/scratch/s.txt",
    );
    expect(scratchEvent?.data).toMatchObject({ tool: "write_file", because: "scratch" });
    expect(JSON.stringify(scratchEvent?.data)).not.toContain("sk-secret");
  }, 60_000);

  it("refuses a huge argument list, naming the limit", async () => {
    const result = await client.callTool({
      name: "write_file",
      arguments: { path: "/scratch/big.txt", content: "x".repeat(150_000) },
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("over the limit of 100000 bytes (maxArgsBytes)");
  }, 60_000);

  it("reports an upstream that dies as a tool error and starts it again", async () => {
    const crashed = await client.callTool({ name: "crash", arguments: {} });
    expect(crashed.isError).toBe(true);
    expect(text(crashed)).toContain("crash was not run");
    const read = await client.callTool({ name: "read_file", arguments: { path: "/data/x" } });
    expect(read.isError).toBeFalsy();
  }, 60_000);
});

describe("airlock mcp-proxy past the bounded wait", () => {
  it("answers pending, re-attaches the same call to the same gate, forwards once when approved", async () => {
    const { client } = await startProxy(300);
    const before = writes().length;
    const args = { path: "/data/later.txt", content: "later" };
    const first = await client.callTool({ name: "write_file", arguments: args });
    expect(first.isError).toBe(true);
    expect(text(first)).toContain("Approval pending");
    const gate = await pendingGate("/data/later.txt");
    expect(text(first)).toContain(gate.id);
    const second = await client.callTool({ name: "write_file", arguments: args });
    expect(text(second)).toContain(gate.id);
    const gates = (await engine.list({ action: "mcp.write_file", limit: 1000 })).items;
    expect(gates.filter((g) => g.id === gate.id)).toHaveLength(1);
    await engine.decide(gate.id, { outcome: "approved", reviewer: "alice" });
    const third = await client.callTool({ name: "write_file", arguments: args });
    expect(third.isError).toBeFalsy();
    expect(writes().slice(before)).toEqual([args]);
    // The gate has run: the same call again asks anew.
    const fourth = await client.callTool({ name: "write_file", arguments: args });
    expect(text(fourth)).toContain("Approval pending");
    expect(text(fourth)).not.toContain(gate.id);
    expect(writes().slice(before)).toEqual([args]);
  }, 90_000);
});

describe("airlock mcp-proxy killed while a call waits", () => {
  it("leaves the request pending; a later decision is recorded and the same call runs it once", async () => {
    const { client, transport } = await startProxy(30_000);
    const before = writes().length;
    const call = client
      .callTool({ name: "write_file", arguments: { path: "/data/killed.txt", content: "k" } })
      .catch((err: unknown) => err);
    const gate = await pendingGate("/data/killed.txt");
    const pid = transport.pid;
    expect(pid).toBeTypeOf("number");
    process.kill(pid as number, "SIGKILL");
    expect(await call).toBeInstanceOf(Error);
    expect((await engine.get(gate.id)).status).toBe("pending");
    const decided = await engine.decide(gate.id, { outcome: "approved", reviewer: "alice" });
    expect(decided.status).toBe("approved");
    const events = await engine.audit({ requestId: gate.id });
    expect(events.map((e) => e.type)).toContain("decided");
    expect(writes().length).toBe(before);
    // A new proxy, the same call: it re-attaches to the approved gate and runs it once.
    const again = await startProxy(30_000);
    const args = { path: "/data/killed.txt", content: "k" };
    const result = await again.client.callTool({ name: "write_file", arguments: args });
    expect(result.isError).toBeFalsy();
    expect(writes().slice(before)).toEqual([args]);
    expect((await engine.get(gate.id)).executedAt).toBeDefined();
  }, 90_000);
});

describe("airlock mcp-proxy whose upstream cannot be started when the approval comes", () => {
  it("does not spend the approval; the same call runs it once the upstream starts again", async () => {
    const flag = join(tmp.dir, "upstream-fails");
    const { client } = await startProxy(30_000, { UPSTREAM_FAIL_IF: flag });
    const before = writes().length;
    const args = { path: "/data/down.txt", content: "d" };
    const call = client.callTool({ name: "write_file", arguments: args });
    const gate = await pendingGate("/data/down.txt");
    writeFileSync(flag, "");
    const crashed = await client.callTool({ name: "crash", arguments: {} });
    expect(crashed.isError).toBe(true);
    await engine.decide(gate.id, { outcome: "approved", reviewer: "alice" });
    const result = await call;
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("could not be started");
    expect(text(result)).toContain(`Request ${gate.id} stays approved`);
    expect((await engine.get(gate.id)).executedAt).toBeUndefined();
    expect(writes().length).toBe(before);
    rmSync(flag);
    const again = await client.callTool({ name: "write_file", arguments: args });
    expect(again.isError).toBeFalsy();
    expect(writes().slice(before)).toEqual([args]);
    expect((await engine.get(gate.id)).executedAt).toBeDefined();
  }, 90_000);
});

describe("airlock mcp-proxy with a wrong config", () => {
  function run(args: string[]): Promise<{ code: number | null; stderr: string }> {
    return new Promise((resolve) => {
      const child: ChildProcess = spawn(process.execPath, args, {
        env: childEnv(),
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr?.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      child.stdout?.resume();
      child.on("close", (code) => resolve({ code, stderr }));
    });
  }

  it("fails with one line naming the rule and the problem, before starting the upstream", async () => {
    const marker = join(tmp.dir, "upstream-started");
    const config = writeConfig("bad.json", {
      rules: [
        { name: "ok", tools: "read_file", action: "allow" },
        { name: "payments", tools: "pay_*", when: { amount: { gt: "ten" } } },
      ],
    });
    const { code, stderr } = await run([
      ...airlockArgs(),
      "--db",
      db,
      "mcp-proxy",
      "--config",
      config,
      "--",
      process.execPath,
      "-e",
      `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "")`,
    ]);
    expect(code).toBe(4);
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('rule 2 ("payments"), when.amount.gt');
    expect(lines[0]).toContain("number");
    expect(existsSync(marker)).toBe(false);
  }, 60_000);

  it("refuses --local-confirm (self-approval by the client's user) and a missing upstream", async () => {
    const local = await run([
      ...airlockArgs(),
      "--db",
      db,
      "mcp-proxy",
      "--local-confirm",
      "--",
      process.execPath,
      UPSTREAM,
    ]);
    expect(local.code).toBe(4);
    expect(local.stderr.trim().split("\n")).toHaveLength(1);
    expect(local.stderr).toContain("--local-confirm");
    expect(local.stderr).toContain("not supported");
    const none = await run([...airlockArgs(), "--db", db, "mcp-proxy"]);
    expect(none.code).toBe(4);
    expect(none.stderr).toContain("mcp-proxy needs the upstream MCP server");
  }, 60_000);
});
