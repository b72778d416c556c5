// The MCP proxy carries the upstream tool's inputSchema (issue 33, item 3), against a real Airlock
// server on loopback given no schema of its own (as `airlock serve`), with an agent token for the
// proxy and a reviewer token for the decisions: an edit of `amountCents` to "lots" is refused with
// 422 and the gate stays pending (the upstream is not called, the approval is not used up); a
// fitting edit is forwarded once.
import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/client";
import { createMcpHandler, InMemoryTransport, McpServer } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createClient } from "../../src/client/index.js";
import { createMcpProxy, type McpProxy } from "../../src/mcp/proxy.js";
import { parseProxyConfig } from "../../src/mcp/proxy-config.js";
import { eventually } from "../helpers.js";
import { startTestServer, type TestServer } from "../server/helpers.js";

const paid: unknown[] = [];
let http: ServerType;
let s: TestServer;
let proxy: McpProxy;
let client: Client;

function upstream(): McpServer {
  const server = new McpServer({ name: "payments", version: "1" });
  server.registerTool(
    "pay",
    { inputSchema: z.object({ amountCents: z.number().int().positive(), payee: z.string() }) },
    async (args) => {
      paid.push(args);
      return { content: [{ type: "text", text: `paid ${args.amountCents} to ${args.payee}` }] };
    },
  );
  return server;
}

beforeAll(async () => {
  const handler = createMcpHandler(() => upstream());
  http = serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => handler.fetch(req) });
  await new Promise<void>((resolve) => http.once("listening", () => resolve()));
  const { port } = http.address() as AddressInfo;
  s = await startTestServer();
  proxy = createMcpProxy({
    api: createClient({ url: s.url, token: s.tokens.agent, pollMs: 50 }),
    remote: true,
    config: parseProxyConfig({ rules: [{ name: "payments", tools: "pay" }] }),
    upstream: { url: `http://127.0.0.1:${port}/mcp` },
    log: () => {},
  });
  await proxy.start();
  const [clientSide, proxySide] = InMemoryTransport.createLinkedPair();
  await proxy.server.connect(proxySide);
  client = new Client({ name: "args-schema-test", version: "1" });
  await client.connect(clientSide);
});

afterAll(async () => {
  await client?.close();
  await proxy?.close();
  await s?.close();
  await new Promise<void>((resolve) => {
    http.close(() => resolve());
    (http as { closeAllConnections?: () => void }).closeAllConnections?.();
  });
});

describe("airlock mcp-proxy: the upstream tool's inputSchema, on a server with none of its own", () => {
  it("a wrongly typed edit gets 422 and forwards nothing; a fitting edit is forwarded once", async () => {
    const call = client.callTool({
      name: "pay",
      arguments: { amountCents: 480000, payee: "ACME" },
    });
    const id = await eventually(
      async () => (await s.airlock.list({ status: "pending" })).items[0]?.id ?? false,
      { timeoutMs: 10_000, what: "the proxy's gate" },
    );
    const gate = await s.airlock.get(id);
    expect(gate.argsSchema).toMatchObject({
      type: "object",
      properties: { amountCents: { type: "integer" }, payee: { type: "string" } },
    });
    const lots = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      editedArgs: { amountCents: "lots", payee: "ACME" },
    });
    expect(lots.status).toBe(422);
    expect(lots.body.field).toBe("editedArgs.amountCents");
    expect(lots.body.detail).toContain('amountCents: expected a number, got the text "lots"');
    expect((await s.airlock.get(id)).status).toBe("pending");
    expect(paid).toEqual([]);

    const ok = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      editedArgs: { amountCents: 400000, payee: "ACME" },
    });
    expect(ok.status).toBe(200);
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(paid).toEqual([{ amountCents: 400000, payee: "ACME" }]);
    expect((await s.airlock.get(id)).execution?.state).toBe("executed");
  });
});
