// `airlock mcp` as MCP clients see it: the SDK's own Client talking stdio (and once Streamable HTTP)
// to a real `airlock mcp` child process on a temporary SQLite database, with decisions taken by the
// `airlock decide` command on the same file.
import { spawn } from "node:child_process";
import { request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMcpServer } from "../../src/adapters/mcp.js";
import { createAirlock } from "../../src/engine/engine.js";
import { BOUNDED_WAIT_MS, inboxLink, maxWaitMs, pendingAnswer } from "../../src/mcp/shared.js";
import { memoryStore } from "../../src/store/memory.js";
import { runCli } from "../cli/run-cli.js";
import { airlockArgs, tempDir } from "../helpers.js";
import { startTestServer } from "../server/helpers.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** `airlock mcp` through the real command line (the built one when fresh). */
function mcpArgs(): string[] {
  return [...airlockArgs(), "mcp"];
}

let tmp: { dir: string; cleanup: () => void };
let db: string;
const clients: Client[] = [];

beforeEach(() => {
  tmp = tempDir("airlock-mcp-");
  db = join(tmp.dir, "airlock.db");
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  tmp.cleanup();
});

function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("AIRLOCK_")) env[k] = v;
  }
  return { ...env, AIRLOCK_TEST_FROM_SOURCE: process.env.AIRLOCK_TEST_FROM_SOURCE ?? "", ...extra };
}

async function connect(extraEnv: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...mcpArgs(), "--db", db],
    env: baseEnv(extraEnv),
    cwd: ROOT,
    stderr: "pipe",
  });
  const client = new Client({ name: "airlock-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

interface Structured {
  id: string;
  status: string;
  title?: string;
  outcome?: string;
  comment?: string;
  reviewer?: string;
  editedArgs?: Record<string, unknown>;
  inbox?: string;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args }, { timeout: 60_000 });
  const text = (result.content as { type: string; text?: string }[])
    .map((c) => c.text ?? "")
    .join("\n");
  return { result, text, data: result.structuredContent as unknown as Structured };
}

async function decide(id: string, word: string, ...more: string[]) {
  const r = await runCli(["decide", id, word, "--as", "alice", "--db", db, ...more], baseEnv());
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
}

const deploy = { title: "Deploy api to production", args: { service: "api", version: "1.4.2" } };

describe("airlock mcp over stdio", () => {
  it("lists its four tools with stable names", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "get_request",
      "list_pending",
      "request_approval",
      "wait_for_decision",
    ]);
    const request = tools.find((t) => t.name === "request_approval");
    expect(Object.keys(request?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining([
        "title",
        "summary",
        "args",
        "items",
        "timeoutSeconds",
        "approvers",
        "wait",
      ]),
    );
  });

  it("request_approval returns an id; list_pending and get_request show it; a CLI decision is seen by wait_for_decision", async () => {
    const client = await connect();
    const created = await call(client, "request_approval", deploy);
    expect(created.result.isError).toBeFalsy();
    expect(created.data.id).toMatch(/^req_/);
    expect(created.data.status).toBe("pending");

    const pending = await call(client, "list_pending", {});
    const listed = (pending.result.structuredContent as { requests: Structured[] }).requests;
    expect(listed.map((r) => r.id)).toEqual([created.data.id]);

    const got = await call(client, "get_request", { id: created.data.id });
    expect(got.data).toMatchObject({ id: created.data.id, status: "pending", title: deploy.title });

    await decide(created.data.id, "approve", "--comment", "ship it");
    const waited = await call(client, "wait_for_decision", { id: created.data.id });
    expect(waited.data).toMatchObject({
      id: created.data.id,
      status: "approved",
      outcome: "approved",
      comment: "ship it",
      reviewer: "alice",
    });
    expect(waited.text).toContain("ship it");
    const after = await call(client, "list_pending", {});
    expect((after.result.structuredContent as { requests: unknown[] }).requests).toEqual([]);
  });

  it("wait: true returns the decision (with edited args) when it comes within the bound", async () => {
    const client = await connect({ AIRLOCK_MCP_MAX_WAIT_MS: "20000" });
    const first = await call(client, "request_approval", deploy);
    const waiting = call(client, "request_approval", { ...deploy, wait: true });
    await new Promise((r) => setTimeout(r, 300));
    await decide(first.data.id, "approve", "--edit", '{"service":"api","version":"1.4.3"}');
    const done = await waiting;
    expect(done.data).toMatchObject({ id: first.data.id, status: "approved", outcome: "approved" });
    expect(done.data.editedArgs).toEqual({ service: "api", version: "1.4.3" });
  });

  it("past the bound answers pending with the id, and the same call again re-attaches to the same request", async () => {
    const client = await connect({ AIRLOCK_MCP_MAX_WAIT_MS: "1000" });
    const progress: number[] = [];
    const first = await client.callTool(
      { name: "request_approval", arguments: { ...deploy, wait: true } },
      { onprogress: (p) => progress.push(p.progress), timeout: 60_000 },
    );
    const data = first.structuredContent as unknown as Structured & { retry: string };
    expect(first.isError).toBeFalsy();
    expect(data.status).toBe("pending");
    expect(data.id).toMatch(/^req_/);
    const text = (first.content as { text: string }[])[0]?.text ?? "";
    expect(text).toContain(data.id);
    expect(text).toContain(`airlock decide ${data.id} approve`);
    expect(text).toContain("same arguments");
    expect(progress.length).toBeGreaterThan(0);

    const again = await call(client, "request_approval", { ...deploy, wait: true });
    expect(again.data).toMatchObject({ id: data.id, status: "pending" });
    const pending = await call(client, "list_pending", {});
    expect((pending.result.structuredContent as { requests: unknown[] }).requests).toHaveLength(1);

    await decide(data.id, "reject", "--comment", "not on a Friday");
    const third = await call(client, "request_approval", { ...deploy, wait: true });
    expect(third.data).toMatchObject({
      id: data.id,
      status: "rejected",
      comment: "not on a Friday",
    });
    // Different arguments open a different gate.
    const other = await call(client, "request_approval", { ...deploy, title: "Deploy web" });
    expect(other.data.id).not.toBe(data.id);
  });

  it("without a server, the pending answer says how to open the request in the inbox", async () => {
    const client = await connect({ AIRLOCK_MCP_MAX_WAIT_MS: "0" });
    const created = await call(client, "request_approval", deploy);
    const waited = await call(client, "wait_for_decision", { id: created.data.id });
    expect(waited.data.status).toBe("pending");
    expect(waited.data.inbox).toBeUndefined();
    expect(waited.text).toContain("airlock serve");
    expect(waited.text).toContain(`/requests/${created.data.id}`);
  });

  it("a gate whose deadline passes returns the declared default (timed_out)", async () => {
    const client = await connect({ AIRLOCK_MCP_MAX_WAIT_MS: "15000" });
    const done = await call(client, "request_approval", {
      ...deploy,
      timeoutSeconds: 1,
      wait: true,
    });
    expect(done.data.status).toBe("timed_out");
    expect(done.data.outcome).toBe("timed_out");
  });

  it("refuses onTimeout approve: an agent cannot approve itself by a short deadline", async () => {
    const client = await connect();
    const approving = await call(client, "request_approval", {
      title: "Rotate logs",
      timeoutSeconds: 0.001,
      onTimeout: "approve",
      wait: true,
    });
    expect(approving.result.isError).toBe(true);
    expect(approving.text).toMatch(/onTimeout/);
    const listed = await call(client, "list_pending", {});
    expect(JSON.stringify(listed.data)).not.toContain("Rotate logs");
  });

  it("bad input is a tool error with a clear message, and the server keeps serving", async () => {
    const client = await connect();
    const empty = await call(client, "request_approval", { title: "" });
    expect(empty.result.isError).toBe(true);
    expect(empty.text).toMatch(/title/);

    const wrongType = await call(client, "request_approval", {
      title: "x",
      timeoutSeconds: "soon",
    });
    expect(wrongType.result.isError).toBe(true);
    expect(wrongType.text).toMatch(/timeoutSeconds/);

    const missing = await call(client, "get_request", { id: "req_nope" });
    expect(missing.result.isError).toBe(true);
    expect(missing.text).toMatch(/req_nope/);

    const clash = await call(client, "request_approval", { title: "one", key: "k1" });
    expect(clash.result.isError).toBeFalsy();
    const clash2 = await call(client, "request_approval", { title: "two", key: "k1" });
    expect(clash2.result.isError).toBe(true);
    expect(clash2.text).toMatch(/k1|key/);

    const ok = await call(client, "list_pending", {});
    expect(ok.result.isError).toBeFalsy();
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const address = s.address();
      const port = typeof address === "object" && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** POSTs an empty JSON object to 127.0.0.1:<port>/mcp with these headers (node:http, which lets a
 * test set Host); resolves with the status. */
function postStatus(port: number, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        path: "/mcp",
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end("{}");
  });
}

/** Starts `airlock mcp --http` on a free port; resolves once it listens, with the stderr line. */
async function startHttp(extraEnv: Record<string, string> = {}) {
  const port = await freePort();
  const child = spawn(process.execPath, [...mcpArgs(), "--db", db, "--http", String(port)], {
    env: baseEnv(extraEnv),
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const stdout = { text: "" };
  child.stdout.on("data", (d: Buffer) => {
    stdout.text += d.toString();
  });
  const stderr = await new Promise<string>((resolve, reject) => {
    let text = "";
    child.stderr.on("data", (d: Buffer) => {
      text += d.toString();
      if (text.includes("\n")) resolve(text);
    });
    child.once("exit", (code) => reject(new Error(`airlock mcp exited ${code}: ${text}`)));
  });
  const stop = async () => {
    child.kill("SIGTERM");
    return exited;
  };
  return { port, stderr, stdout, stop };
}

describe("airlock mcp --http", () => {
  it("serves the same tools over Streamable HTTP on 127.0.0.1 to holders of the printed token", async () => {
    const http = await startHttp();
    const { port } = http;
    try {
      const printed = new RegExp(
        `^airlock mcp: MCP endpoint http://127\\.0\\.0\\.1:${port}/mcp, bearer token (\\S+)\n$`,
      ).exec(http.stderr);
      expect(printed).not.toBeNull();
      const token = printed?.[1] ?? "";
      expect(token.length).toBeGreaterThanOrEqual(16);
      const client = new Client({ name: "airlock-test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      clients.push(client);
      const created = await call(client, "request_approval", deploy);
      expect(created.data.status).toBe("pending");
      await decide(created.data.id, "approve");
      const got = await call(client, "get_request", { id: created.data.id });
      expect(got.data).toMatchObject({ id: created.data.id, status: "approved" });
      const bad = await call(client, "get_request", { id: "" });
      expect(bad.result.isError).toBe(true);
      // A web page reaching the port through another name (DNS rebinding) is refused.
      expect(
        await postStatus(port, { host: "evil.example", authorization: `Bearer ${token}` }),
      ).toBe(403);
      const fromPage = await fetch(`http://127.0.0.1:${port}/mcp`, {
        method: "POST",
        headers: {
          origin: "https://evil.example",
          "content-type": "application/json",
          authorization: `Bearer ${token}`,
        },
        body: "{}",
      });
      expect(fromPage.status).toBe(403);
      await fromPage.body?.cancel();
    } finally {
      for (const c of clients.splice(0)) await c.close();
      expect(await http.stop()).toBe(0);
    }
    expect(http.stdout.text).toBe("");
  }, 60_000);

  it("answers 401 without the bearer token or with a wrong one, and lists nothing", async () => {
    const token = "a-long-enough-operator-token";
    const http = await startHttp({ AIRLOCK_MCP_TOKEN: token });
    const { port } = http;
    try {
      expect(http.stderr).toBe(
        `airlock mcp: MCP endpoint http://127.0.0.1:${port}/mcp, bearer token from AIRLOCK_MCP_TOKEN\n`,
      );
      expect(await postStatus(port, {})).toBe(401);
      expect(await postStatus(port, { authorization: "Bearer wrong-token-of-some-length" })).toBe(
        401,
      );
      expect(await postStatus(port, { authorization: token })).toBe(401);
      const anonymous = new Client({ name: "airlock-test", version: "1.0.0" });
      await expect(
        anonymous.connect(
          new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)),
        ),
      ).rejects.toThrow();
      const client = new Client({ name: "airlock-test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      clients.push(client);
      const listed = await call(client, "list_pending", {});
      expect(listed.result.isError).toBeFalsy();
    } finally {
      for (const c of clients.splice(0)) await c.close();
      expect(await http.stop()).toBe(0);
    }
  }, 60_000);

  it("refuses an AIRLOCK_MCP_TOKEN shorter than 16 characters in one line", async () => {
    const r = await runCli(["mcp", "--db", db, "--http", String(await freePort())], {
      ...baseEnv(),
      AIRLOCK_MCP_TOKEN: "short",
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split("\n")).toEqual([
      "airlock: AIRLOCK_MCP_TOKEN is too short (5 characters); use at least 16, or unset it to get a random token",
    ]);
  });
});

describe("airlock mcp --http, port taken", () => {
  it("says the port is in use in one line and exits 4", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const address = taken.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      const child = spawn(process.execPath, [...mcpArgs(), "--db", db, "--http", String(port)], {
        env: baseEnv(),
        cwd: ROOT,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      expect(code).toBe(4);
      expect(stderr.trim().split("\n")).toEqual([
        `airlock: 127.0.0.1:${port} is already in use; choose another port with --http`,
      ]);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });
});

describe("airlock mcp against a server (AIRLOCK_URL, AIRLOCK_TOKEN)", () => {
  it("opens the gate on the server as the token's principal; the pending answer links its inbox page", async () => {
    const server = await startTestServer();
    try {
      const client = await connect({
        AIRLOCK_URL: server.url,
        AIRLOCK_TOKEN: server.tokens.agent,
        AIRLOCK_MCP_MAX_WAIT_MS: "500",
      });
      const first = await call(client, "request_approval", { ...deploy, wait: true });
      expect(first.data.status).toBe("pending");
      const link = `${server.url}/requests/${first.data.id}`;
      expect(first.data.inbox).toBe(link);
      expect(first.text).toContain(link);
      expect((await server.airlock.get(first.data.id)).requester).toBe("bot");

      const again = await call(client, "request_approval", { ...deploy, wait: true });
      expect(again.data.id).toBe(first.data.id);

      await server.airlock.decide(first.data.id, {
        outcome: "approved",
        reviewer: "alice",
        groups: ["ops"],
      });
      const waited = await call(client, "wait_for_decision", { id: first.data.id });
      expect(waited.data).toMatchObject({ status: "approved", reviewer: "alice" });
    } finally {
      for (const c of clients.splice(0)) await c.close();
      await server.close();
    }
  });
});

describe("createMcpServer (airlock/mcp) embedded", () => {
  it("serves an in-process engine to a client", async () => {
    const airlock = await createAirlock({ store: memoryStore() });
    const server = createMcpServer(airlock, { requester: "agent", maxWaitMs: 200 });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "embedded", version: "1.0.0" });
    try {
      await client.connect(clientSide);
      const created = await call(client, "request_approval", {
        title: "Pay invoice 42",
        wait: true,
      });
      expect(created.data.status).toBe("pending");
      expect((await airlock.get(created.data.id)).requester).toBe("agent");
      await airlock.decide(created.data.id, {
        outcome: "revise",
        reviewer: "alice",
        comment: "split it in two",
      });
      const got = await call(client, "get_request", { id: created.data.id });
      expect(got.data).toMatchObject({ status: "revise", comment: "split it in two" });
      expect(got.text).toContain("split it in two");
    } finally {
      await client.close();
      await server.close();
      await airlock.close();
    }
  });
});

describe("shared MCP helpers", () => {
  it("the bound comes from AIRLOCK_MCP_MAX_WAIT_MS, never above 45 s; bad values are named", () => {
    expect(maxWaitMs({})).toBe(BOUNDED_WAIT_MS);
    expect(maxWaitMs({ AIRLOCK_MCP_MAX_WAIT_MS: "1000" })).toBe(1000);
    expect(maxWaitMs({ AIRLOCK_MCP_MAX_WAIT_MS: "600000" })).toBe(45_000);
    expect(() => maxWaitMs({ AIRLOCK_MCP_MAX_WAIT_MS: "soon" })).toThrow(
      /AIRLOCK_MCP_MAX_WAIT_MS.*soon/,
    );
  });

  it("the inbox link and the pending answer", async () => {
    expect(inboxLink("req_1", {})).toBeUndefined();
    expect(inboxLink("req_1", { AIRLOCK_URL: "https://airlock.example/" })).toBe(
      "https://airlock.example/requests/req_1",
    );
    const airlock = await createAirlock({ store: memoryStore() });
    try {
      const r = await airlock.request({ title: "Rotate keys", timeoutMs: 60_000 });
      const answer = pendingAnswer(r, "https://airlock.example/requests/x");
      expect(answer.structuredContent).toMatchObject({
        status: "pending",
        id: r.id,
        title: "Rotate keys",
        inbox: "https://airlock.example/requests/x",
        deadline: new Date(r.deadline as number).toISOString(),
      });
      expect(answer.content[0]?.text).toContain(r.id);
      expect(answer.content[0]?.text).toContain("https://airlock.example/requests/x");
    } finally {
      await airlock.close();
    }
  });
});
