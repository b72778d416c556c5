// `createMcpServer(airlock)`: Airlock as an MCP server, so any MCP client (desktop assistants, IDE
// agents, custom agents) can ask a person. Four tools with stable names: request_approval,
// wait_for_decision, get_request, list_pending. No call holds longer than the bound (BOUNDED_WAIT_MS):
// past it the tool answers "pending" with the request id and the inbox link, and the same call made
// again re-attaches to the same gate (the idempotency key is derived from the arguments).
import { McpServer, type ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import { NotFoundError } from "../core/errors.js";
import { canonicalJson, sha256 } from "../core/hash.js";
import { sameIdentity } from "../core/identity.js";
import type { ApprovalRequest, RequestInput } from "../core/schemas.js";
import { isTerminal } from "../core/state.js";
import type { AirlockApi } from "../engine/api.js";
import { inboxLink, maxWaitMs, pendingAnswer, waitBounded } from "./shared.js";

export interface CreateMcpServerOptions {
  /** Who asks, on a local engine: the agent this server acts for. It creates requests under this
   * name and lists, reads and waits for this requester's requests only (another's is answered like a
   * missing one). Over HTTP (`createClient`) leave it unset: the token names the requester, and the
   * server shows the token only what it may see. */
  requester?: string;
  /** The longest a tool call waits, in ms (at most BOUNDED_WAIT_MS). @default AIRLOCK_MCP_MAX_WAIT_MS or 45000 */
  maxWaitMs?: number;
  /** The inbox page of a request, for the pending answer. @default AIRLOCK_URL + /requests/<id> */
  inboxUrl?: (id: string) => string | undefined;
  /** The server's name and version as MCP clients see them. */
  name?: string;
  version?: string;
}

/** The MCP tool names, stable across versions. */
export const MCP_TOOLS = [
  "request_approval",
  "wait_for_decision",
  "get_request",
  "list_pending",
] as const;

const item = z.union([
  z.string().min(1),
  z
    .object({ id: z.string().optional(), label: z.string().min(1), detail: z.string().optional() })
    .strict(),
]);

const requestApprovalInput = z
  .object({
    title: z.string().min(1).max(500).describe("What the person is asked to approve, one line"),
    summary: z.string().optional().describe("Longer description for the reviewer (markdown)"),
    action: z.string().min(1).max(200).optional().describe("What kind of action, e.g. deploy.prod"),
    args: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("The arguments of the operation to approve; the reviewer may edit them"),
    argsSchema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        "The JSON Schema of args (e.g. the tool's inputSchema): a reviewer's edit that does not fit it is refused",
      ),
    items: z
      .array(item)
      .max(1000)
      .optional()
      .describe("Selectable items; the reviewer may approve some of them"),
    timeoutSeconds: z
      .number()
      .positive()
      .max(366 * 24 * 3600)
      .optional()
      .describe("Deadline in seconds from now; past it the request takes onTimeout"),
    // Only `reject`: an agent that could declare `approve` would approve itself with a short deadline.
    onTimeout: z
      .enum(["reject"])
      .optional()
      .describe("What the deadline decides: reject (the only choice for an agent)"),
    approvers: z
      .array(z.string().min(1))
      .max(100)
      .optional()
      .describe("Users or groups allowed to decide (default anyone but the requester)"),
    quorum: z.number().int().min(1).max(100).optional(),
    key: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "Idempotency key; default a hash of the other arguments, so the same call re-attaches",
      ),
    wait: z
      .boolean()
      .optional()
      .describe("Wait for the decision (bounded; answers pending past the bound)"),
  })
  .strict();
type RequestApprovalInput = z.infer<typeof requestApprovalInput>;

const idInput = z.object({ id: z.string().min(1).max(100).describe("The request id") }).strict();

const view = z.looseObject({
  id: z.string(),
  status: z.string(),
  title: z.string(),
  outcome: z.string().optional(),
  comment: z.string().optional(),
  reviewer: z.string().optional(),
  selected: z.array(z.string()).optional(),
  editedArgs: z.record(z.string(), z.unknown()).optional(),
  args: z.record(z.string(), z.unknown()).optional(),
  deadline: z.string().optional(),
  inbox: z.string().optional(),
});
type View = z.infer<typeof view>;

const listOutput = z.object({ requests: z.array(view), nextCursor: z.string().optional() });

/** The idempotency key of a request_approval call that names none: a hash of its arguments (without
 * `wait`), so the same call made again re-attaches to the same gate. */
export function mcpRequestKey(input: RequestApprovalInput): string {
  const { key: _key, wait: _wait, ...rest } = input;
  return `mcp:${sha256(canonicalJson(rest)).slice(0, 32)}`;
}

type ToolResult = {
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

function errorResult(err: unknown): ToolResult {
  const message = err instanceof Error ? err.message : String(err);
  return { content: [{ type: "text", text: message }], isError: true };
}

/** Runs a tool body; any failure becomes a tool error with its message, never a crash. */
async function guarded(fn: () => Promise<ToolResult>): Promise<ToolResult> {
  try {
    return await fn();
  } catch (err) {
    return errorResult(err);
  }
}

export function createMcpServer(
  airlock: AirlockApi,
  options: CreateMcpServerOptions = {},
): McpServer {
  const bound = options.maxWaitMs ?? maxWaitMs();
  const linkFor = options.inboxUrl ?? ((id: string) => inboxLink(id));

  /** The request, if this server's requester made it (or no requester is set: a server's token
   * decides what it sees). Another requester's request is not found, so its id tells nothing. */
  async function own(id: string): Promise<ApprovalRequest> {
    const r = await airlock.get(id);
    const mine = options.requester;
    if (mine !== undefined && !sameIdentity(r.requester, mine)) {
      throw new NotFoundError("request", id);
    }
    return r;
  }

  function toView(r: ApprovalRequest): View {
    const d = r.decision;
    const link = linkFor(r.id);
    return {
      id: r.id,
      status: r.status,
      title: r.title,
      args: r.args,
      ...(d ? { outcome: d.outcome, reviewer: d.reviewer } : {}),
      ...(d?.comment !== undefined ? { comment: d.comment } : {}),
      ...(d?.selected !== undefined ? { selected: d.selected } : {}),
      ...(d?.editedArgs !== undefined ? { editedArgs: d.editedArgs } : {}),
      ...(r.deadline !== undefined ? { deadline: new Date(r.deadline).toISOString() } : {}),
      ...(link ? { inbox: link } : {}),
    };
  }

  function describe(r: ApprovalRequest): string {
    const v = toView(r);
    if (!isTerminal(r.status)) {
      return `Request ${r.id} ("${r.title}") is pending.${v.inbox ? ` Inbox: ${v.inbox}` : ""}`;
    }
    const parts = [`Request ${r.id} ("${r.title}"): ${r.status}.`];
    if (v.reviewer) parts.push(`Decided by ${v.reviewer}.`);
    if (v.comment) parts.push(`Comment: ${v.comment}`);
    if (v.selected) parts.push(`Selected: ${v.selected.join(", ")}`);
    if (v.editedArgs) parts.push(`Approved with edited args: ${JSON.stringify(v.editedArgs)}`);
    return parts.join("\n");
  }

  function answer(r: ApprovalRequest): ToolResult {
    return { content: [{ type: "text", text: describe(r) }], structuredContent: toView(r) };
  }

  /** Waits up to the bound, with progress notifications when the client asked for them. */
  async function waitAndAnswer(id: string, ctx: ServerContext): Promise<ToolResult> {
    const token = ctx.mcpReq._meta?.progressToken;
    const done = await waitBounded(airlock, id, {
      maxMs: bound,
      signal: ctx.mcpReq.signal,
      ...(token !== undefined
        ? {
            onProgress: (waited: number, max: number) =>
              ctx.mcpReq.notify({
                method: "notifications/progress",
                params: {
                  progressToken: token,
                  progress: waited,
                  total: max,
                  message: `waiting for a decision on ${id}`,
                },
              }),
          }
        : {}),
    });
    if (isTerminal(done.status)) return answer(done);
    return pendingAnswer(done, linkFor(done.id));
  }

  const server = new McpServer({
    name: options.name ?? "airlock",
    version: options.version ?? "0.0.0",
  });

  server.registerTool(
    "request_approval",
    {
      title: "Ask a person for approval",
      description:
        "Opens an Airlock approval gate that a person decides (approve, reject, revise, select items, edit args). Returns the request id; with wait: true, waits for the decision for a bounded time and answers pending with the id past it. Calling again with the same arguments re-attaches to the same request.",
      inputSchema: requestApprovalInput,
      outputSchema: view,
    },
    (input, ctx) =>
      guarded(async () => {
        const request: RequestInput = {
          key: input.key ?? mcpRequestKey(input),
          title: input.title,
          ...(input.summary !== undefined ? { summary: input.summary } : {}),
          ...(input.action !== undefined ? { action: input.action } : {}),
          ...(input.args !== undefined ? { args: input.args as RequestInput["args"] } : {}),
          ...(input.argsSchema !== undefined ? { argsSchema: input.argsSchema } : {}),
          ...(input.items !== undefined ? { items: input.items } : {}),
          ...(input.timeoutSeconds !== undefined
            ? { timeoutMs: Math.max(1, Math.round(input.timeoutSeconds * 1000)) }
            : {}),
          ...(input.onTimeout !== undefined ? { onTimeout: input.onTimeout } : {}),
          ...(input.approvers !== undefined ? { approvers: input.approvers } : {}),
          ...(input.quorum !== undefined ? { quorum: input.quorum } : {}),
          ...(options.requester !== undefined ? { requester: options.requester } : {}),
        };
        const created = await airlock.request(request);
        if (input.wait && !isTerminal(created.status)) return waitAndAnswer(created.id, ctx);
        return answer(created);
      }),
  );

  server.registerTool(
    "wait_for_decision",
    {
      title: "Wait for a decision",
      description:
        "Waits for a person's decision on a request, for a bounded time; answers pending with the id past it (call again to keep waiting).",
      inputSchema: idInput,
      outputSchema: view,
    },
    ({ id }, ctx) =>
      guarded(async () => {
        await own(id);
        return waitAndAnswer(id, ctx);
      }),
  );

  server.registerTool(
    "get_request",
    {
      title: "Read a request",
      description:
        "The request's status and, once decided, the decision (outcome, comment, reviewer, selected items, edited args).",
      inputSchema: idInput,
      outputSchema: view,
      annotations: { readOnlyHint: true },
    },
    ({ id }) => guarded(async () => answer(await own(id))),
  );

  server.registerTool(
    "list_pending",
    {
      title: "List pending requests",
      description:
        "The requests still waiting for a decision, newest first: only the requests this server's agent made.",
      inputSchema: z
        .object({
          limit: z.number().int().min(1).max(100).optional(),
          cursor: z.string().optional(),
        })
        .strict(),
      outputSchema: listOutput,
      annotations: { readOnlyHint: true },
    },
    ({ limit, cursor }) =>
      guarded(async () => {
        const page = await airlock.list({
          status: "pending",
          ...(options.requester !== undefined ? { requester: options.requester } : {}),
          limit: limit ?? 50,
          ...(cursor !== undefined ? { cursor } : {}),
        });
        const requests = page.items.map(toView);
        const text =
          requests.length === 0
            ? "No pending requests."
            : requests.map((r) => `${r.id}  ${r.title}`).join("\n");
        return {
          content: [{ type: "text", text }],
          structuredContent: {
            requests,
            ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
          },
        };
      }),
  );

  return server;
}
