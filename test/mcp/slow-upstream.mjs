// An MCP upstream for the proxy's kill test (plain JavaScript: it starts without tsx): `transfer` waits `ms` milliseconds, then appends its
// arguments as one JSON line to the file UPSTREAM_LOG names (the tool's own record of what ran).
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

const log = process.env.UPSTREAM_LOG;
if (!log) throw new Error("UPSTREAM_LOG must name the file transfer appends to");

const server = new McpServer({ name: "slow-upstream", version: "1" });
server.registerTool(
  "transfer",
  {
    description: "Moves money, slowly",
    inputSchema: z.object({ to: z.string(), kind: z.string(), ms: z.number() }),
  },
  async (args) => {
    await new Promise((r) => setTimeout(r, args.ms));
    appendFileSync(log, `${JSON.stringify(args)}\n`);
    return { content: [{ type: "text", text: `sent to ${args.to}` }] };
  },
);
await server.connect(new StdioServerTransport());
