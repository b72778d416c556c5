// What `airlock mcp` and `airlock mcp-proxy` share: the bounded wait (MCP clients give up on a call
// after about 60 s, so no tool call holds a gate longer than BOUNDED_WAIT_MS) and the "pending"
// answer that names the request and where a person decides it.
import { TimeoutError } from "../core/errors.js";
import type { ApprovalRequest } from "../core/schemas.js";
import { isTerminal } from "../core/state.js";
import type { AirlockApi } from "../engine/api.js";

/** The longest a tool call waits for a decision before answering "pending". */
export const BOUNDED_WAIT_MS = 45_000;

/** How often a waiting tool call reports progress. */
export const PROGRESS_INTERVAL_MS = 5_000;

/** The bound in force: AIRLOCK_MCP_MAX_WAIT_MS (milliseconds, at most BOUNDED_WAIT_MS) when set. */
export function maxWaitMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.AIRLOCK_MCP_MAX_WAIT_MS?.trim();
  if (!raw) return BOUNDED_WAIT_MS;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) {
    throw new Error(
      `AIRLOCK_MCP_MAX_WAIT_MS expects milliseconds (0–${BOUNDED_WAIT_MS}), got \`${raw}\``,
    );
  }
  return Math.min(Math.round(n), BOUNDED_WAIT_MS);
}

export interface WaitBoundedOptions {
  /** @default BOUNDED_WAIT_MS (never more) */
  maxMs?: number;
  /** Called every `progressIntervalMs` while waiting, with the time waited and the bound: the
   * time waited never exceeds the bound and grows with every call (MCP progress must increase). */
  onProgress?: (waitedMs: number, maxMs: number) => void | Promise<void>;
  /** @default PROGRESS_INTERVAL_MS */
  progressIntervalMs?: number;
  signal?: AbortSignal;
}

/** Waits for request `id` to be decided, at most `maxMs`: resolves with the request, terminal or
 * (past the bound) still pending. Other errors (not found, aborted) reject. */
export async function waitBounded(
  api: Pick<AirlockApi, "get" | "waitFor">,
  id: string,
  options: WaitBoundedOptions = {},
): Promise<ApprovalRequest> {
  const maxMs = Math.min(Math.max(0, options.maxMs ?? BOUNDED_WAIT_MS), BOUNDED_WAIT_MS);
  const interval = Math.max(1, options.progressIntervalMs ?? PROGRESS_INTERVAL_MS);
  // performance.now(), not Date.now(): a wall clock set back would make the time waited shrink.
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  // The last progress reported. A timer fires late (a busy event loop, a slow store), so the time
  // waited after the last slice is past the bound (12001 of 12000): it is reported as the bound,
  // and a value not above the last one is not reported at all.
  let reported = 0;
  const current = await api.get(id);
  if (isTerminal(current.status) || maxMs === 0) return current;
  for (;;) {
    const left = maxMs - elapsed();
    if (left <= 0) return api.get(id);
    const slice = options.onProgress ? Math.min(left, interval) : left;
    try {
      return await api.waitFor(id, {
        timeoutMs: Math.max(1, slice),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (err) {
      if (!(err instanceof TimeoutError || isTimeoutCode(err))) throw err;
    }
    const progress = Math.min(elapsed(), maxMs);
    if (options.onProgress && progress > reported) {
      reported = progress;
      try {
        await options.onProgress(progress, maxMs);
      } catch {
        // A progress notification that cannot be sent does not end the wait.
      }
    }
  }
}

function isTimeoutCode(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === "timeout";
}

/** The inbox page of a request on the server at AIRLOCK_URL, or undefined without a server. */
export function inboxLink(id: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const base = env.AIRLOCK_URL?.trim();
  if (!base) return undefined;
  return `${base.replace(/\/+$/, "")}/requests/${encodeURIComponent(id)}`;
}

/** The structured content of a still-pending gate. */
export interface PendingContent {
  [key: string]: unknown;
  status: "pending";
  id: string;
  title: string;
  inbox?: string;
  deadline?: string;
  retry: string;
}

/** The tool result for a gate still pending past the bound: the request id, where to decide it, and
 * that calling again with the same arguments re-attaches to the same gate. */
export function pendingAnswer(
  request: ApprovalRequest,
  inboxUrl?: string,
): {
  content: { type: "text"; text: string }[];
  structuredContent: PendingContent;
} {
  const where = inboxUrl
    ? `Decide it in the inbox: ${inboxUrl}`
    : `Decide it in the inbox (run \`airlock serve\` and open http://127.0.0.1:7420/requests/${request.id}) or with \`airlock decide ${request.id} approve\`.`;
  const retry =
    "Call the same tool again with the same arguments to keep waiting; it re-attaches to this request.";
  const deadline =
    request.deadline !== undefined ? new Date(request.deadline).toISOString() : undefined;
  const text = [
    `Approval pending: request ${request.id} ("${request.title}") has not been decided yet.`,
    where,
    ...(deadline ? [`It times out at ${deadline}.`] : []),
    retry,
  ].join("\n");
  return {
    content: [{ type: "text", text }],
    structuredContent: {
      status: "pending",
      id: request.id,
      title: request.title,
      ...(inboxUrl ? { inbox: inboxUrl } : {}),
      ...(deadline ? { deadline } : {}),
      retry,
    },
  };
}
