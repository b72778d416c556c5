// A small error hierarchy with stable codes. Callers tell errors apart by `code` (or the `isAirlockError`
// guard), never by message text or `instanceof`, which breaks across duplicated package copies.
import type { ApprovalRequest, Decision } from "./schemas.js";

/** Every code an AirlockError can carry: the one list, the type derives from it. */
export const ERROR_CODES = [
  "not_found",
  "conflict",
  "forbidden",
  "invalid_input",
  "timeout",
  "aborted",
  "closed",
  "store_unavailable",
  "quota_exceeded",
  "view_changed",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];
const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

export class AirlockError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "AirlockError";
    this.code = code;
  }
}

export class NotFoundError extends AirlockError {
  constructor(what: string, id: string) {
    super("not_found", `${what} \`${id}\` does not exist`);
    this.name = "NotFoundError";
  }
}

/** Raised when a transition loses a race or a key is reused with other content. Carries the winner. */
export class ConflictError extends AirlockError {
  readonly decision: Decision | undefined;
  readonly request: ApprovalRequest | undefined;
  constructor(message: string, request?: ApprovalRequest) {
    super("conflict", message);
    this.name = "ConflictError";
    this.request = request;
    this.decision = request?.decision;
  }
}

/** Raised when a decision was taken on a review view that is no longer the request's own (its
 * `viewDigest` is not the current one): the reviewer must look again. Carries the request as it is. */
export class ViewChangedError extends AirlockError {
  readonly request: ApprovalRequest;
  constructor(message: string, request: ApprovalRequest) {
    super("view_changed", message);
    this.name = "ViewChangedError";
    this.request = request;
  }
}

export class ForbiddenError extends AirlockError {
  constructor(message: string) {
    super("forbidden", message);
    this.name = "ForbiddenError";
  }
}

/** Bad input. `field` names the offending field (dotted path) when there is one. */
export class InvalidInputError extends AirlockError {
  readonly field: string | undefined;
  constructor(message: string, field?: string) {
    super("invalid_input", message);
    this.name = "InvalidInputError";
    this.field = field;
  }
}

/** A create refused because its requester's pending requests would pass a quota (`PendingQuota`:
 * how many, or how many bytes). Carries the requester's usage without the refused request. */
export class QuotaExceededError extends AirlockError {
  readonly requester: string;
  /** Which bound the request would pass. */
  readonly limit: "count" | "bytes";
  /** The requester's pending requests and their stored bytes, as the refusing transaction saw them. */
  readonly pending: number;
  readonly pendingBytes: number;
  /** The refused request's stored size in bytes. */
  readonly requestBytes: number;
  /** The bound passed (`count` or `bytes` of the quota). */
  readonly max: number;
  constructor(o: {
    requester: string;
    limit: "count" | "bytes";
    pending: number;
    pendingBytes: number;
    requestBytes: number;
    max: number;
  }) {
    super(
      "quota_exceeded",
      o.limit === "count"
        ? `${o.requester} has ${o.pending} pending requests, the most allowed per requester (${o.max}); wait until some are decided, or cancel those no longer needed`
        : `${o.requester} has ${o.pending} pending requests taking ${o.pendingBytes} bytes; this one (${o.requestBytes} bytes) would pass the ${o.max} bytes allowed per requester; wait until some are decided, or cancel those no longer needed`,
    );
    this.name = "QuotaExceededError";
    this.requester = o.requester;
    this.limit = o.limit;
    this.pending = o.pending;
    this.pendingBytes = o.pendingBytes;
    this.requestBytes = o.requestBytes;
    this.max = o.max;
  }
}

export class TimeoutError extends AirlockError {
  constructor(message: string) {
    super("timeout", message);
    this.name = "TimeoutError";
  }
}

export function isAirlockError(value: unknown, code?: ErrorCode): value is AirlockError {
  if (typeof value !== "object" || value === null) return false;
  const c = (value as { code?: unknown }).code;
  if (typeof c !== "string" || !KNOWN_CODES.has(c)) return false;
  return code === undefined || c === code;
}
