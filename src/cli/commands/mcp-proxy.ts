// `airlock mcp-proxy --config airlock-mcp.json -- <command> [args...]`: an MCP server on stdio in
// front of an upstream MCP server (a child over stdio, or `--upstream-url` over Streamable HTTP),
// gating the calls its configuration names. stdout is the protocol: logs go to stderr.
import type { Command } from "commander";
import type { UpstreamSpec } from "../../mcp/proxy.js";
import { loadProxyConfig, ProxyConfigError, parseProxyConfig } from "../../mcp/proxy-config.js";
import { maxWaitMs } from "../../mcp/shared.js";
import { CliError, type GlobalOptions, withGate } from "../context.js";
import { needPeer } from "../peer.js";

interface McpProxyOptions {
  config?: string;
  upstreamUrl?: string;
  requester?: string;
  localConfirm?: boolean;
}

export function registerMcpProxy(program: Command, globals: () => GlobalOptions): void {
  program
    .command("mcp-proxy")
    .description(
      "an MCP server on stdio in front of another MCP server: lists its tools unchanged and forwards calls, asking a person through Airlock first for the calls the config gates",
    )
    .argument("[upstream...]", "after --: the upstream MCP server's command and its arguments")
    .option(
      "--config <file>",
      "the rules (JSON, see docs/guide/mcp.md); without it every call is gated except read-only tools",
    )
    .option(
      "--upstream-url <url>",
      "an upstream MCP server over Streamable HTTP instead of a command",
    )
    .option("--requester <name>", "who asks, on the local database (default mcp-proxy)")
    .option(
      "--local-confirm",
      "let the MCP client's own user approve through form elicitation (self-approval; not supported)",
    )
    .action(async (upstreamArgv: string[], opts: McpProxyOptions) => {
      if (opts.localConfirm) {
        throw new CliError(
          "--local-confirm (approval by the client's own user through form elicitation) is not supported: a gated call is decided by a reviewer in Airlock",
        );
      }
      let config: ReturnType<typeof loadProxyConfig>;
      try {
        config = opts.config ? loadProxyConfig(opts.config) : parseProxyConfig({});
      } catch (err) {
        if (err instanceof ProxyConfigError) throw new CliError(err.message);
        throw err;
      }
      const upstream = upstreamSpec(upstreamArgv, opts.upstreamUrl);
      let waitMs: number;
      try {
        waitMs = maxWaitMs();
      } catch (err) {
        throw new CliError((err as Error).message);
      }
      // The MCP SDK is an optional peer dependency, loaded by this command alone.
      const [{ StdioServerTransport }, { createMcpProxy }] = await needPeer("mcp-proxy", () =>
        Promise.all([import("@modelcontextprotocol/server/stdio"), import("../../mcp/proxy.js")]),
      );
      await withGate(globals(), async ({ api, remote }) => {
        const proxy = createMcpProxy({
          api,
          config,
          upstream,
          remote,
          maxWaitMs: waitMs,
          ...(opts.requester ? { requester: opts.requester } : {}),
        });
        try {
          await proxy.start();
        } catch (err) {
          await proxy.close();
          throw new CliError((err as Error).message);
        }
        const transport = new StdioServerTransport();
        const closed = new Promise<void>((resolve) => {
          transport.onclose = () => resolve();
          process.stdin.once("end", () => resolve());
          process.once("SIGTERM", () => resolve());
          process.once("SIGINT", () => resolve());
        });
        await proxy.server.connect(transport);
        await closed;
        await proxy.close();
      });
    });
}

function upstreamSpec(argv: string[], url: string | undefined): UpstreamSpec {
  if (url !== undefined) {
    if (argv.length > 0) {
      throw new CliError("give either --upstream-url or an upstream command after --, not both");
    }
    try {
      new URL(url);
    } catch {
      throw new CliError(`--upstream-url expects a URL, got \`${url}\``);
    }
    return { url };
  }
  const [command, ...args] = argv;
  if (!command) {
    throw new CliError(
      "mcp-proxy needs the upstream MCP server: `airlock mcp-proxy --config airlock-mcp.json -- <command> [args...]` or --upstream-url <url>",
    );
  }
  return { command, args };
}
