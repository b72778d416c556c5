// Bounds on what one agent can make the server hold: the size of each document of a request (args,
// preview, summary; edited args of a decision), and a quota of pending requests and pending bytes
// per requester, so no token can fill the inbox or the disk.
import type { QuotaExceededError } from "../core/errors.js";
import type { PendingQuota } from "../core/store.js";
import { expectPositiveInt } from "../core/validate.js";
import { HttpProblem } from "./problem.js";

export interface ServerLimits {
  /** Largest `args` (and a decision's `editedArgs`), as JSON, in bytes; larger answer 413.
   * @default 262144 (256 KiB) */
  argsBytes: number;
  /** Largest `preview`, in bytes (UTF-8); larger answer 413. @default 262144 (256 KiB) */
  previewBytes: number;
  /** Largest `summary`, in bytes (UTF-8); larger answer 413. @default 65536 (64 KiB) */
  summaryBytes: number;
  /** Pending requests one requester may have; one more answers 429 `quota_exceeded`.
   * @default 1000 */
  pendingPerRequester: number;
  /** Bytes of pending requests one requester may have stored; past it 429 `quota_exceeded`.
   * @default 67108864 (64 MiB) */
  pendingBytesPerRequester: number;
}

export const DEFAULT_LIMITS = {
  argsBytes: 256 * 1024,
  previewBytes: 256 * 1024,
  summaryBytes: 64 * 1024,
  pendingPerRequester: 1000,
  pendingBytesPerRequester: 64 * 1024 * 1024,
} satisfies ServerLimits;

export function resolveLimits(given: Partial<ServerLimits> | undefined): ServerLimits {
  const r: ServerLimits = { ...DEFAULT_LIMITS, ...definedOnly(given ?? {}) };
  for (const [name, value] of Object.entries(r)) {
    expectPositiveInt(`limits.${name}`, value);
  }
  return r;
}

function definedOnly(o: Partial<ServerLimits>): Partial<ServerLimits> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

export function jsonBytes(value: unknown): number {
  return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");
}

function tooLarge(field: string, bytes: number, max: number, option: string): HttpProblem {
  return new HttpProblem(
    413,
    "payload_too_large",
    `\`${field}\` takes ${bytes} bytes; this server accepts at most ${max} (limits.${option}). Send a smaller ${field}, or a reference to where the full content lives`,
    { field },
  );
}

/** Refuses a request whose args, preview or summary is over its limit. */
export function checkDocumentSizes(
  input: { args?: unknown; preview?: string | undefined; summary?: string | undefined },
  limits: ServerLimits,
): void {
  const args = jsonBytes(input.args);
  if (args > limits.argsBytes) throw tooLarge("args", args, limits.argsBytes, "argsBytes");
  if (input.preview !== undefined) {
    const bytes = Buffer.byteLength(input.preview, "utf8");
    if (bytes > limits.previewBytes) {
      throw tooLarge("preview", bytes, limits.previewBytes, "previewBytes");
    }
  }
  if (input.summary !== undefined) {
    const bytes = Buffer.byteLength(input.summary, "utf8");
    if (bytes > limits.summaryBytes) {
      throw tooLarge("summary", bytes, limits.summaryBytes, "summaryBytes");
    }
  }
}

export function checkEditedArgsSize(editedArgs: unknown, limits: ServerLimits): void {
  const bytes = jsonBytes(editedArgs);
  if (bytes > limits.argsBytes) throw tooLarge("editedArgs", bytes, limits.argsBytes, "argsBytes");
}

/** The quota the server's limits set on each requester's pending requests, which the store checks
 * in the insert's own transaction (so it holds under parallel creates, across servers). */
export function pendingQuotaOf(limits: ServerLimits): PendingQuota {
  return { count: limits.pendingPerRequester, bytes: limits.pendingBytesPerRequester };
}

/** The store's refusal as the server answers it: 429 `quota_exceeded`, naming the limit passed. */
export function quotaProblem(err: QuotaExceededError, limits: ServerLimits): HttpProblem {
  const detail =
    err.limit === "count"
      ? `${err.requester} has ${err.pending} pending requests, the most this server allows per requester (limits.pendingPerRequester = ${limits.pendingPerRequester}); wait until some are decided, or cancel those no longer needed`
      : `${err.requester} has ${err.pending} pending requests taking ${err.pendingBytes} bytes; this one (${err.requestBytes} bytes) would pass the ${limits.pendingBytesPerRequester} bytes allowed per requester (limits.pendingBytesPerRequester); wait until some are decided, or cancel those no longer needed`;
  return new HttpProblem(429, "quota_exceeded", detail, {
    extra: { pending: err.pending, pendingBytes: err.pendingBytes },
  });
}
