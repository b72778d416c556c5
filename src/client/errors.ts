// Turns the server's problem details back into the error classes the engine throws, by their stable
// `code`, so code written against the in-process engine handles a remote one alike.
import {
  AirlockError,
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  TimeoutError,
  ViewChangedError,
} from "../core/errors.js";
import type { ApprovalRequest } from "../core/schemas.js";

/** The parts of an RFC 9457 problem the client reads. */
export interface ProblemBody {
  detail?: string;
  code?: string;
  field?: string;
  request?: ApprovalRequest;
  retryAfterSeconds?: number;
}

/** The server cannot answer now (unreachable, shutting down, rate limited, failing): worth retrying.
 * Its `code` is `store_unavailable`, as the engine's own when its store is down. */
export class UnavailableError extends AirlockError {
  readonly status: number | undefined;
  /** How long the server asked us to wait (Retry-After), when it said. */
  readonly retryAfterMs: number | undefined;
  /** The server's problem code (`store_unavailable`, `rate_limited`, `quota_exceeded`, ...); absent
   * when the server could not be reached. */
  readonly problemCode: string | undefined;
  constructor(
    message: string,
    options: { status?: number; retryAfterMs?: number; cause?: unknown; problemCode?: string } = {},
  ) {
    super("store_unavailable", message, { cause: options.cause });
    this.name = "UnavailableError";
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.problemCode = options.problemCode;
  }
}

/** Worth trying the same call again after a pause: the server was unreachable, its storage failed
 * for a moment, it was restarting, or the token's rate was used up. Not a quota (it frees only when
 * requests are decided) nor a cap on open streams. */
export function isRetryable(err: unknown): err is UnavailableError {
  if (!(err instanceof UnavailableError)) return false;
  if (err.status === undefined) return true;
  if (err.status === 503) return err.problemCode !== "too_many_streams";
  if (err.status === 429) return err.problemCode === "rate_limited";
  return err.status === 502 || err.status === 504;
}

/** What a failed call was about, for errors whose classes need it (NotFoundError). */
export interface CallSubject {
  what: string;
  id: string;
}

export function errorFromProblem(
  status: number,
  problem: ProblemBody | undefined,
  subject: CallSubject | undefined,
  retryAfterHeader: string | null,
): AirlockError {
  const detail = problem?.detail ?? `the server answered HTTP ${status}`;
  const code = problem?.code;
  if (code === "not_found" || (status === 404 && code !== "route_not_found")) {
    const err = subject ? new NotFoundError(subject.what, subject.id) : undefined;
    return err ?? new AirlockError("not_found", detail);
  }
  if (code === "route_not_found") {
    return new AirlockError(
      "not_found",
      `${detail} (is the client's url the Airlock server's base address?)`,
    );
  }
  if (code === "view_changed" && problem?.request)
    return new ViewChangedError(detail, problem.request);
  if (code === "conflict" || status === 409) return new ConflictError(detail, problem?.request);
  if (code === "forbidden" || status === 403) return new ForbiddenError(detail);
  if (status === 401) return new ForbiddenError(`the server refused the token: ${detail}`);
  if (
    code === "invalid_input" ||
    status === 400 ||
    status === 413 ||
    status === 415 ||
    status === 422
  ) {
    return new InvalidInputError(detail, problem?.field);
  }
  if (code === "timeout" || status === 504) return new TimeoutError(detail);
  const retryAfterMs = retryAfter(problem?.retryAfterSeconds, retryAfterHeader);
  return new UnavailableError(detail, {
    status,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...(code === undefined ? {} : { problemCode: code }),
  });
}

function retryAfter(seconds: number | undefined, header: string | null): number | undefined {
  if (typeof seconds === "number" && Number.isFinite(seconds)) return seconds * 1000;
  if (header && /^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  return undefined;
}
