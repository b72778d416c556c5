// The Slack Web API client as this channel uses it, and what its failures mean to the outbox: the
// dispatcher retries (it owns backoff), so the client itself neither retries nor waits out rate limits.
import { ErrorCode, LogLevel, type Logger as SlackLogger, WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import type { DeliveryResult } from "../types.js";
import { DEFAULT_SLACK_API_URL } from "./options.js";

/** How long one Web API call may take before it counts as a network failure. */
const CALL_TIMEOUT_MS = 10_000;

/** Answers retrying cannot change: the token, the channel or the app's membership is wrong. */
const PERMANENT = new Set([
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "no_permission",
  "missing_scope",
  "channel_not_found",
  "not_in_channel",
  "is_archived",
  "invalid_blocks",
  "invalid_metadata_format",
  "msg_too_long",
  "no_text",
]);

export function slackClient(token: string, apiUrl: string | undefined, logger: Logger): WebClient {
  return new WebClient(token, {
    slackApiUrl: apiUrl ?? DEFAULT_SLACK_API_URL,
    logger: slackLogger(logger),
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: CALL_TIMEOUT_MS,
  });
}

/** The SDK's logger interface over pino, so nothing reaches the console. Its debug output (request
 * bodies, headers) stays at pino's trace level. */
export function slackLogger(logger: Logger): SlackLogger {
  const log = logger.child({ component: "slack-sdk" });
  return {
    debug: (...msg: unknown[]) => log.trace(msg.map(String).join(" ")),
    info: (...msg: unknown[]) => log.debug(msg.map(String).join(" ")),
    warn: (...msg: unknown[]) => log.warn(msg.map(String).join(" ")),
    error: (...msg: unknown[]) => log.error(msg.map(String).join(" ")),
    setLevel: () => {},
    getLevel: () => LogLevel.INFO,
    setName: () => {},
  };
}

/** The Slack error code of a failed call (`channel_not_found`), when Slack answered one. */
export function slackErrorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; data?: { error?: unknown } } | null;
  if (e?.code === ErrorCode.PlatformError && typeof e.data?.error === "string") return e.data.error;
  return undefined;
}

/** What a failed Web API call means for the message being delivered. */
export function deliveryFailure(err: unknown, call: string): DeliveryResult {
  const e = err as { code?: unknown; retryAfter?: unknown; statusCode?: unknown } | null;
  if (e?.code === ErrorCode.RateLimitedError) {
    const seconds = typeof e.retryAfter === "number" && e.retryAfter > 0 ? e.retryAfter : 30;
    return {
      ok: false,
      retry: true,
      error: `${call}: ratelimited, retry after ${seconds}s`,
      retryAfterMs: seconds * 1000,
    };
  }
  const code = slackErrorCode(err);
  if (code === "ratelimited") {
    return { ok: false, retry: true, error: `${call}: ratelimited`, retryAfterMs: 30_000 };
  }
  if (code !== undefined) {
    return { ok: false, retry: !PERMANENT.has(code), error: `${call}: ${code}` };
  }
  if (e?.code === ErrorCode.HTTPError) {
    const status = typeof e.statusCode === "number" ? e.statusCode : 0;
    // 4xx other than 429 will not change on a retry; 5xx may.
    const retry = status >= 500 || status === 429 || status === 0;
    return { ok: false, retry, error: `${call}: HTTP ${status}` };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { ok: false, retry: true, error: `${call}: ${message}` };
}
