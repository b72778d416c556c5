// `airlock mcp`'s request_approval takes the JSON Schema of its args (issue 33, item 3): embedded in
// process over the HTTP client of a real server on loopback given no schema of its own, an edit of
// the wrong type is refused there with 422 and the request stays pending; the agent reads the
// fitting edit back.
import { Client } from "@modelcontextprotocol/client";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMcpServer } from "../../src/adapters/mcp.js";
import { createClient } from "../../src/client/index.js";
import { startTestServer, type TestServer } from "../server/helpers.js";

let s: TestServer;
beforeEach(async () => {
  s = await startTestServer();
});
afterEach(async () => {
  await s.close();
});

const argsSchema = {
  type: "object",
  properties: { amountCents: { type: "integer", minimum: 1 }, payee: { type: "string" } },
  required: ["amountCents", "payee"],
};

describe("airlock mcp: request_approval with argsSchema", () => {
  it("carries the schema; a wrongly typed edit gets 422, a fitting one reaches the agent", async () => {
    const server = createMcpServer(createClient({ url: s.url, token: s.tokens.agent }), {
      maxWaitMs: 200,
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "args-schema", version: "1.0.0" });
    try {
      await client.connect(clientSide);
      const { tools } = await client.listTools();
      expect(
        Object.keys(tools.find((t) => t.name === "request_approval")?.inputSchema.properties ?? {}),
      ).toContain("argsSchema");
      const created = await client.callTool({
        name: "request_approval",
        arguments: { title: "Pay ACME", args: { amountCents: 480000, payee: "ACME" }, argsSchema },
      });
      const id = (created.structuredContent as { id: string }).id;
      expect((await s.airlock.get(id)).argsSchema).toEqual(argsSchema);
      const lots = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
        outcome: "approved",
        editedArgs: { amountCents: "lots", payee: "ACME" },
      });
      expect(lots.status).toBe(422);
      expect(lots.body.detail).toContain('amountCents: expected a number, got the text "lots"');
      expect((await s.airlock.get(id)).status).toBe("pending");
      const ok = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
        outcome: "approved",
        editedArgs: { amountCents: 400000, payee: "ACME" },
      });
      expect(ok.status).toBe(200);
      const decided = await client.callTool({ name: "wait_for_decision", arguments: { id } });
      expect(decided.structuredContent).toMatchObject({
        status: "approved",
        editedArgs: { amountCents: 400000, payee: "ACME" },
      });
      // A schema that is not one is refused when the request is made, as a tool error.
      const broken = await client.callTool({
        name: "request_approval",
        arguments: { title: "Pay", args: {}, argsSchema: { type: "no-such-type" } },
      });
      expect(broken.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});
