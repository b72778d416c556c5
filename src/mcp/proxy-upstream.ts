// The upstream MCP server behind `airlock mcp-proxy`: a child over stdio or a Streamable HTTP URL.
// A child that dies is started again on the next use, with backoff; when it cannot be, the call gets
// a tool error instead of hanging.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { CallToolResult, Tool } from "@modelcontextprotocol/server";

export type UpstreamSpec =
  | { command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { url: string };

/** Starts tried per use before giving up, and the first delay between them (doubling). */
const STARTS = 3;
const FIRST_BACKOFF_MS = 200;

export class Upstream {
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private closed = false;
  private failures = 0;
  tools = new Map<string, Tool>();

  constructor(
    private readonly spec: UpstreamSpec,
    private readonly log: (line: string) => void,
  ) {}

  describe(): string {
    return "url" in this.spec
      ? this.spec.url
      : [this.spec.command, ...(this.spec.args ?? [])].join(" ");
  }

  async listTools(): Promise<Tool[]> {
    const client = await this.ready();
    const { tools } = await client.listTools();
    this.tools = new Map(tools.map((t) => [t.name, t]));
    return tools;
  }

  /** The tool as last listed (listing again when unknown). */
  async tool(name: string): Promise<Tool | undefined> {
    if (!this.tools.has(name)) await this.listTools();
    return this.tools.get(name);
  }

  /** Starts the upstream when it is not running; throws when it cannot be started. */
  async ensureRunning(): Promise<void> {
    await this.ready();
  }

  async call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const client = await this.ready();
    return (await client.callTool({ name, arguments: args })) as CallToolResult;
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => {});
  }

  private async ready(): Promise<Client> {
    if (this.closed) throw new Error("the proxy is closing");
    if (this.client) return this.client;
    this.connecting ??= this.start().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async start(): Promise<Client> {
    let lastError: unknown;
    for (let attempt = 0; attempt < STARTS; attempt++) {
      if (this.failures > 0 || attempt > 0) {
        const delay = FIRST_BACKOFF_MS * 2 ** Math.min(attempt + this.failures - 1, 5);
        await new Promise((r) => setTimeout(r, delay));
      }
      if (this.closed) break;
      try {
        const client = new Client({ name: "airlock-mcp-proxy", version: "1" });
        const transport =
          "url" in this.spec
            ? new StreamableHTTPClientTransport(new URL(this.spec.url))
            : new StdioClientTransport({
                command: this.spec.command,
                args: this.spec.args ?? [],
                env: { ...upstreamEnvironment(), ...(this.spec.env ?? {}) },
                stderr: "inherit",
                ...(this.spec.cwd ? { cwd: this.spec.cwd } : {}),
              });
        client.onclose = () => {
          if (this.client === client) {
            this.client = undefined;
            if (!this.closed)
              this.log(`upstream ${this.describe()} closed; restarting on next use`);
          }
        };
        await client.connect(transport);
        this.client = client;
        this.failures = 0;
        return client;
      } catch (err) {
        lastError = err;
        this.failures++;
        this.log(`upstream ${this.describe()} failed to start: ${(err as Error).message}`);
      }
    }
    throw new Error(
      `the upstream MCP server (${this.describe()}) is not running and could not be started: ${
        lastError instanceof Error ? lastError.message : String(lastError)
      }`,
    );
  }
}

/** The proxy's environment without Airlock's own settings (AIRLOCK_*: the server's token, the
 * database, the audit key), which the gated server must not get: it could decide its own gates. */
export function upstreamEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && !k.toUpperCase().startsWith("AIRLOCK_")) out[k] = v;
  }
  return out;
}
