// `airlock mcp`: Airlock as an MCP server, on stdio (the default; stdout is the protocol, so every
// log goes to stderr) or Streamable HTTP on 127.0.0.1 with --http PORT.
import { createRequire } from "node:module";
import { serve } from "@hono/node-server";
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import type { Command } from "commander";
import { createMcpServer } from "../../mcp/server.js";
import { CliError, type GlobalOptions, withGate } from "../context.js";
import { positiveInt } from "../parse.js";

interface McpOptions {
  http?: number;
  requester?: string;
}

function version(): string {
  return (createRequire(import.meta.url)("airlock/package.json") as { version: string }).version;
}

/** Resolves on SIGINT/SIGTERM (or `extra`), removing its listeners. */
function untilStopped(extra?: (stop: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    extra?.(stop);
  });
}

export function registerMcp(program: Command, globals: () => GlobalOptions): void {
  program
    .command("mcp")
    .description(
      "serve Airlock to MCP clients (tools request_approval, wait_for_decision, get_request, list_pending): stdio, or Streamable HTTP on 127.0.0.1 with --http",
    )
    .option(
      "--http <port>",
      "serve Streamable HTTP on 127.0.0.1:<port> (/mcp) instead of stdio",
      positiveInt("--http"),
    )
    .option("--requester <name>", "who asks, on the local database (default mcp)")
    .action(async (opts: McpOptions) => {
      await withGate(globals(), async ({ api, remote }) => {
        const requester = opts.requester ?? (remote ? undefined : "mcp");
        const make = () =>
          createMcpServer(api, {
            version: version(),
            ...(requester !== undefined ? { requester } : {}),
          });
        if (opts.http !== undefined) {
          const handler = createMcpHandler(() => make(), {
            onerror: (err) => process.stderr.write(`airlock mcp: ${err.message}\n`),
          });
          const httpServer = serve({
            hostname: "127.0.0.1",
            port: opts.http,
            fetch: (req) => {
              const path = new URL(req.url).pathname;
              if (path !== "/mcp") {
                return new Response("Not found; the MCP endpoint is /mcp\n", { status: 404 });
              }
              // Loopback only: a web page reaching 127.0.0.1 (DNS rebinding, a foreign Origin) is refused.
              const refused =
                hostHeaderValidationResponse(req, localhostAllowedHostnames()) ??
                originValidationResponse(req, localhostAllowedOrigins());
              if (refused) return refused;
              return handler.fetch(req);
            },
          });
          await new Promise<void>((resolve, reject) => {
            httpServer.once("listening", resolve);
            httpServer.once("error", (err: NodeJS.ErrnoException) => {
              reject(
                err.code === "EADDRINUSE"
                  ? new CliError(
                      `127.0.0.1:${opts.http} is already in use; choose another port with --http`,
                    )
                  : err,
              );
            });
          });
          process.stderr.write(
            `airlock mcp: Streamable HTTP on http://127.0.0.1:${opts.http}/mcp\n`,
          );
          await untilStopped();
          await handler.close();
          await new Promise<void>((resolve) => {
            httpServer.close(() => resolve());
            (httpServer as { closeAllConnections?: () => void }).closeAllConnections?.();
          });
          return;
        }
        const server = make();
        await server.connect(new StdioServerTransport());
        await untilStopped((stop) => {
          server.server.onclose = stop;
          process.stdin.once("end", stop);
          process.stdin.once("close", stop);
        });
        await server.close();
      });
    });
}
