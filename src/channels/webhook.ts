// Outgoing webhooks: each outbox message for a webhook channel is POSTed as JSON to the configured URL,
// signed per the Standard Webhooks spec (`webhook-id` = the outbox message id, so a retry carries the
// same id and receivers can drop duplicates; `webhook-timestamp`; `webhook-signature` with one `v1,…`
// per configured secret, so a rotation lists the old and the new). Requests go through node:http(s)
// rather than fetch: its `lookup` option pins the socket to the address the guard checked (fetch would
// need an undici Agent, which is no dependency of ours), and it never follows redirects.
import { randomBytes } from "node:crypto";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Logger } from "pino";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { z } from "zod";
import { OUTBOX_TOPICS, type OutboxMessage, type OutboxTopic } from "../core/outbox.js";
import { parseOrThrow } from "../core/validate.js";
import {
  type CheckedTarget,
  checkTarget,
  PrivateTargetError,
  pinnedLookup,
  type Resolver,
} from "./address-guard.js";
import { deliveryRedactor } from "./outside.js";
import type { ChannelDriver, DeliveryContext, DeliveryResult } from "./types.js";
import { type WebhookEvent, webhookEvent } from "./webhook-payload.js";

export type { WebhookEvent, WebhookRequestSummary } from "./webhook-payload.js";
export { WebhookVerificationError };

export const WEBHOOK_USER_AGENT = "airlock-webhooks";
/** @default per attempt, connection and response body included */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;
/** At most this much of a response body is read; the rest is dropped unread. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** At most this much of a response body goes into an error (and so into logs and the outbox row). */
const EXCERPT_CHARS = 200;
/** A `Retry-After` further away than this is cut to it: a receiver cannot park a message for months. */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/** Headers the driver sets itself, which `headers` may not replace. */
const RESERVED_HEADERS = new Set([
  "content-type",
  "content-length",
  "transfer-encoding",
  "connection",
  "host",
  "user-agent",
  "webhook-id",
  "webhook-timestamp",
  "webhook-signature",
]);

const secretSchema = z.string().refine(isValidSecret, {
  // The message never repeats the value: it is a secret.
  message: "expected a Standard Webhooks secret: `whsec_` followed by base64 (at least 24 bytes)",
});

const urlSchema = z.string().superRefine((text, ctx) => {
  const problem = urlProblem(text);
  if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
});

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const headersSchema = z
  .record(z.string(), z.string().regex(/^[^\r\n]*$/, "expected a header value without line breaks"))
  .superRefine((headers, ctx) => {
    for (const name of Object.keys(headers)) {
      if (!HEADER_NAME.test(name)) {
        ctx.addIssue({ code: "custom", path: [name], message: "expected an HTTP header name" });
      } else if (RESERVED_HEADERS.has(name.toLowerCase())) {
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: `set by Airlock, not configurable (${[...RESERVED_HEADERS].join(", ")})`,
        });
      }
    }
  });

/** A webhook channel's options, as written in the configuration under the channel's name. */
export const webhookOptionsSchema = z
  .object({
    type: z.literal("webhook"),
    /** http or https; no credentials in it (put them in `headers`). */
    url: urlSchema,
    /** One signing secret (`whsec_…`). Give `secrets` instead to rotate. */
    secret: secretSchema.optional(),
    /** One or two signing secrets; with two (old and new, during a rotation) every message carries
     * both signatures, so receivers verify with either. */
    secrets: z.array(secretSchema).min(1).max(2).optional(),
    /** Per attempt. @default 10000 */
    timeoutMs: z.number().int().min(100).max(120_000).optional(),
    /** Allows URLs on loopback, private, link-local and other non-public addresses (an admin's
     * choice, e.g. for a receiver on the same host). @default false */
    allowPrivateTargets: z.boolean().optional(),
    /** The topics this endpoint receives. @default all */
    topics: z.array(z.enum(OUTBOX_TOPICS)).min(1).optional(),
    /** Static headers added to every request (e.g. an Authorization for a gateway). Their values are
     * never logged. */
    headers: headersSchema.optional(),
  })
  .strict()
  .superRefine((options, ctx) => {
    if ((options.secret === undefined) === (options.secrets === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["secrets"],
        message:
          "give exactly one of `secret` (one `whsec_…`) or `secrets` (one or two, to rotate)",
      });
    }
  });

export type WebhookOptions = z.input<typeof webhookOptionsSchema>;

export interface ResolvedWebhookOptions {
  readonly url: URL;
  readonly secrets: readonly string[];
  readonly timeoutMs: number;
  readonly allowPrivateTargets: boolean;
  readonly topics: ReadonlySet<OutboxTopic>;
  readonly headers: Readonly<Record<string, string>>;
}

export interface WebhookDeps {
  logger: Logger;
  /** Host name resolution. @default node:dns lookup (every address) */
  resolve?: Resolver;
}

/** Checks a webhook channel's options (errors name the option, never a secret's value). */
export function resolveWebhookOptions(options: unknown): ResolvedWebhookOptions {
  const parsed = parseOrThrow(webhookOptionsSchema, options, `webhook channel options`);
  return {
    url: new URL(parsed.url),
    secrets: parsed.secrets ?? (parsed.secret === undefined ? [] : [parsed.secret]),
    timeoutMs: parsed.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
    allowPrivateTargets: parsed.allowPrivateTargets ?? false,
    topics: new Set(parsed.topics ?? OUTBOX_TOPICS),
    headers: { ...parsed.headers },
  };
}

/** A new signing secret: `whsec_` and 32 random bytes in base64. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** The `webhook-signature` value: one `v1,<base64 HMAC-SHA256>` per secret, space separated. */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: Date,
  body: string,
): string {
  return secrets.map((secret) => new Webhook(secret).sign(id, timestamp, body)).join(" ");
}

export type WebhookHeaders =
  | Headers
  | Record<string, string | string[] | undefined>
  | { get(name: string): string | null };

/** For receivers: checks a delivery's signature and timestamp (within 5 minutes) against `secret` (or
 * any of `secrets`) and returns the parsed event. `body` must be the raw body as received, not
 * re-serialized JSON. Throws WebhookVerificationError when nothing matches. */
export function verifyWebhook(
  secret: string | readonly string[],
  headers: WebhookHeaders,
  body: string | Buffer,
): WebhookEvent {
  const wanted = {
    "webhook-id": headerValue(headers, "webhook-id"),
    "webhook-timestamp": headerValue(headers, "webhook-timestamp"),
    "webhook-signature": headerValue(headers, "webhook-signature"),
  };
  const secrets = typeof secret === "string" ? [secret] : secret;
  let failure: unknown = new WebhookVerificationError("No secret given");
  for (const s of secrets) {
    try {
      return new Webhook(s).verify(body, wanted) as WebhookEvent;
    } catch (error) {
      // The library throws a plain Error for a secret it cannot use (an empty one, say): the
      // caller is promised WebhookVerificationError, so that is what any failure becomes.
      failure =
        error instanceof WebhookVerificationError
          ? error
          : new WebhookVerificationError(`the secret cannot be used: ${(error as Error).message}`);
    }
  }
  throw failure;
}

export function createWebhookChannel(
  name: string,
  options: unknown,
  deps: WebhookDeps,
): ChannelDriver {
  const resolved = resolveWebhookOptions(options);
  const origin = resolved.url.origin;
  const logger = deps.logger.child({ channel: name, type: "webhook", target: origin });
  const redact = redactor([...resolved.secrets, ...Object.values(resolved.headers)]);

  async function deliver(message: OutboxMessage, ctx: DeliveryContext): Promise<DeliveryResult> {
    if (!resolved.topics.has(message.topic)) {
      return {
        ok: true,
        detail: `not sent: topic \`${message.topic}\` is not in this channel's topics`,
      };
    }
    let target: CheckedTarget;
    try {
      target = await checkTarget(resolved.url.hostname, {
        allowPrivate: resolved.allowPrivateTargets,
        ...(deps.resolve === undefined ? {} : { resolve: deps.resolve }),
      });
    } catch (error) {
      const result: DeliveryResult =
        error instanceof PrivateTargetError
          ? { ok: false, retry: false, error: error.message }
          : // A name that does not resolve now may resolve later (DNS outage, a record being set up).
            {
              ok: false,
              retry: true,
              error: `could not resolve ${resolved.url.hostname}: ${errorText(error)}`,
            };
      logger.warn({ message_id: message.id, error: result.error }, "Webhook not sent");
      return result;
    }

    const body = JSON.stringify(
      webhookEvent(message, ctx.request, ctx.publicUrl, deliveryRedactor(ctx)),
    );
    const timestamp = new Date(ctx.now());
    const headers: Record<string, string> = {
      ...resolved.headers,
      "content-type": "application/json",
      "user-agent": WEBHOOK_USER_AGENT,
      "webhook-id": message.id,
      "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
      "webhook-signature": signatureHeader(resolved.secrets, message.id, timestamp, body),
    };
    const result = await send(resolved, target, headers, body, ctx.signal, ctx.now, redact);
    if (result.ok) {
      logger.debug(
        { message_id: message.id, topic: message.topic, ...result.receipt },
        "Webhook delivered",
      );
    } else {
      logger.warn(
        { message_id: message.id, topic: message.topic, retry: result.retry, error: result.error },
        "Webhook delivery failed",
      );
    }
    return result;
  }

  return { name, type: "webhook", deliver };
}

interface Answer {
  status: number;
  headers: IncomingMessage["headers"];
  excerpt: string;
}

/** One POST, bounded by the attempt's timeout and the dispatcher's signal, classified. */
async function send(
  options: ResolvedWebhookOptions,
  target: CheckedTarget,
  headers: Record<string, string>,
  body: string,
  outer: AbortSignal,
  now: () => number,
  redact: (text: string) => string,
): Promise<DeliveryResult> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMs);
  const stop = () => controller.abort();
  if (outer.aborted) controller.abort();
  else outer.addEventListener("abort", stop, { once: true });
  try {
    const answer = await post(options.url, target, headers, body, controller.signal);
    return classify(answer, options.url.origin, now, redact);
  } catch (error) {
    if (timedOut) {
      return {
        ok: false,
        retry: true,
        error: `no answer from ${options.url.origin} within ${options.timeoutMs} ms`,
      };
    }
    if (outer.aborted) {
      return { ok: false, retry: true, error: "attempt aborted: the dispatcher stopped it" };
    }
    return {
      ok: false,
      retry: true,
      error: `could not reach ${options.url.origin}: ${redact(errorText(error))}`,
    };
  } finally {
    clearTimeout(timer);
    outer.removeEventListener("abort", stop);
  }
}

function post(
  url: URL,
  target: CheckedTarget,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<Answer> {
  const payload = Buffer.from(body, "utf8");
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      {
        protocol: url.protocol,
        // Brackets off an IPv6 literal: http(s) wants the bare address and adds them to Host itself.
        hostname: url.hostname.replace(/^\[|\]$/g, ""),
        port: url.port === "" ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: "POST",
        headers: { ...headers, "content-length": String(payload.length) },
        lookup: pinnedLookup(target),
        // A fresh connection per attempt: a pooled socket could lead to an address checked earlier.
        agent: false,
        signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let settled = false;
        const finish = () => {
          if (settled) return;
          settled = true;
          const excerpt = Buffer.concat(chunks).toString("utf8").slice(0, EXCERPT_CHARS);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, excerpt });
        };
        res.on("data", (chunk: Buffer) => {
          if (size >= MAX_RESPONSE_BYTES) return;
          chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - size));
          size += chunk.length;
          if (size >= MAX_RESPONSE_BYTES) {
            // Enough read: the status is what counts, the rest is not worth the wait.
            finish();
            res.destroy();
          }
        });
        res.on("end", finish);
        res.on("error", (error) => (settled ? undefined : reject(error)));
        res.on("close", () => {
          if (!settled && !res.complete) reject(new Error("the connection closed mid-response"));
          else finish();
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

function classify(
  answer: Answer,
  origin: string,
  now: () => number,
  redact: (text: string) => string,
): DeliveryResult {
  const { status } = answer;
  if (status >= 200 && status < 300) return { ok: true, receipt: { status } };
  const said = answer.excerpt.trim() === "" ? "" : `: ${redact(oneLine(answer.excerpt))}`;
  if (status >= 300 && status < 400) {
    const location = firstHeader(answer.headers.location);
    return {
      ok: false,
      retry: false,
      error: `${origin} answered ${status}, a redirect${location === undefined ? "" : ` to ${redact(oneLine(location).slice(0, EXCERPT_CHARS))}`}; webhooks do not follow redirects: configure the final URL`,
    };
  }
  if (status === 410) {
    return {
      ok: false,
      retry: false,
      gone: true,
      error: `${origin} answered 410 Gone: the receiver no longer exists, so the channel is disabled${said}`,
    };
  }
  if (status === 408 || status === 429 || (status >= 500 && status < 600)) {
    const retryAfterMs = parseRetryAfter(firstHeader(answer.headers["retry-after"]), now());
    return {
      ok: false,
      retry: true,
      error: `${origin} answered ${status}${said}`,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
  }
  return { ok: false, retry: false, error: `${origin} answered ${status}${said}` };
}

/** `Retry-After` in ms from `now`: whole seconds or an HTTP date; undefined when absent or unreadable.
 * A date in the past is 0; anything beyond a day is cut to a day. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else if (/[a-z]/i.test(text)) {
    // An HTTP date ("Wed, 21 Oct 2026 07:28:00 GMT") has letters; bare numbers like "-5" do not count.
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  } else return undefined;
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

function isValidSecret(secret: string): boolean {
  if (!secret.startsWith("whsec_")) return false;
  const base64 = secret.slice("whsec_".length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64) || base64.length % 4 !== 0) return false;
  return Buffer.from(base64, "base64").length >= 24;
}

function urlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "expected an absolute http or https URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `expected an http or https URL, got the scheme \`${url.protocol.replace(/:$/, "")}\``;
  }
  if (url.username !== "" || url.password !== "") {
    return "credentials in the URL are not sent; put them in `headers` (e.g. `Authorization`)";
  }
  return undefined;
}

function headerValue(headers: WebhookHeaders, name: string): string {
  if (typeof (headers as { get?: unknown }).get === "function") {
    return (headers as { get(name: string): string | null }).get(name) ?? "";
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(" ") : (value ?? "");
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function errorText(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== undefined && !error.message.includes(code)
      ? `${code} ${error.message}`
      : error.message;
  }
  return String(error);
}

/** Replaces every occurrence of a secret (and a `whsec_` secret's base64 part) with `[redacted]`, for
 * text that came from outside (a receiver echoing what it got). */
function redactor(secrets: string[]): (text: string) => string {
  const needles = secrets
    .flatMap((s) => (s.startsWith("whsec_") ? [s, s.slice("whsec_".length)] : [s]))
    .filter((s) => s.length >= 8)
    .sort((a, b) => b.length - a.length);
  return (text) => needles.reduce((out, needle) => out.split(needle).join("[redacted]"), text);
}
