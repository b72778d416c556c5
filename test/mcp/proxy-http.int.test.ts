// createMcpProxy embedded in process, in front of an upstream MCP server over Streamable HTTP.
import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/client";
import { createMcpHandler, InMemoryTransport, McpServer } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { createMcpProxy, type McpProxy } from "../../src/mcp/proxy.js";
import { parseProxyConfig } from "../../src/mcp/proxy-config.js";
import { memoryStore } from "../../src/store/memory.js";

const written: unknown[] = [];
let http: ServerType;
let engine: Airlock;
let proxy: McpProxy;
let client: Client;

function upstream(): McpServer {
  const server = new McpServer({ name: "http-upstream", version: "1" });
  server.registerTool(
    "pay",
    { inputSchema: z.object({ to: z.string(), amount: z.number() }) },
    async (args) => {
      written.push(args);
      return { content: [{ type: "text", text: `paid ${args.amount} to ${args.to}` }] };
    },
  );
  return server;
}

beforeAll(async () => {
  const handler = createMcpHandler(() => upstream());
  http = serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => handler.fetch(req) });
  await new Promise<void>((resolve) => http.once("listening", () => resolve()));
  const { port } = http.address() as AddressInfo;
  engine = await createAirlock({ store: memoryStore() });
  proxy = createMcpProxy({
    api: engine,
    config: parseProxyConfig({
      rules: [
        { name: "large payments", tools: "pay", when: { amount: { gt: 100 } } },
        { name: "small payments", tools: "pay", action: "allow" },
      ],
    }),
    upstream: { url: `http://127.0.0.1:${port}/mcp` },
    requester: "agent",
    log: () => {},
  });
  await proxy.start();
  const [clientSide, proxySide] = InMemoryTransport.createLinkedPair();
  await proxy.server.connect(proxySide);
  client = new Client({ name: "embedded-test", version: "1" });
  await client.connect(clientSide);
});

afterAll(async () => {
  await client?.close();
  await proxy?.close();
  await engine?.close();
  await new Promise<void>((resolve) => {
    http.close(() => resolve());
    (http as { closeAllConnections?: () => void }).closeAllConnections?.();
  });
});

describe("createMcpProxy over a Streamable HTTP upstream", () => {
  it("passes a call under the amount and gates one over it, forwarding the edited args once", async () => {
    const small = await client.callTool({ name: "pay", arguments: { to: "bob", amount: 5 } });
    expect(small.isError).toBeFalsy();
    expect(written).toEqual([{ to: "bob", amount: 5 }]);

    const call = client.callTool({ name: "pay", arguments: { to: "eve", amount: 5000 } });
    let gateId: string | undefined;
    while (!gateId) {
      gateId = (await engine.list({ status: "pending" })).items[0]?.id;
      if (!gateId) await new Promise((r) => setTimeout(r, 10));
    }
    const gate = await engine.get(gateId);
    expect(gate).toMatchObject({ action: "mcp.pay", requester: "agent" });
    await engine.decide(gateId, {
      outcome: "approved",
      reviewer: "alice",
      editedArgs: { to: "eve", amount: 500 },
    });
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(written).toEqual([
      { to: "bob", amount: 5 },
      { to: "eve", amount: 500 },
    ]);
    expect((await engine.get(gateId)).executedAt).toBeDefined();
  });

  it("reports progress while a gated call waits", async () => {
    const progress: string[] = [];
    let approve: (() => void) | undefined;
    const call = client.callTool(
      { name: "pay", arguments: { to: "zed", amount: 700 } },
      {
        onprogress: (p) => {
          progress.push(p.message ?? "");
          approve?.();
        },
      },
    );
    let gateId: string | undefined;
    while (!gateId) {
      gateId = (await engine.list({ status: "pending" })).items[0]?.id;
      if (!gateId) await new Promise((r) => setTimeout(r, 10));
    }
    const id = gateId;
    approve = () => {
      approve = undefined;
      void engine.decide(id, { outcome: "approved", reviewer: "alice" });
    };
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(progress[0]).toBe(`waiting for approval of request ${id}`);
    expect(written.at(-1)).toEqual({ to: "zed", amount: 700 });
  }, 30_000);
});
