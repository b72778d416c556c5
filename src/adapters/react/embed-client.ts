// The approval card's calls, framework-free: read one request, long-poll it, decide it, all with an
// embed token (POST /v1/requests/{id}/embed-token) against the /v1/embed/requests/{id} routes. Runs in
// a browser (only `fetch`); the React hook (../react.ts) is a thin layer over it.
import type { ApprovalRequest } from "../../core/schemas.js";

export interface EmbedClientOptions {
  /** The Airlock server's origin, e.g. "https://airlock.example.com". */
  baseUrl: string;
  /** The embed token minted by the app's backend (`ale_...`). */
  token: string;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
}

/** What the card sends; the reviewer and the channel (`chat`) come from the token. */
export interface EmbedDecision {
  outcome: "approved" | "rejected" | "revise";
  /** Item ids approved (a partial approval). */
  selected?: string[];
  comment?: string;
  /** Makes a retried decision idempotent. */
  key?: string;
}

/** A refused call: `status` is the HTTP status, `detail` the server's explanation; on a 409
 * `request` is the request as someone else decided it. */
export class EmbedRequestError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  readonly request: ApprovalRequest | undefined;
  constructor(status: number, message: string, code?: string, request?: ApprovalRequest) {
    super(message);
    this.name = "EmbedRequestError";
    this.status = status;
    this.code = code;
    this.request = request;
  }
}

export interface EmbedClient {
  get(signal?: AbortSignal): Promise<ApprovalRequest>;
  /** Answers when the request is decided, or after `timeoutSeconds` with it still pending. */
  wait(timeoutSeconds: number, signal?: AbortSignal): Promise<ApprovalRequest>;
  decide(decision: EmbedDecision, signal?: AbortSignal): Promise<ApprovalRequest>;
}

export function embedClient(requestId: string, options: EmbedClientOptions): EmbedClient {
  const base = `${options.baseUrl.replace(/\/+$/, "")}/v1/embed/requests/${encodeURIComponent(requestId)}`;
  const doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const call = async (
    method: "GET" | "POST",
    suffix: string,
    body: unknown,
    signal: AbortSignal | undefined,
  ): Promise<ApprovalRequest> => {
    const headers: Record<string, string> = { authorization: `Bearer ${options.token}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await doFetch(base + suffix, {
      method,
      headers,
      cache: "no-store",
      ...(signal ? { signal } : {}),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const data = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (!res.ok) {
      throw new EmbedRequestError(
        res.status,
        typeof data?.detail === "string" ? data.detail : `HTTP ${res.status}`,
        typeof data?.code === "string" ? data.code : undefined,
        data?.request as ApprovalRequest | undefined,
      );
    }
    return data as unknown as ApprovalRequest;
  };
  return {
    get: (signal) => call("GET", "", undefined, signal),
    wait: (timeoutSeconds, signal) =>
      call("GET", `/wait?timeout=${Math.max(0, timeoutSeconds)}`, undefined, signal),
    decide: (decision, signal) => call("POST", "/decisions", decision, signal),
  };
}

export interface FollowOptions {
  /** Seconds each long-poll asks for (the server caps it). @default 25 */
  waitSeconds?: number;
  /** Retries after a network error wait 1 s, doubling up to this. @default 30000 */
  maxBackoffMs?: number;
}

/** Reads the request, then long-polls while it is pending, giving each new state to `onRequest`.
 * Ends when `signal` aborts, the request is final, or the server refuses the token (401, 403, 404:
 * `onError(err, true)`); a network error is reported (`onError(err, false)`) and retried. */
export async function followApproval(
  client: EmbedClient,
  onRequest: (request: ApprovalRequest) => void,
  onError: (error: Error, fatal: boolean) => void,
  signal: AbortSignal,
  options: FollowOptions = {},
): Promise<void> {
  const waitSeconds = options.waitSeconds ?? 25;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  let backoffMs = 1000;
  let first = true;
  while (!signal.aborted) {
    try {
      const request = first ? await client.get(signal) : await client.wait(waitSeconds, signal);
      first = false;
      backoffMs = 1000;
      if (signal.aborted) return;
      onRequest(request);
      if (request.status !== "pending") return;
    } catch (err) {
      if (signal.aborted) return;
      const error = err instanceof Error ? err : new Error(String(err));
      const fatal = error instanceof EmbedRequestError && [401, 403, 404].includes(error.status);
      onError(error, fatal);
      if (fatal) return;
      await sleep(backoffMs, signal);
      backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
