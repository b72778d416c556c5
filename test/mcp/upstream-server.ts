// A small upstream MCP server for the proxy's tests (stdio): `write_file` appends a line with its
// arguments to the file named by UPSTREAM_LOG, `read_file` (readOnlyHint) reads it back.
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

const log = process.env.UPSTREAM_LOG;
if (!log) throw new Error("UPSTREAM_LOG must name the file write_file appends to");
// A test makes the upstream impossible to start by creating the file UPSTREAM_FAIL_IF names.
const failIf = process.env.UPSTREAM_FAIL_IF;
if (failIf && existsSync(failIf)) {
  process.stderr.write(`test upstream: ${failIf} exists; refusing to start\n`);
  process.exit(3);
}

const server = new McpServer({ name: "test-upstream", version: "1" });

server.registerTool(
  "write_file",
  {
    description: "Appends text to a file (the test records each call as one JSON line)",
    inputSchema: z.object({ path: z.string(), content: z.string(), amount: z.number().optional() }),
  },
  async (args) => {
    appendFileSync(log, `${JSON.stringify(args)}\n`);
    return {
      content: [{ type: "text", text: `wrote ${args.content.length} characters to ${args.path}` }],
    };
  },
);

server.registerTool(
  "read_file",
  {
    description: "Reads the file back",
    inputSchema: z.object({ path: z.string() }),
    annotations: { readOnlyHint: true },
  },
  async (args) => {
    let text = "";
    try {
      text = readFileSync(log, "utf8");
    } catch {
      text = "";
    }
    return {
      content: [
        { type: "text", text: `${args.path}: ${text.split("\n").filter(Boolean).length} lines` },
      ],
    };
  },
);

server.registerTool(
  "crash",
  { description: "Exits the process (to test a dying upstream)", inputSchema: z.object({}) },
  async () => {
    process.exit(1);
  },
);

await server.connect(new StdioServerTransport());
