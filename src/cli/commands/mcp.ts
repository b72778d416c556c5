// `airlock mcp`: Airlock as an MCP server, on stdio (the default; stdout is the protocol, so every
// log goes to stderr) or Streamable HTTP on 127.0.0.1 with --http PORT, behind a bearer token
// (AIRLOCK_MCP_TOKEN, else one made at start and printed once on stderr).
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createRequire } from "node:module";
import { serve } from "@hono/node-server";
import type { Command } from "commander";
import { CliError, type GlobalOptions, withGate } from "../context.js";
import { positiveInt } from "../parse.js";
import { needPeer } from "../peer.js";

interface McpOptions {
  http?: number;
  requester?: string;
}

function version(): string {
  return (createRequire(import.meta.url)("airlock-hitl/package.json") as { version: string })
    .version;
}

/** The smallest AIRLOCK_MCP_TOKEN accepted. */
const MIN_TOKEN_LENGTH = 16;

/** The HTTP endpoint's bearer token: AIRLOCK_MCP_TOKEN, else a new random one (`generated`). */
function mcpHttpToken(env: NodeJS.ProcessEnv = process.env): {
  token: string;
  generated: boolean;
} {
  const given = env.AIRLOCK_MCP_TOKEN;
  if (given !== undefined && given !== "") {
    if (given.trim().length < MIN_TOKEN_LENGTH) {
      throw new CliError(
        `AIRLOCK_MCP_TOKEN is too short (${given.trim().length} characters); use at least ${MIN_TOKEN_LENGTH}, or unset it to get a random token`,
      );
    }
    return { token: given.trim(), generated: false };
  }
  return { token: randomBytes(24).toString("base64url"), generated: true };
}

/** Whether the request carries `Authorization: Bearer <token>` (compared in constant time). */
function bearerMatches(req: Request, token: string): boolean {
  const header = req.headers.get("authorization") ?? "";
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) return false;
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(match[1]), digest(token));
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
    .summary(
      "serve Airlock to MCP clients (tools request_approval, wait_for_decision, get_request, list_pending): stdio, or Streamable HTTP on 127.0.0.1 with --http",
    )
    .description(
      [
        "Serve Airlock to MCP clients (tools request_approval, wait_for_decision, get_request, list_pending): stdio, or Streamable HTTP on 127.0.0.1 with --http.",
        "",
        "Local mode (on a database file, without AIRLOCK_URL) is single-user: the server acts as one agent, --requester, creates requests under that name and lists and reads only that agent's requests. It is not a boundary between people: whoever can run it can read the database file itself. For several agents or users, run `airlock serve` and give each agent its own token (AIRLOCK_URL, AIRLOCK_TOKEN).",
      ].join("\n"),
    )
    .option(
      "--http <port>",
      "serve Streamable HTTP on 127.0.0.1:<port> (/mcp) instead of stdio, behind a bearer token (AIRLOCK_MCP_TOKEN, else one printed on stderr at start)",
      positiveInt("--http"),
    )
    .option(
      "--requester <name>",
      "local mode: the agent this server acts as (default mcp), whose requests alone it lists and reads; against a server the token names the agent",
    )
    .action(async (opts: McpOptions) => {
      // The MCP SDK is an optional peer dependency, loaded by this command alone.
      const [sdk, { StdioServerTransport }, { createMcpServer }] = await needPeer("mcp", () =>
        Promise.all([
          import("@modelcontextprotocol/server"),
          import("@modelcontextprotocol/server/stdio"),
          import("../../mcp/server.js"),
        ]),
      );
      const {
        createMcpHandler,
        hostHeaderValidationResponse,
        localhostAllowedHostnames,
        localhostAllowedOrigins,
        originValidationResponse,
      } = sdk;
      await withGate(globals(), async ({ api, remote }) => {
        const requester = opts.requester ?? (remote ? undefined : "mcp");
        const make = () =>
          createMcpServer(api, {
            version: version(),
            ...(requester !== undefined ? { requester } : {}),
          });
        if (opts.http !== undefined) {
          const { token, generated } = mcpHttpToken();
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
              // Any local process can reach the port: only holders of the token are served.
              if (!bearerMatches(req, token)) {
                return new Response(
                  "Unauthorized: send Authorization: Bearer <token> (AIRLOCK_MCP_TOKEN, or the token airlock mcp printed at start)\n",
                  {
                    status: 401,
                    headers: { "www-authenticate": 'Bearer realm="airlock-mcp"' },
                  },
                );
              }
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
            `airlock mcp: MCP endpoint http://127.0.0.1:${opts.http}/mcp, bearer token ${
              generated ? token : "from AIRLOCK_MCP_TOKEN"
            }\n`,
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
