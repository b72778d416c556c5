// The one place where failures become HTTP answers: RFC 9457 problem details
// (`application/problem+json`). Domain errors map by their stable `code`; errors raised by the HTTP
// layer itself are `HttpProblem`s; anything else is a 500 that says nothing about its cause.
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { Logger } from "pino";
import { z } from "zod";
import { type ErrorCode, isAirlockError } from "../core/errors.js";
import { type ApprovalRequest, approvalRequestSchema, decisionSchema } from "../core/schemas.js";
import type { StorageHealth } from "./storage-health.js";

/** Codes of problems raised by the HTTP layer, beside the domain's `ErrorCode`s. */
export type HttpCode =
  | "unauthorized"
  | "payload_too_large"
  | "unsupported_media_type"
  | "rate_limited"
  | "quota_exceeded"
  | "too_many_streams"
  | "unavailable"
  | "route_not_found"
  | "internal";

export const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  /** Stable machine-readable code: one of the domain's error codes or an HTTP-layer code. */
  code: z.string(),
  /** The offending input field (dotted path), for 400 and 422. */
  field: z.string().optional(),
  /** For 409: the request as it is now, carrying the decision that won. */
  request: approvalRequestSchema.optional(),
  decision: decisionSchema.optional(),
  retryAfterSeconds: z.number().optional(),
  /** For 429 `quota_exceeded`: the requester's pending requests and their stored bytes. */
  pending: z.number().int().optional(),
  pendingBytes: z.number().int().optional(),
});
export type Problem = z.infer<typeof problemSchema>;

const TITLES: Record<number, string> = {
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
};

/** A failure decided by the HTTP layer, with its status and code. */
export class HttpProblem extends Error {
  readonly status: number;
  readonly code: ErrorCode | HttpCode;
  readonly field: string | undefined;
  readonly headers: Record<string, string>;
  readonly extra: Partial<Problem>;
  constructor(
    status: number,
    code: ErrorCode | HttpCode,
    detail: string,
    options: {
      field?: string;
      headers?: Record<string, string>;
      extra?: Partial<Problem>;
      /** What went wrong underneath; logged at debug level only (the client's own doing). */
      cause?: unknown;
    } = {},
  ) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "HttpProblem";
    this.status = status;
    this.code = code;
    this.field = options.field;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }
}

export function problem(
  status: number,
  code: string,
  detail: string,
  extra: Partial<Problem> = {},
): Problem {
  return {
    type: `urn:airlock:problem:${code}`,
    title: TITLES[status] ?? "Error",
    status,
    detail,
    code,
    ...extra,
  };
}

/** Seconds a client is asked to wait after a storage fault when the error names no time itself. */
export const STORE_RETRY_AFTER_SECONDS = 2;

/** Maps any thrown value to a problem. Unknown errors are logged (with their stack) and answered
 * with a bare 500. A storage fault (`store_unavailable`) is a 503 with `Retry-After`, logged once per
 * episode through `storage` (every time when there is none). */
export function toProblem(
  err: unknown,
  logger: Logger,
  storage?: StorageHealth,
): { body: Problem; headers: Record<string, string> } {
  if (err instanceof HttpProblem) {
    if (err.cause !== undefined) {
      logger.debug({ cause: err.cause, code: err.code }, `answered ${err.status}: ${err.message}`);
    }
    const extra: Partial<Problem> = { ...err.extra };
    if (err.field !== undefined) extra.field = err.field;
    return { body: problem(err.status, err.code, err.message, extra), headers: err.headers };
  }
  if (isAirlockError(err)) {
    const status = STATUS_BY_CODE[err.code];
    const extra: Partial<Problem> = {};
    const field = (err as { field?: unknown }).field;
    if (typeof field === "string") extra.field = field;
    if (err.code === "conflict") {
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
  if (err instanceof HTTPException) {
    const status = err.status;
    const code: HttpCode = status === 413 ? "payload_too_large" : "internal";
    return { body: problem(status, code, err.message || (TITLES[status] ?? "Error")), headers: {} };
  }
  logger.error({ err }, "unexpected error while answering a request");
  return {
    body: problem(500, "internal", "the server failed to answer this request; see its log"),
    headers: {},
  };
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

/** Hono's `onError` handler. */
export function onError(logger: Logger, storage?: StorageHealth) {
  return (err: Error, _c: Context): Response => {
    const { body, headers } = toProblem(err, logger, storage);
    return problemResponse(body, headers);
  };
}
