// The one place where failures become HTTP answers of the API: RFC 9457 problem details
// (`application/problem+json`, core/problem.ts). Domain errors map by their stable `code` (the rule
// in core, shared with the channels' routes); errors raised by the HTTP layer itself are
// `HttpProblem`s; anything else is a 500 that says nothing about its cause.
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { Logger } from "pino";
import { type ErrorCode, isAirlockError } from "../core/errors.js";
import {
  domainProblem,
  PROBLEM_TITLES,
  type Problem,
  problem,
  problemResponse,
} from "../core/problem.js";
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
  if (isAirlockError(err)) return domainProblem(err, logger, storage);
  if (err instanceof HTTPException) {
    const status = err.status;
    const code: HttpCode = status === 413 ? "payload_too_large" : "internal";
    return {
      body: problem(status, code, err.message || (PROBLEM_TITLES[status] ?? "Error")),
      headers: {},
    };
  }
  logger.error({ err }, "unexpected error while answering a request");
  return {
    body: problem(500, "internal", "the server failed to answer this request; see its log"),
    headers: {},
  };
}

/** Hono's `onError` handler. */
export function onError(logger: Logger, storage?: StorageHealth) {
  return (err: Error, _c: Context): Response => {
    const { body, headers } = toProblem(err, logger, storage);
    return problemResponse(body, headers);
  };
}
