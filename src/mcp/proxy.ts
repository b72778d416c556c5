// `createMcpProxy(options)`: an MCP server that lists an upstream MCP server's tools unchanged and
// forwards calls, opening an Airlock gate first for the calls its configuration gates. A gated call
// is forwarded only once approved, with the reviewer's edited args when edited, exactly once
// (`runApproved`: verify → claim → run → record the outcome after the upstream answered). A proxy
// that dies mid-call leaves a claim that turns "not known to have run" at the end of its lease; the
// same call made again re-attaches to that gate (run again only for an `idempotent` rule, else a
// person settles it). A rejection, a revise or a timeout comes back as a tool
// error carrying the reviewer's comment. Calls that pass are audited (`auto_executed`, redacted by
// the engine). No call holds longer than the MCP bound: past it the answer is "pending", and the
// same call again re-attaches to the same gate (its key is a hash of the tool and the args).
// The proxy never asks the client's own user to approve (form elicitation would be self-approval).

import type { CallToolResult, ServerContext } from "@modelcontextprotocol/server";
import { Server } from "@modelcontextprotocol/server";
import { compileArgsSchema } from "../core/args-schema.js";
import { canonicalJson, sha256 } from "../core/hash.js";
import type { ApprovalRequest, RequestInput } from "../core/schemas.js";
import { isPending } from "../core/state.js";
import type { AirlockApi } from "../engine/api.js";
import { runApproved } from "../engine/run-approved.js";
import type { ProxyConfig, ProxyRule } from "./proxy-config.js";
import { judgeCall } from "./proxy-rules.js";
import { Upstream, type UpstreamSpec } from "./proxy-upstream.js";
import { BOUNDED_WAIT_MS, inboxLink, pendingAnswer, waitBounded } from "./shared.js";

export type { UpstreamSpec } from "./proxy-upstream.js";

export interface McpProxyOptions {
  /** The gate: an engine (`createAirlock`) or a client (`createClient`). */
  api: AirlockApi;
  config: ProxyConfig;
  upstream: UpstreamSpec;
  /** Who asks, for a local engine; over HTTP leave it out (the token's name is the requester).
   * Also the actor of `auto_executed` events. @default "mcp-proxy" */
  requester?: string;
  /** Set when `api` is a client: the requester is then the token's name. */
  remote?: boolean;
  /** How long a gated call waits before answering "pending" (at most BOUNDED_WAIT_MS). */
  maxWaitMs?: number;
  /** The inbox page of a request, shown in the pending answer. @default from AIRLOCK_URL */
  inboxUrl?: (id: string) => string | undefined;
  /** Lines for the operator (stderr in the CLI; stdout is the protocol). */
  log?: (line: string) => void;
}

export interface McpProxy {
  /** The MCP server; connect it to a transport (`StdioServerTransport` in the CLI). */
  server: Server;
  upstream: Upstream;
  /** Starts the upstream and lists its tools (fails when it cannot be started). */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** How many times the same call may have been gated before; bounds the key lookup. */
const MAX_GENERATIONS = 10_000;
/** A decided gate whose outcome was never answered stays the answer to the same call this long. */
const UNANSWERED_WINDOW_MS = 3600_000;

export function createMcpProxy(options: McpProxyOptions): McpProxy {
  const { api, config } = options;
  const log =
    options.log ?? ((line: string) => process.stderr.write(`airlock mcp-proxy: ${line}\n`));
  const upstream = new Upstream(options.upstream, log);
  const requester = options.remote ? undefined : (options.requester ?? "mcp-proxy");
  const actor = options.requester ?? "mcp-proxy";
  const maxMs = Math.min(options.maxWaitMs ?? BOUNDED_WAIT_MS, BOUNDED_WAIT_MS);
  const inbox = options.inboxUrl ?? ((id: string) => inboxLink(id));
  /** Ids whose outcome this process answered, so the same call again opens a new gate. */
  const answered = new Set<string>();
  /** The newest generation seen per call hash, so lookups start there. */
  const generations = new Map<string, number>();

  const server = new Server(
    { name: "airlock-mcp-proxy", version: "1" },
    { capabilities: { tools: {} } },
  );

  server.setRequestHandler("tools/list", async () => {
    try {
      return { tools: await upstream.listTools() };
    } catch (err) {
      log((err as Error).message);
      throw err;
    }
  });

  server.setRequestHandler("tools/call", async (request, ctx) => {
    const tool = request.params.name;
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    try {
      return await handleCall(tool, args, ctx, request.params._meta?.progressToken);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log(`${tool}: ${message}`);
      return toolError(`Airlock proxy: ${tool} was not run: ${message}`);
    }
  });

  async function handleCall(
    tool: string,
    args: Record<string, unknown>,
    ctx: ServerContext,
    progressToken: string | number | undefined,
  ): Promise<CallToolResult> {
    const json = canonicalJson(args);
    const bytes = Buffer.byteLength(json);
    if (bytes > config.maxArgsBytes) {
      return toolError(
        `Airlock proxy: the arguments of ${tool} are ${bytes} bytes of JSON, over the limit of ${config.maxArgsBytes} bytes (maxArgsBytes); nothing was run`,
      );
    }
    const described = await upstream.tool(tool);
    const readOnly = described?.annotations?.readOnlyHint === true;
    const verdict = judgeCall(config, tool, args, readOnly);
    if (verdict.action === "allow") {
      await api.record({
        type: "auto_executed",
        actor,
        data: { via: "mcp-proxy", tool, args, because: verdict.because },
      });
      return upstream.call(tool, args);
    }
    const gate = await openGate(
      tool,
      args,
      json,
      verdict.because,
      verdict.rule,
      checkableSchema(described?.inputSchema),
    );
    const onProgress =
      progressToken === undefined
        ? undefined
        : async (waited: number, total: number) => {
            await ctx.mcpReq.notify({
              method: "notifications/progress",
              params: {
                progressToken,
                progress: waited,
                total,
                message: `waiting for approval of request ${gate.id}`,
              },
            });
          };
    const decided = await waitBounded(api, gate.id, {
      maxMs,
      signal: ctx.mcpReq.signal,
      ...(onProgress ? { onProgress } : {}),
    });
    if (isPending(decided)) {
      const pending = pendingAnswer(decided, inbox(decided.id));
      return { content: pending.content, isError: true };
    }
    // The approval is spent when runApproved claims it: start the upstream first, so an upstream
    // that cannot be started leaves the approval for the same call made again.
    try {
      await upstream.ensureRunning();
    } catch (err) {
      return toolError(
        `Airlock: the call to ${tool} was not run: ${(err as Error).message}. Request ${decided.id} stays ${decided.status}; make the same call again once the upstream runs`,
      );
    }
    const result = await runApproved(
      api,
      decided,
      (approvedArgs) => upstream.call(tool, approvedArgs),
      { leaseMs: Math.round(config.leaseSeconds * 1000) },
    );
    answered.add(decided.id);
    if (result.ok) return result.value;
    return toolError(
      `Airlock: the call to ${tool} was not run (${result.reason}): ${result.detail}`,
    );
  }

  /** The gate for this call: the one a previous identical call opened and whose outcome was not
   * answered yet, else a new one. */
  async function openGate(
    tool: string,
    args: Record<string, unknown>,
    json: string,
    because: string,
    rule: ProxyRule | undefined,
    argsSchema: Record<string, unknown> | undefined,
  ): Promise<ApprovalRequest> {
    const hash = sha256(`${tool}\n${json}`);
    let generation = generations.get(hash) ?? 0;
    const lookup = requester === undefined ? {} : { requester };
    for (; generation < MAX_GENERATIONS; generation++) {
      const key = `mcp:${hash}:${generation}`;
      const existing = await api.getByKey(key, lookup);
      if (!existing) break;
      if (reattachable(existing)) {
        generations.set(hash, generation);
        return existing;
      }
    }
    generations.set(hash, generation);
    const preview = previewOf(tool, args);
    const input: RequestInput = {
      key: `mcp:${hash}:${generation}`,
      action: `mcp.${tool}`.slice(0, 200),
      title: `Run MCP tool ${tool}`.slice(0, 500),
      summary: `An agent asks to call the MCP tool \`${tool}\` (${because}). Approve to run it once with these arguments, edit the arguments, or reject with a comment the agent will read.`,
      args,
      preview,
      allowed: ["approve", "reject", "revise", "edit"],
      metadata: { mcp: { tool, rule: because } },
      ...(requester === undefined ? {} : { requester }),
      ...(rule?.approvers ? { approvers: rule.approvers } : {}),
      ...(rule?.timeoutSeconds !== undefined
        ? { timeoutMs: Math.round(rule.timeoutSeconds * 1000) }
        : {}),
      ...(rule?.onTimeout ? { onTimeout: rule.onTimeout } : {}),
      ...(rule?.risk ? { risk: rule.risk } : {}),
      ...(rule?.idempotent ? { idempotent: true } : {}),
      // The tool's own input schema: a reviewer's edit is checked against it wherever it is made.
      ...(argsSchema ? { argsSchema } : {}),
    };
    const created = await api.request(input);
    log(`${tool}: gate ${created.id} opened (${because})`);
    return created;
  }

  function reattachable(r: ApprovalRequest): boolean {
    if (isPending(r)) return true;
    if (r.status === "approved") {
      // An approval not yet run, or whose run is not known to have happened (the proxy died
      // between its claim and its report): the same call made again goes to it, and runApproved
      // runs it (unclaimed, released, or idempotent) or says why not (a person must settle it).
      const x = r.execution;
      if (!x) return r.executedAt === undefined;
      return x.state === "claimed" || x.state === "unknown" || x.state === "released";
    }
    if (answered.has(r.id)) return false;
    const decidedAt = r.decision?.decidedAt ?? r.createdAt;
    return Date.now() - decidedAt < UNANSWERED_WINDOW_MS;
  }

  return {
    server,
    upstream,
    async start() {
      const tools = await upstream.listTools();
      log(`upstream ${upstream.describe()} lists ${tools.length} tools`);
    },
    async close() {
      await server.close().catch(() => {});
      await upstream.close();
    },
  };
}

/** The upstream tool's input schema when Airlock can check args against it, else undefined (the
 * gate then opens without one rather than failing the call). */
function checkableSchema(schema: unknown): Record<string, unknown> | undefined {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return undefined;
  try {
    compileArgsSchema(schema as Record<string, unknown>);
    return schema as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function toolError(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/** The most characters of a call's arguments its preview repeats. */
export const PREVIEW_ARGS_CHARS = 20_000;

/** What the reviewer sees at a glance: the call as the agent made it. The exact arguments are the
 * request's `args`, which every surface shows in full (core/review-view.ts), or, where it cannot,
 * offers no approval; a preview of a longer call is cut and says by how much, so the cut is never
 * mistaken for the whole call. */
export function previewOf(tool: string, args: Record<string, unknown>): string {
  const body = JSON.stringify(args, null, 2);
  if (body.length <= PREVIEW_ARGS_CHARS) return `${tool}(${body})`;
  let end = PREVIEW_ARGS_CHARS;
  const code = body.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  const cut = body.length - end;
  return `${tool}(${body.slice(0, end)}\n… ${cut.toLocaleString("en")} more characters of the arguments not shown in this preview: the exact arguments are shown apart, in full`;
}
