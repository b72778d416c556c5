// `createClient({ url, token })`: the engine's gate API (`AirlockApi`: request / get / getByKey / list /
// waitFor / decide / cancel / claimExecution / record / takeTicket / finishTicket) over HTTP, so code written against an
// in-process gate runs unchanged against a server (`runApproved` included). Errors are the
// engine's classes with the same codes. `waitFor` long-polls, reconnecting (with backoff when the
// server is unreachable or busy) until its own `timeoutMs`, and honours its AbortSignal.

import { AirlockError, TimeoutError } from "../core/errors.js";
import type { ExecutionOutcome } from "../core/execution.js";
import type { ApprovalRequest, AuditEvent, DecisionInput, RequestInput } from "../core/schemas.js";
import { isTerminal } from "../core/state.js";
import type { ListFilter, Page } from "../core/store.js";
import {
  expectNonNegativeInt,
  expectNonNegativeNumber,
  expectPositiveNumber,
} from "../core/validate.js";
import type { AirlockApi } from "../engine/api.js";
import type { CancelOptions, WaitOptions } from "../engine/engine.js";
import type { FinishTicketOptions, TakeTicketOptions, Ticket } from "../engine/tickets.js";
import { isRetryable, UnavailableError } from "./errors.js";
import { createTransport } from "./http.js";

export interface ClientOptions {
  /** The server's base address, e.g. http://127.0.0.1:7420 */
  url: string;
  /** An API token (`airlock token create`). */
  token: string;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  /** The longest single long-poll, in ms (the server caps it at its own limit, 60 s by default).
   * @default 55000 */
  pollMs?: number;
  /** Gives up on a call other than waitFor after this long. @default 30000 */
  requestTimeoutMs?: number;
  /** Times a safe call is tried again when the server is unreachable, answers 503 (storage fault,
   * restart) or 429 `rate_limited`. Safe calls: `get`, `list`, and `request` with a `key` (the key
   * makes a repeat return the first request); `waitFor` retries until its own timeout anyway.
   * 0 turns retrying off. @default 3 */
  retries?: number;
  /** The longest pause before a retry, in ms, whatever the server's Retry-After says (a longer one
   * is not waited for: the error is thrown). @default 10000 */
  maxRetryDelayMs?: number;
}

const DEFAULTS = {
  pollMs: 55_000,
  requestTimeoutMs: 30_000,
  retries: 3,
  maxRetryDelayMs: 10_000,
} satisfies Partial<ClientOptions>;
/** Extra time the client gives a long-poll beyond what it asked the server to wait. */
const POLL_MARGIN_MS = 10_000;
const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5_000;

/** The HTTP client: the engine's gate API (`AirlockApi`). `claimExecution` is
 * POST /v1/requests/:id/execution; `record` is POST /v1/audit, where the server accepts the types
 * `auto_executed` and `notified` (others get 400), sets the actor from the token and ignores `at`
 * (it stamps its own time). `getByKey` is GET /v1/requests?key=K (and `&requester=R` when given):
 * `{ items: [request] }` when found, no items otherwise. `takeTicket` is POST /v1/tickets and
 * `finishTicket` POST /v1/tickets/finish: a ticket's scope is the token's principal. */
export type AirlockClient = AirlockApi;

/** Marks what `createClient` made, so an adapter can tell a server's client (whose token names the
 * requester) from an in-process engine (which would record a nameless requester as `anonymous`).
 * A registered symbol, so two copies of the package agree. */
const CLIENT = Symbol.for("airlock.client");

/** True for an object made by `createClient`. */
export function isAirlockClient(api: unknown): boolean {
  return (
    typeof api === "object" && api !== null && (api as { [CLIENT]?: unknown })[CLIENT] === true
  );
}

export function createClient(options: ClientOptions): AirlockClient {
  const pollMs = expectPositiveNumber("pollMs", options.pollMs ?? DEFAULTS.pollMs);
  const requestTimeoutMs = expectPositiveNumber(
    "requestTimeoutMs",
    options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
  );
  const retries = expectNonNegativeInt("retries", options.retries ?? DEFAULTS.retries);
  const maxRetryDelayMs = expectNonNegativeNumber(
    "maxRetryDelayMs",
    options.maxRetryDelayMs ?? DEFAULTS.maxRetryDelayMs,
  );
  /** Runs a safe call, trying again (bounded) while the server says it cannot answer now. */
  async function retrying<T>(call: () => Promise<T>): Promise<T> {
    let backoff = BACKOFF_MIN_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        return await call();
      } catch (err) {
        if (attempt >= retries || !isRetryable(err)) throw err;
        const pause = err.retryAfterMs ?? backoff;
        if (pause > maxRetryDelayMs) throw err;
        await sleep(pause, undefined);
        backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
      }
    }
  }
  const http = createTransport({
    url: options.url,
    token: options.token,
    fetch: options.fetch ?? globalThis.fetch,
  });
  const path = (id: string, rest = "") => `/v1/requests/${encodeURIComponent(id)}${rest}`;
  const subject = (id: string) => ({ what: "request", id });

  const client: AirlockClient = {
    request(input: RequestInput) {
      const create = () =>
        http.call<ApprovalRequest>("POST", "/v1/requests", {
          body: input,
          timeoutMs: requestTimeoutMs,
          ...(input.key === undefined ? {} : { headers: { "idempotency-key": input.key } }),
        });
      // Without a key a repeat could create a second request: tried once.
      return input.key === undefined ? create() : retrying(create);
    },

    get(id: string) {
      return retrying(() =>
        http.call<ApprovalRequest>("GET", path(id), {
          timeoutMs: requestTimeoutMs,
          subject: subject(id),
        }),
      );
    },

    async getByKey(key: string, opts: { requester?: string } = {}) {
      const page = await retrying(() =>
        http.call<Page<ApprovalRequest>>("GET", "/v1/requests", {
          timeoutMs: requestTimeoutMs,
          query: { key, requester: opts.requester },
        }),
      );
      return page.items[0];
    },

    list(filter: ListFilter = {}) {
      return retrying(() =>
        http.call<Page<ApprovalRequest>>("GET", "/v1/requests", {
          timeoutMs: requestTimeoutMs,
          query: {
            status: filter.status,
            action: filter.action,
            approver: filter.approver,
            requester: filter.requester,
            execution: filter.execution,
            q: filter.q,
            cursor: filter.cursor,
            limit: filter.limit,
            order: filter.order,
          },
        }),
      );
    },

    async waitFor(id: string, opts: WaitOptions = {}) {
      const { signal, timeoutMs } = opts;
      const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
      let backoff = BACKOFF_MIN_MS;
      for (;;) {
        if (signal?.aborted) throw aborted(signal);
        const remaining = deadline - Date.now();
        if (remaining <= 0) {
          throw new TimeoutError(`waited ${timeoutMs} ms for ${id}; it is still pending`);
        }
        // Seconds only on the wire: the server's `timeout` query parameter.
        const seconds = Math.min(pollMs, remaining) / 1000;
        try {
          const r = await http.call<ApprovalRequest>("GET", path(id, "/wait"), {
            query: { timeout: seconds.toFixed(3) },
            timeoutMs: Math.ceil(seconds * 1000) + POLL_MARGIN_MS,
            subject: subject(id),
            ...(signal ? { signal } : {}),
          });
          backoff = BACKOFF_MIN_MS;
          if (isTerminal(r.status)) return r;
        } catch (err) {
          if (!(err instanceof UnavailableError)) throw err;
          // Unreachable, restarting, shutting down or rate limited: try again until our own deadline.
          const pause = Math.min(err.retryAfterMs ?? backoff, Math.max(0, deadline - Date.now()));
          await sleep(pause, signal);
          backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
        }
      }
    },

    decide(id: string, decision: DecisionInput) {
      return http.call<ApprovalRequest>("POST", path(id, "/decisions"), {
        body: decision,
        timeoutMs: requestTimeoutMs,
        subject: subject(id),
      });
    },

    claimExecution(id: string, opts: { leaseMs?: number } = {}) {
      // Never repeated: a claim that went through and whose answer was lost must not look like
      // somebody else's claim. (`by` is the token's principal on a server.)
      return http.call<ApprovalRequest>("POST", path(id, "/execution"), {
        body: opts.leaseMs === undefined ? {} : { leaseMs: opts.leaseMs },
        timeoutMs: requestTimeoutMs,
        subject: subject(id),
      });
    },

    renewExecution(id: string, input: { attempt: number; leaseMs?: number }) {
      return retrying(() =>
        http.call<ApprovalRequest>("POST", path(id, "/execution/renewal"), {
          body: input,
          timeoutMs: requestTimeoutMs,
          subject: subject(id),
        }),
      );
    },

    finishExecution(id: string, outcome: ExecutionOutcome) {
      // Repeated while the server cannot answer: the outcome must reach the log. A repeat of one
      // that went through is a 409 naming the outcome recorded, which runApproved accepts.
      return retrying(() =>
        http.call<ApprovalRequest>("POST", path(id, "/execution/outcome"), {
          body: outcome,
          timeoutMs: requestTimeoutMs,
          subject: subject(id),
        }),
      );
    },

    record(event) {
      const { at: _at, ...body } = event;
      return http.call<AuditEvent>("POST", "/v1/audit", {
        body,
        timeoutMs: requestTimeoutMs,
        ...(event.requestId === undefined ? {} : { subject: subject(event.requestId) }),
      });
    },

    takeTicket(key: string, opts: TakeTicketOptions = {}) {
      // The scope and the holder's name are the token's principal: `requester` and `by` are not sent.
      const body = {
        key,
        ...(opts.holder === undefined ? {} : { holder: opts.holder }),
        ...(opts.leaseMs === undefined ? {} : { leaseMs: opts.leaseMs }),
      };
      const take = () =>
        http.call<Ticket>("POST", "/v1/tickets", { body, timeoutMs: requestTimeoutMs });
      // A first take is tried once: one that went through and whose answer was lost holds the
      // ticket for a holder nobody knows, and a repeat would answer that it is taken. A renewal
      // (a holder given) is the same take again.
      return opts.holder === undefined ? take() : retrying(take);
    },

    async finishTicket(key: string, opts: FinishTicketOptions) {
      const out = await retrying(() =>
        http.call<{ finished: boolean }>("POST", "/v1/tickets/finish", {
          body: { key, holder: opts.holder },
          timeoutMs: requestTimeoutMs,
        }),
      );
      return out.finished;
    },

    cancel(id: string, opts: CancelOptions = {}) {
      return http.call<ApprovalRequest>("POST", path(id, "/cancel"), {
        body: opts,
        timeoutMs: requestTimeoutMs,
        subject: subject(id),
      });
    },
  };
  Object.defineProperty(client, CLIENT, { value: true });
  return client;
}

function aborted(signal: AbortSignal): AirlockError {
  const reason = signal.reason instanceof Error ? signal.reason.message : "aborted";
  return new AirlockError("aborted", `waiting was aborted: ${reason}`);
}

/** Sleeps, rejecting with code `aborted` as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted(signal));
    const onAbort = () => {
      clearTimeout(timer);
      if (signal) reject(aborted(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
