// Assembles the HTTP server: options resolved in one place, then middleware in the order a request
// meets it (shutdown guard, metrics, authentication, rate limit, body limit), then the routes.
import { createHash, timingSafeEqual } from "node:crypto";
import { Hono, type MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";
import pino, { type Logger } from "pino";
import { auditKeying } from "../audit/unkeyed.js";
import { problem, problemResponse } from "../core/problem.js";
import { expectNonNegativeNumber, expectPositiveNumber, invalidOption } from "../core/validate.js";
import type { Airlock } from "../engine/engine.js";
import type { LearnedTrust } from "../policy/learned-trust.js";
import { authenticate, limitRate } from "./auth.js";
import { limitBody } from "./body.js";
import { channelRoutes, inboundDeps, type ServerChannels } from "./channels.js";
import { createCredentialWatch } from "./credentials.js";
import { createEmbedTokens } from "./embed/token.js";
import type { RouteDeps, ServerEnv } from "./env.js";
import { createEventHub } from "./event-hub.js";
import { type InboxOptions, inboxRoutes } from "./inbox/routes.js";
import { createLifecycle, type Listening, type ListenOptions } from "./lifecycle.js";
import { resolveLimits, type ServerLimits } from "./limits.js";
import { createServerMetrics, METRICS_PEER_MISSING, type ServerMetrics } from "./metrics.js";
import type { MetricsRegistry } from "./metrics-registry.js";
import { healthRoute, metricsRoute, openApiDocument, openApiRoute } from "./openapi.js";
import { HttpProblem, onError } from "./problem.js";
import {
  checkRateLimit,
  createRateLimiter,
  type RateLimitOptions,
  type RateLimitStore,
} from "./rate-limit.js";
import { mount } from "./route.js";
import { auditRoutes } from "./routes/audit.js";
import { decisionRoutes } from "./routes/decisions.js";
import { embedPublicRoutes, embedRoutes } from "./routes/embed.js";
import { eventRoutes } from "./routes/events.js";
import { executionRoutes } from "./routes/execution.js";
import { outboxRoutes } from "./routes/outbox.js";
import { requestRoutes } from "./routes/requests.js";
import { ticketRoutes } from "./routes/tickets.js";
import { tokenRoutes } from "./routes/tokens.js";
import { trustRoutes } from "./routes/trust.js";
import { viewRoutes } from "./routes/view.js";
import { screenUrl } from "./screen.js";
import { createStorageHealth } from "./storage-health.js";
import type { TokenStore } from "./tokens.js";
import type { PostgresTokenStore } from "./tokens-postgres.js";

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
  /** Requests per token (API routes), a token bucket: `max` in a burst and per `windowMs` on
   * average; past it 429 `rate_limited` with Retry-After. `false` turns the limit off. `airlock
   * serve --rate-limit 600/60s` (see `parseRateLimit`). @default { max: 600, windowMs: 60000 } */
  rateLimit?: RateLimitOptions | false;
  /** Refused tokens per client address; past it a refused token gets 429 instead of 401. A valid
   * token is always served, and a request without any token never counts.
   * @default { max: 30, windowMs: 60000 } */
  authFailureLimit?: RateLimitOptions | false;
  /** Where the rate limits count: a PostgreSQL pool shared by every server on one database, so
   * they hold across servers (a table `airlock_rate_limits`). @default the token store's pool when
   * it is a PostgreSQL token store, else this process's memory */
  rateLimitStore?: RateLimitStore;
  /** Size limits per field and pending quotas per requester; see `ServerLimits` for the defaults. */
  limits?: Partial<ServerLimits>;
  /** Event streams (`GET /v1/events`) one token may hold open at once; one more answers 429
   * `too_many_streams`. @default 8 */
  maxStreamsPerToken?: number;
  /** How often open streams and long-polls re-check that their token is still valid, in ms (a
   * revocation through this server's API ends them at once). @default 2000 */
  credentialCheckMs?: number;
  /** A storage fault episode (503 `store_unavailable`, `degraded` on /healthz) ends after a
   * successful write or this long without a failure, in ms. @default 30000 */
  storageQuietMs?: number;
  /** A bearer secret that may read `GET /metrics` (a Prometheus scraper's), besides admin tokens.
   * @default none: admins only */
  metricsToken?: string;
  /** The longest a long-poll waits, in ms (a client asks for seconds: `?timeout=S`). @default 60000 */
  maxWaitMs?: number;
  /** Comment lines on idle event streams, in ms. @default 15000 */
  heartbeatMs?: number;
  /** How long `close()` lets answers in flight finish before cutting connections. @default 10000 */
  shutdownGraceMs?: number;
  /** A prom-client `Registry` to register on. @default a new one, private to this server (when
   * the optional peer prom-client is installed; without it /metrics answers 501) */
  registry?: MetricsRegistry;
  /** The inbox's sign-in sessions and cookies: `secureCookies` (`true` behind a TLS proxy; @default
   * "auto": when the request came over https, or with `trustProxy` when `X-Forwarded-Proto` says so),
   * `trustProxy`, `sessionsPerToken`, `maxSessions`, `signInLimit`, `viewedWindowMs`. */
  inbox?: InboxOptions;
  /** Slack, email and webhook channels (`airlock serve --config`): their inbound routes are served at
   * `/channels/<name>`, each authenticating its caller itself (a signing secret, a signed link). */
  channels?: ServerChannels;
  /** Signs the approval card's embed tokens (HMAC-SHA256). Give every server sharing a database the
   * same one. @default a random secret per process: embed tokens die on restart and are accepted by
   * this process only */
  embedSecret?: string;
  /** Origins of the pages that embed the approval card (`https://chat.example.com`): the
   * /v1/embed/* routes answer CORS for them. @default none: same origin only */
  embedOrigins?: readonly string[];
  /** Whether the engine's store keys the audit chain (an audit key: new events are HMACs), as
   * /healthz (`audit`) and /v1/audit/verify (`keyed`, and a `warning` when false) report it.
   * `airlock serve` sets it. @default unknown: /healthz leaves `audit` out and verify infers it
   * from the chain (`keyedFrom`) */
  auditKeyed?: boolean;
  /** Learned trust (`createLearnedTrust`, whose `policy` the engine runs with): suggestions, rules,
   * accept and revoke under /v1/trust and in the inbox. @default none: no suggestions nor rules */
  trust?: LearnedTrust;
  /** Listen before being ready: until `ready()` is called, /healthz answers 503 `starting` and every
   * other route 503 `unavailable` (Retry-After: 1), so whoever waits for /healthz 200 never meets a
   * server that would refuse its token. `airlock serve` listens first (a port it cannot bind makes
   * no admin token) and calls `ready()` once the admin token is stored. @default false: ready at once */
  starting?: boolean;
}

type Resolved = Required<
  Omit<
    ServerOptions,
    | "registry"
    | "logger"
    | "limits"
    | "metricsToken"
    | "inbox"
    | "rateLimitStore"
    | "channels"
    | "embedSecret"
    | "embedOrigins"
    | "trust"
    | "auditKeyed"
    | "starting"
  >
> & {
  rateLimitStore: RateLimitStore | undefined;
  inbox: InboxOptions;
  channels: ServerChannels | undefined;
  logger: Logger;
  registry: MetricsRegistry | undefined;
  limits: ServerLimits;
  metricsToken: string | undefined;
};

const DEFAULTS = {
  bodyLimitBytes: 1024 * 1024,
  rateLimit: { max: 600, windowMs: 60_000 },
  authFailureLimit: { max: 30, windowMs: 60_000 },
  maxWaitMs: 60_000,
  heartbeatMs: 15_000,
  shutdownGraceMs: 10_000,
  maxStreamsPerToken: 8,
  credentialCheckMs: 2000,
  storageQuietMs: 30_000,
} satisfies Partial<ServerOptions>;

function resolve(options: ServerOptions): Resolved {
  const r: Resolved = {
    airlock: options.airlock,
    auth: options.auth,
    logger: options.logger ?? options.airlock.logger ?? pino({ level: "silent" }),
    bodyLimitBytes: options.bodyLimitBytes ?? DEFAULTS.bodyLimitBytes,
    rateLimit: options.rateLimit ?? DEFAULTS.rateLimit,
    authFailureLimit: options.authFailureLimit ?? DEFAULTS.authFailureLimit,
    maxWaitMs: options.maxWaitMs ?? DEFAULTS.maxWaitMs,
    heartbeatMs: options.heartbeatMs ?? DEFAULTS.heartbeatMs,
    shutdownGraceMs: options.shutdownGraceMs ?? DEFAULTS.shutdownGraceMs,
    limits: resolveLimits(options.limits),
    maxStreamsPerToken: options.maxStreamsPerToken ?? DEFAULTS.maxStreamsPerToken,
    credentialCheckMs: options.credentialCheckMs ?? DEFAULTS.credentialCheckMs,
    storageQuietMs: options.storageQuietMs ?? DEFAULTS.storageQuietMs,
    metricsToken: options.metricsToken,
    registry: options.registry,
    inbox: options.inbox ?? {},
    channels: options.channels,
    rateLimitStore: options.rateLimitStore ?? postgresPoolOf(options.auth?.tokens),
  };
  positive("bodyLimitBytes", r.bodyLimitBytes);
  positive("maxStreamsPerToken", r.maxStreamsPerToken);
  positive("credentialCheckMs", r.credentialCheckMs);
  positive("storageQuietMs", r.storageQuietMs);
  if (r.metricsToken !== undefined && r.metricsToken.length < 16) {
    throw invalidOption(
      "metricsToken",
      "a secret of 16 characters or more",
      `${r.metricsToken.length} characters`,
    );
  }
  // Checked now, so a bad limit fails at start-up with its name rather than on the first request.
  if (r.rateLimit) checkRateLimit(r.rateLimit);
  if (r.authFailureLimit) checkRateLimit(r.authFailureLimit);
  positive("maxWaitMs", r.maxWaitMs);
  positive("heartbeatMs", r.heartbeatMs);
  expectNonNegativeNumber("shutdownGraceMs", r.shutdownGraceMs);
  if (!options.auth?.tokens) {
    throw invalidOption("auth.tokens", "a TokenStore (e.g. sqliteTokenStore(path))", undefined);
  }
  return r;
}

/** The pool of a PostgreSQL token store, where the rate limits can count across servers. */
function postgresPoolOf(tokens: TokenStore | undefined): RateLimitStore | undefined {
  if (tokens?.kind !== "postgres") return undefined;
  const pg = tokens as Partial<PostgresTokenStore>;
  return pg.pool ? { pool: pg.pool, ...(pg.schema ? { schema: pg.schema } : {}) } : undefined;
}

const positive = expectPositiveNumber;

export interface AirlockServer {
  /** The Hono app, for `app.request()` in tests or mounting in another server. */
  app: Hono<ServerEnv>;
  /** The Prometheus registry behind /metrics; undefined when the optional peer prom-client is not
   * installed (then /metrics answers 501). */
  registry: MetricsRegistry | undefined;
  listen(options?: ListenOptions): Promise<Listening>;
  /** Graceful: stops accepting, answers long-polls with the current state, ends event streams,
   * waits for answers in flight. Does not close the engine or the token store (they are yours). */
  close(): Promise<void>;
  /** Ends the `starting` state (see `ServerOptions.starting`); a no-op when not starting. */
  ready(): void;
}

async function metricsResponse(metrics: ServerMetrics): Promise<Response> {
  const registry = metrics.registry;
  if (!registry) return problemResponse(problem(501, "not_implemented", METRICS_PEER_MISSING));
  const text = await registry.metrics();
  return new Response(text, {
    status: 200,
    headers: { "content-type": registry.contentType, "cache-control": "no-store" },
  });
}

/** Serves /metrics to a request bearing the metrics token; anything else goes on to authentication. */
function metricsTokenGate(secret: string, metrics: ServerMetrics): MiddlewareHandler<ServerEnv> {
  const expected = createHash("sha256").update(secret).digest();
  return async (c, next) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "");
    const given = match?.[1];
    if (given !== undefined && c.req.method === "GET") {
      const digest = createHash("sha256").update(given).digest();
      if (timingSafeEqual(digest, expected)) return metricsResponse(metrics);
    }
    await next();
  };
}

export function createServer(options: ServerOptions): AirlockServer {
  const o = resolve(options);
  const { airlock, logger } = o;
  const storage = createStorageHealth(logger, o.storageQuietMs);
  // One live tail of the audit log for the whole server: event streams and metrics share it.
  const events = createEventHub(airlock, logger);
  const metrics = createServerMetrics(airlock, logger, o.registry, (signal) =>
    events.tail({ signal }),
  );
  const credentials = createCredentialWatch(o.auth.tokens, logger, o.credentialCheckMs, () =>
    events.position(),
  );
  const app = new Hono<ServerEnv>();
  const lifecycle = createLifecycle({
    fetch: (request, env) => app.fetch(request, env),
    logger,
    graceMs: o.shutdownGraceMs,
    onClose: () => {
      metrics.stop();
      credentials.stop();
      events.stop();
    },
  });
  const deps: RouteDeps = {
    airlock,
    logger,
    shutdown: lifecycle.shutdown,
    maxWaitMs: o.maxWaitMs,
    heartbeatMs: o.heartbeatMs,
    credentials,
    events,
    storage,
    limits: o.limits,
    maxStreamsPerToken: o.maxStreamsPerToken,
  };

  app.onError(onError(logger, storage));
  app.notFound(() =>
    problemResponse(problem(404, "route_not_found", "no such route; see /openapi.json")),
  );

  // nosniff, frame and referrer rules, HSTS... on every answer, errors included; a header a route set
  // itself (the inbox's stricter Referrer-Policy) is kept.
  app.use("*", secureHeaders({ xFrameOptions: "DENY", overwrite: false }));
  // Until `ready()`, answered without looking at the token: a 401 then would be a lie (the token may
  // be the admin token about to be stored), and would count against the caller's address.
  let starting = options.starting === true;
  app.use("*", async (c, next) => {
    if (lifecycle.closing && c.req.path !== "/healthz") {
      c.header("connection", "close");
      throw new HttpProblem(503, "unavailable", "the server is shutting down", {
        headers: { connection: "close", "retry-after": "1" },
      });
    }
    if (starting && c.req.path !== "/healthz") {
      throw new HttpProblem(
        503,
        "unavailable",
        "the server is starting (its API tokens are not stored yet); retry in a moment, or wait until /healthz answers 200",
        { headers: { "retry-after": "1" } },
      );
    }
    await next();
  });
  app.use("*", metrics.observe);
  // Text no store can keep (NUL, lone surrogates, escapes that are not UTF-8) in a path or query
  // string is a 400 before any route, the inbox's included, passes it on (screen.ts).
  app.use("*", screenUrl());

  // Answers from memory, never from the store (a locked or full database must not stall it).
  // `degraded` is a 200: the server still answers reads and tells writers when to retry; taking
  // every instance out of a load balancer over a shared database fault would only make it worse.
  mount(app, "", healthRoute, async (c) => {
    const s = storage.state();
    const closing = lifecycle.closing;
    const status = closing ? "shutting_down" : starting ? "starting" : s.ok ? "ok" : "degraded";
    const storageState = s.ok ? { ok: true } : { ok: false, since: s.since, failures: s.failures };
    c.header("cache-control", "no-store");
    return c.json(
      {
        status,
        ok: status === "ok",
        shuttingDown: closing,
        storage: storageState,
        ...(options.auditKeyed === undefined ? {} : { audit: auditKeying(options.auditKeyed) }),
      },
      closing || starting ? 503 : 200,
    );
  });
  app.get("/robots.txt", (c) =>
    c.text("User-agent: *\nDisallow: /\n", 200, { "cache-control": "public, max-age=3600" }),
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
      trust: options.trust,
      ...o.inbox,
    }),
  );

  if (o.channels) {
    app.use("/channels/*", limitBody(o.bodyLimitBytes));
    app.route("/", channelRoutes(inboundDeps(airlock, o.channels, logger), o.channels.drivers));
  }

  // The approval card's script and its CORS answers (a preflight carries no token).
  const embed = createEmbedTokens(options.embedSecret);
  app.route("/", embedPublicRoutes(options.embedOrigins));

  // A scraper's own secret opens /metrics only; everyone else needs an admin token (below).
  if (o.metricsToken !== undefined) app.use("/metrics", metricsTokenGate(o.metricsToken, metrics));

  app.use(
    "*",
    authenticate({
      tokens: o.auth.tokens,
      embed,
      failures: o.authFailureLimit
        ? createRateLimiter(o.authFailureLimit, "auth_failures", o.rateLimitStore)
        : undefined,
    }),
  );
  if (o.rateLimit)
    app.use("*", limitRate(createRateLimiter(o.rateLimit, "rate", o.rateLimitStore)));
  app.use("*", limitBody(o.bodyLimitBytes));
  app.use("/v1/*", async (c, next) => {
    // Answers carry requests and their args: never kept by a browser or a shared cache.
    c.header("cache-control", "no-store");
    await next();
    // A write that went through ends a storage fault episode.
    if (c.req.method !== "GET" && c.res.status >= 200 && c.res.status < 300) storage.recovered();
  });

  app.route("/v1/requests", requestRoutes(deps));
  app.route("/v1/requests", executionRoutes(deps));
  app.route("/v1/requests", viewRoutes(deps));
  app.route("/v1/decisions", decisionRoutes(deps));
  app.route("/v1/events", eventRoutes(deps));
  app.route("/v1/audit", auditRoutes(deps, options.auditKeyed));
  app.route("/v1/tokens", tokenRoutes(deps, o.auth.tokens));
  app.route("/v1/outbox", outboxRoutes(deps));
  app.route("/v1/trust", trustRoutes(deps, options.trust));
  app.route("/v1/tickets", ticketRoutes(deps));
  app.route(
    "/",
    embedRoutes(
      deps,
      o.auth.tokens,
      embed,
      createRateLimiter({ max: 30, windowMs: 60_000 }, "embed_mints", o.rateLimitStore),
    ),
  );
  mount(app, "", openApiRoute, async (c) => c.json(openApiDocument()));
  // Global counts and per-route statistics: for operators (admins, or the metrics token) only.
  mount(app, "", metricsRoute, () => metricsResponse(metrics));

  return {
    app,
    registry: metrics.registry,
    listen: (listenOptions) => lifecycle.listen(listenOptions),
    close: () => lifecycle.close(),
    ready: () => {
      starting = false;
    },
  };
}
