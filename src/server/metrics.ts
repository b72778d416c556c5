// Prometheus metrics on a registry of the server's own (never prom-client's global one, so two
// servers in one process, or a host application's metrics, do not clash).
//
// Decision counters and the review-duration histogram are fed from the audit log's live tail, so
// they count every decision in the store, whichever process made it: with several server
// processes on one database, aggregate them with max(), not sum(). The pending gauge is read from
// the store at scrape time.
//
// prom-client is an optional peer dependency, loaded when a server starts: without it the server
// runs, and /metrics answers 501 naming the package to install.
import { createRequire } from "node:module";
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { Logger } from "pino";
import type * as PromClient from "prom-client";
import type { Registry } from "prom-client";
import { isAirlockError } from "../core/errors.js";
import type { AuditEvent, Method } from "../core/schemas.js";
import { AUTOMATIC_METHODS } from "../core/state.js";
import type { Airlock } from "../engine/engine.js";
import type { ServerEnv } from "./env.js";
import type { MetricsRegistry } from "./metrics-registry.js";

const COUNTED = new Set(["created", "decided", "timed_out", "cancelled", "escalated"]);

export interface ServerMetrics {
  /** Undefined when prom-client is not installed (then /metrics answers 501). */
  registry: MetricsRegistry | undefined;
  /** Middleware counting and timing every HTTP request by route pattern (never by raw path). */
  observe: MiddlewareHandler<ServerEnv>;
  /** Stops following the audit log. */
  stop(): void;
}

/** The message of a server without prom-client, for its log and its /metrics answer. */
export const METRICS_PEER_MISSING =
  '/metrics needs the package "prom-client": npm install prom-client';

/** prom-client, or undefined when it is not installed (any other failure to load it is thrown). */
function loadPromClient(): typeof PromClient | undefined {
  try {
    return createRequire(import.meta.url)("prom-client") as typeof PromClient;
  } catch (err) {
    if (
      (err as { code?: unknown }).code === "MODULE_NOT_FOUND" &&
      /prom-client/.test(String(err))
    ) {
      return undefined;
    }
    throw err;
  }
}

export function createServerMetrics(
  airlock: Airlock,
  logger: Logger,
  /** A prom-client `Registry` to register on (see ServerOptions.registry). */
  given?: MetricsRegistry,
  /** The live tail to follow (the server's shared one); by default the engine's own. */
  tail: (signal: AbortSignal) => AsyncIterable<AuditEvent> = (signal) => airlock.events({ signal }),
  prom: typeof PromClient | undefined = loadPromClient(),
): ServerMetrics {
  if (!prom) {
    logger.warn(METRICS_PEER_MISSING);
    return { registry: undefined, observe: (_c, next) => next(), stop: () => {} };
  }
  const { Counter, collectDefaultMetrics, Gauge, Histogram } = prom;
  // ServerOptions.registry is documented as a prom-client Registry; its type is structural only so
  // that the declarations do not name prom-client.
  const registry = (given as Registry | undefined) ?? new prom.Registry();
  const httpRequests = new Counter({
    name: "airlock_http_requests_total",
    help: "HTTP requests answered, by method, route pattern and status",
    labelNames: ["method", "route", "status"] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: "airlock_http_request_duration_seconds",
    help: "Time to answer an HTTP request (long-polls included), by method and route pattern",
    labelNames: ["method", "route"] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const created = new Counter({
    name: "airlock_requests_created_total",
    help: "Approval requests created",
    registers: [registry],
  });
  const decisions = new Counter({
    name: "airlock_decisions_total",
    help: "Requests that reached a terminal state, by outcome and method",
    labelNames: ["outcome", "method"] as const,
    registers: [registry],
  });
  const escalations = new Counter({
    name: "airlock_escalations_total",
    help: "Requests escalated to other approvers when their deadline passed",
    registers: [registry],
  });
  const reviewDuration = new Histogram({
    name: "airlock_review_duration_seconds",
    help: "Time from a request's creation to a person's decision",
    labelNames: ["outcome"] as const,
    buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600],
    registers: [registry],
  });
  new Gauge({
    name: "airlock_pending_requests",
    help: "Requests waiting for a decision (read from the store)",
    registers: [registry],
    async collect() {
      try {
        this.set(await airlock.count({ status: "pending" }));
      } catch (err) {
        logger.warn({ err }, "could not count pending requests for /metrics");
      }
    },
  });
  new Gauge({
    name: "airlock_executions_unknown",
    help: "Approved actions not known to have run: claimed, and no outcome before the lease ended (read from the store)",
    registers: [registry],
    async collect() {
      try {
        this.set(await airlock.count({ execution: "unknown" }));
      } catch (err) {
        logger.warn({ err }, "could not count unknown executions for /metrics");
      }
    },
  });
  // prom-client's process and Node.js metrics (memory, CPU, event loop lag, handles), once per
  // registry: a registry handed in that has them already keeps its own.
  if (!registry.getSingleMetric("process_resident_memory_bytes")) {
    collectDefaultMetrics({ register: registry });
  }

  const stopper = new AbortController();
  void (async () => {
    try {
      for await (const e of tail(stopper.signal)) {
        if (!COUNTED.has(e.type)) continue;
        if (e.type === "created") {
          created.inc();
          continue;
        }
        if (e.type === "escalated") {
          escalations.inc();
          continue;
        }
        const outcome = String(e.data.outcome ?? e.type);
        const method = String(e.data.method ?? "unknown");
        decisions.inc({ outcome, method });
        // Terminal events carry their request's creation time: a review is timed without a read.
        const since = e.data.createdAt;
        if (!AUTOMATIC_METHODS.has(method as Method) && typeof since === "number") {
          reviewDuration.observe({ outcome }, Math.max(0, e.at - since) / 1000);
        }
      }
    } catch (err) {
      if (!isAirlockError(err, "closed")) logger.warn({ err }, "metrics stopped following events");
    }
  })();

  const observe: MiddlewareHandler<ServerEnv> = async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = routeLabel(c);
      const method = c.req.method;
      httpRequests.inc({ method, route, status: String(c.res.status) });
      httpDuration.observe({ method, route }, (performance.now() - started) / 1000);
    }
  };

  return { registry, observe, stop: () => stopper.abort() };
}

/** The pattern of the route handler that matched (`/v1/requests/:id`), never the raw path, so the
 * label set stays small; `unmatched` when only middleware matched. */
function routeLabel(c: Context<ServerEnv>): string {
  const routes = matchedRoutes(c);
  for (let i = routes.length - 1; i >= 0; i--) {
    const r = routes[i];
    if (r && r.method !== "ALL") return r.path;
  }
  return "unmatched";
}
