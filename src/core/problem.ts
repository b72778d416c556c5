// Problem details (RFC 9457, `application/problem+json`): the one shape every HTTP answer of a
// failure takes, and the rule that words a domain error as one (its status by its stable `code`).
// Shared by the server's API and the channels' own routes (Slack, mail links): it lives here, below
// both, so neither reaches into the other. The server adds what only its HTTP layer raises
// (server/problem.ts).
import type { Logger } from "pino";
import { z } from "zod";
import type { AirlockError, ErrorCode } from "./errors.js";
import { type ApprovalRequest, approvalRequestSchema, decisionSchema } from "./schemas.js";

export const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  /** Stable machine-readable code: one of the domain's error codes or an HTTP-layer code. */
  code: z.string(),
  /** The offending input field (dotted path), for 400 and 422. */
  field: z.string().optional(),
  /** For 409: the request as it is now (carrying the decision that won, for `conflict`). */
  request: approvalRequestSchema.optional(),
  decision: decisionSchema.optional(),
  retryAfterSeconds: z.number().optional(),
  /** For 429 `quota_exceeded`: the requester's pending requests and their stored bytes. */
  pending: z.number().int().optional(),
  pendingBytes: z.number().int().optional(),
});
export type Problem = z.infer<typeof problemSchema>;

export const PROBLEM_TITLES: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

const STATUS_BY_CODE: Record<ErrorCode, number> = {
  not_found: 404,
  conflict: 409,
  forbidden: 403,
  // Input the engine refuses is well-formed but breaks a rule of the request (a selection of items
  // it does not have, edited args that fail the action's schema): 422. Malformed bodies are caught
  // earlier by the route's own schema and answered with 400.
  invalid_input: 422,
  timeout: 504,
  aborted: 503,
  closed: 503,
  store_unavailable: 503,
  // A requester's pending quota (the server's limits): the HTTP route words it with the limit's name.
  quota_exceeded: 429,
  // The reviewer decided on a view the request no longer has (core/review-view.ts).
  view_changed: 409,
};

export function problem(
  status: number,
  code: string,
  detail: string,
  extra: Partial<Problem> = {},
): Problem {
  return {
    type: `urn:airlock:problem:${code}`,
    title: PROBLEM_TITLES[status] ?? "Error",
    status,
    detail,
    code,
    ...extra,
  };
}

/** Seconds a client is asked to wait after a storage fault when the error names no time itself. */
export const STORE_RETRY_AFTER_SECONDS = 2;

/** Where storage faults are counted (the server's storage health): the first of an episode is
 * logged there, the rest only counted. */
export interface StorageFaults {
  fault(err: unknown): unknown;
}

/** A domain error as a problem. A storage fault (`store_unavailable`) is a 503 with `Retry-After`,
 * logged once per episode through `storage` (every time when there is none). */
export function domainProblem(
  err: AirlockError,
  logger: Pick<Logger, "warn">,
  storage?: StorageFaults,
): { body: Problem; headers: Record<string, string> } {
  const status = STATUS_BY_CODE[err.code];
  const extra: Partial<Problem> = {};
  const field = (err as { field?: unknown }).field;
  if (typeof field === "string") extra.field = field;
  if (err.code === "conflict" || err.code === "view_changed") {
    const request = (err as { request?: ApprovalRequest }).request;
    if (request) {
      extra.request = request;
      if (request.decision) extra.decision = request.decision;
    }
  }
  if (err.code === "store_unavailable") {
    if (!storage) logger.warn({ err }, "request failed: storage unavailable");
    else storage.fault(err);
    const asked = (err as { retryAfterMs?: unknown }).retryAfterMs;
    const seconds =
      typeof asked === "number" && Number.isFinite(asked) && asked > 0
        ? Math.ceil(asked / 1000)
        : STORE_RETRY_AFTER_SECONDS;
    extra.retryAfterSeconds = seconds;
    return {
      body: problem(
        503,
        "store_unavailable",
        `the server's storage is unavailable right now (${err.message}); retry in ${seconds} s (with the same idempotency key, a retried create cannot make a second request)`,
        extra,
      ),
      headers: { "retry-after": String(seconds) },
    };
  }
  if (status >= 500) logger.warn({ code: err.code, msg: err.message }, "request failed");
  return { body: problem(status, err.code, err.message, extra), headers: {} };
}

export function problemResponse(body: Problem, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status: body.status,
    // A 409 carries the request (its args): like every API answer, it is not for caches.
    headers: {
      ...headers,
      "content-type": "application/problem+json",
      "cache-control": "no-store",
    },
  });
}
