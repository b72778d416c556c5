// Assembles the HTTP server: options resolved in one place, then middleware in the order a request
// meets it (shutdown guard, metrics, authentication, rate limit, body limit), then the routes.
import { Hono } from "hono";
import pino, { type Logger } from "pino";
import type { Registry } from "prom-client";
import type { Airlock } from "../core/engine.js";
import { authenticate, limitRate } from "./auth.js";
import { limitBody } from "./body.js";
import type { RouteDeps, ServerEnv } from "./env.js";
import { inboxRoutes } from "./inbox/routes.js";
import { createLifecycle, type Listening, type ListenOptions } from "./lifecycle.js";
import { createServerMetrics } from "./metrics.js";
import { openApiDocument } from "./openapi.js";
import { HttpProblem, onError, problem, problemResponse } from "./problem.js";
import { createRateLimiter, type RateLimitOptions } from "./rate-limit.js";
import { auditRoutes } from "./routes/audit.js";
import { eventRoutes } from "./routes/events.js";
import { requestRoutes } from "./routes/requests.js";
import { tokenRoutes } from "./routes/tokens.js";
import type { TokenStore } from "./tokens.js";

export interface ServerOptions {
  airlock: Airlock;
  auth: {
    /** Where API tokens are looked up (by their SHA-256). */
    tokens: TokenStore;
  };
  /** @default the engine's logger */
  logger?: Logger;
  /** Largest request body accepted; larger ones get 413. @default 1048576 (1 MiB) */
  bodyLimitBytes?: number;
  /** Requests per token; `false` turns the limit off. @default { max: 600, windowMs: 60000 } */
  rateLimit?: RateLimitOptions | false;
  /** Failed authentications per client address. @default { max: 30, windowMs: 60000 } */
  authFailureLimit?: RateLimitOptions | false;
  /** The longest a long-poll waits, in seconds. @default 60 */
  maxWaitSeconds?: number;
  /** Comment lines on idle event streams, in ms. @default 15000 */
  heartbeatMs?: number;
  /** How long `close()` lets answers in flight finish before cutting connections. @default 10000 */
  shutdownGraceMs?: number;
  /** A Prometheus registry to register on. @default a new one, private to this server */
  registry?: Registry;
}

type Resolved = Required<Omit<ServerOptions, "registry" | "logger">> & {
  logger: Logger;
  registry: Registry | undefined;
};

const DEFAULTS = {
  bodyLimitBytes: 1024 * 1024,
  rateLimit: { max: 600, windowMs: 60_000 },
  authFailureLimit: { max: 30, windowMs: 60_000 },
  maxWaitSeconds: 60,
  heartbeatMs: 15_000,
  shutdownGraceMs: 10_000,
} satisfies Partial<ServerOptions>;

function resolve(options: ServerOptions): Resolved {
  const r: Resolved = {
    airlock: options.airlock,
    auth: options.auth,
    logger: options.logger ?? options.airlock.logger ?? pino({ level: "silent" }),
    bodyLimitBytes: options.bodyLimitBytes ?? DEFAULTS.bodyLimitBytes,
    rateLimit: options.rateLimit ?? DEFAULTS.rateLimit,
    authFailureLimit: options.authFailureLimit ?? DEFAULTS.authFailureLimit,
    maxWaitSeconds: options.maxWaitSeconds ?? DEFAULTS.maxWaitSeconds,
    heartbeatMs: options.heartbeatMs ?? DEFAULTS.heartbeatMs,
    shutdownGraceMs: options.shutdownGraceMs ?? DEFAULTS.shutdownGraceMs,
    registry: options.registry,
  };
  positive("bodyLimitBytes", r.bodyLimitBytes);
  positive("maxWaitSeconds", r.maxWaitSeconds);
  positive("heartbeatMs", r.heartbeatMs);
  if (!(r.shutdownGraceMs >= 0)) {
    throw new TypeError(
      `Expected \`shutdownGraceMs\` to be 0 or more, got \`${r.shutdownGraceMs}\``,
    );
  }
  if (!options.auth?.tokens) {
    throw new TypeError("Expected `auth.tokens`, a TokenStore (e.g. sqliteTokenStore(path))");
  }
  return r;
}

function positive(name: string, value: number) {
  if (!Number.isFinite(value) || value <= 0) {
    throw new TypeError(`Expected \`${name}\` to be a number above 0, got \`${value}\``);
  }
}

export interface AirlockServer {
  /** The Hono app, for `app.request()` in tests or mounting in another server. */
  app: Hono<ServerEnv>;
  /** The Prometheus registry behind /metrics. */
  registry: Registry;
  listen(options?: ListenOptions): Promise<Listening>;
  /** Graceful: stops accepting, answers long-polls with the current state, ends event streams,
   * waits for answers in flight. Does not close the engine or the token store (they are yours). */
  close(): Promise<void>;
}

export function createServer(options: ServerOptions): AirlockServer {
  const o = resolve(options);
  const { airlock, logger } = o;
  const metrics = createServerMetrics(airlock, logger, o.registry);
  const app = new Hono<ServerEnv>();
  const lifecycle = createLifecycle({
    fetch: (request, env) => app.fetch(request, env),
    logger,
    graceMs: o.shutdownGraceMs,
    onClose: () => metrics.stop(),
  });
  const deps: RouteDeps = {
    airlock,
    logger,
    shutdown: lifecycle.shutdown,
    maxWaitSeconds: o.maxWaitSeconds,
    heartbeatMs: o.heartbeatMs,
  };

  app.onError(onError(logger));
  app.notFound(() =>
    problemResponse(problem(404, "route_not_found", "no such route; see /openapi.json")),
  );

  app.use("*", async (c, next) => {
    if (lifecycle.closing && c.req.path !== "/healthz") {
      c.header("connection", "close");
      throw new HttpProblem(503, "unavailable", "the server is shutting down", {
        headers: { connection: "close", "retry-after": "1" },
      });
    }
    await next();
  });
  app.use("*", metrics.observe);

  app.get("/healthz", (c) =>
    c.json(
      { ok: !lifecycle.closing, shuttingDown: lifecycle.closing },
      lifecycle.closing ? 503 : 200,
    ),
  );

  // The web inbox authenticates with its own session cookie, so it comes before the API's bearer
  // authentication; the paths it does not serve fall through to the API.
  app.route(
    "/",
    inboxRoutes({
      airlock,
      tokens: o.auth.tokens,
      logger,
      shutdown: lifecycle.shutdown,
      heartbeatMs: o.heartbeatMs,
      bodyLimitBytes: o.bodyLimitBytes,
    }),
  );

  app.use(
    "*",
    authenticate({
      tokens: o.auth.tokens,
      failures: o.authFailureLimit ? createRateLimiter(o.authFailureLimit) : undefined,
    }),
  );
  if (o.rateLimit) app.use("*", limitRate(createRateLimiter(o.rateLimit)));
  app.use("*", limitBody(o.bodyLimitBytes));

  app.route("/v1/requests", requestRoutes(deps));
  app.route("/v1/events", eventRoutes(deps));
  app.route("/v1/audit", auditRoutes(deps));
  app.route("/v1/tokens", tokenRoutes(deps, o.auth.tokens));
  app.get("/openapi.json", (c) => c.json(openApiDocument()));
  app.get("/metrics", async (c) => {
    const text = await metrics.registry.metrics();
    return c.body(text, 200, { "content-type": metrics.registry.contentType });
  });

  return {
    app,
    registry: metrics.registry,
    listen: (listenOptions) => lifecycle.listen(listenOptions),
    close: () => lifecycle.close(),
  };
}
