// `airlock serve`: the HTTP server on the embedded SQLite file (or PostgreSQL, which then holds the API
// tokens too, so several servers share them), with an admin token made on first start (printed once)
// unless AIRLOCK_ADMIN_TOKEN supplies it, and a graceful stop on SIGTERM / SIGINT (long-polls
// answered, streams ended, store closed).
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import type { Command } from "commander";
import pino, { type Logger } from "pino";
import { type RetentionSchedule, startRetention } from "../audit/retention.js";
import { UNKEYED_AUDIT_WARNING } from "../audit/unkeyed.js";
import { loadChannelsConfig } from "../channels/config.js";
import { createChannels, type RunningChannels, startChannels } from "../channels/setup.js";
import type { Store } from "../core/store.js";
import { type Airlock, createAirlock } from "../engine/engine.js";
import { firstVerdict } from "../policy/compose.js";
import { createLearnedTrust, DEFAULT_TRUST_THRESHOLD } from "../policy/learned-trust.js";
import { inboundDeps } from "../server/channels.js";
import type { ServerLimits } from "../server/limits.js";
import { parseRateLimit, type RateLimitOptions } from "../server/rate-limit.js";
import { createServer, type ServerOptions } from "../server/server.js";
import {
  createToken,
  hashToken,
  newTokenSecret,
  type TokenRecord,
  type TokenStore,
} from "../server/tokens.js";
import { sqliteTokenStore } from "../server/tokens-sqlite.js";
import { APPROVER_INDEX_USES, type ApproverIndexUse } from "../store/approver-index.js";
import { sqliteStore } from "../store/sqlite.js";
import {
  type AuditSettings,
  auditFilesBesideDatabase,
  auditSettings,
  POSTGRES_NEEDS_KEY,
  unkeyedFromEnv,
} from "./audit-settings.js";
import {
  CliError,
  cliRedaction,
  type GlobalOptions,
  postgresSchemaOf,
  postgresUrlOf,
  resolveDbPath,
} from "./context.js";
import { type DemoAgents, loadDemo } from "./demo.js";
import { oneOf, positiveInt, positiveNumber } from "./parse.js";
import { needPeer } from "./peer.js";
import { trustThresholdFlag } from "./trust-threshold.js";

export interface ServeOptions {
  db?: string;
  postgres?: string;
  /** The PostgreSQL schema holding Airlock's tables. @default "public" */
  postgresSchema?: string;
  /** @default 7420 */
  port?: number;
  /** @default "127.0.0.1" */
  host?: string;
  demo?: boolean;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** Where the URL and the first admin token are printed. @default stdout */
  print?: (line: string) => void;
  /** Where signed checkpoints of the audit chain go (see `auditSettings`). */
  checkpointFile?: string;
  /** A file holding the audit key (`--audit-key-file`; see `auditSettings`). */
  auditKeyFile?: string;
  /** Run with an unkeyed audit chain (`--unkeyed-audit`, AIRLOCK_UNKEYED_AUDIT=1): on PostgreSQL
   * the start is refused without a key unless this is set. Said at every start (`warn`), in
   * /healthz and in /v1/audit/verify. */
  unkeyedAudit?: boolean;
  /** Where start-up warnings go, one line each. @default stderr */
  warn?: (line: string) => void;
  /** HTTP settings passed to `createServer`: rate limit, size limits and quotas, streams, cookies. */
  http?: HttpSettings;
  /** A channels config file (`--config`, AIRLOCK_CONFIG): Slack, email, webhooks, routes, reminders. */
  config?: string;
  /** Approvals by people in a row before the inbox suggests a learned trust rule; 0 turns
   * suggestions off. @default 20 */
  trustThreshold?: number;
  /** Prune terminal requests older than this many days, daily (`--retention-days`). @default keep all */
  retentionDays?: number;
  /** When a reviewer's listing reads the approver index (`--approver-index`). @default "auto" */
  approverIndex?: ApproverIndexUse;
}

/** The `createServer` options `airlock serve` sets from its flags. */
export type HttpSettings = Pick<
  ServerOptions,
  | "rateLimit"
  | "limits"
  | "maxStreamsPerToken"
  | "metricsToken"
  | "inbox"
  | "embedSecret"
  | "embedOrigins"
>;

interface ServeFlags {
  postgres?: string;
  port: number;
  host: string;
  demo?: boolean;
  rateLimit?: RateLimitOptions | false;
  maxPending?: number;
  maxPendingBytes?: number;
  maxArgsBytes?: number;
  maxPreviewBytes?: number;
  maxSummaryBytes?: number;
  maxStreams?: number;
  checkpointFile?: string;
  auditKeyFile?: string;
  unkeyedAudit?: boolean;
  secureCookies?: boolean;
  trustProxy?: boolean;
  config?: string;
  embedOrigin?: string[];
  trustThreshold?: number;
  retentionDays?: number;
  approverIndex?: ApproverIndexUse;
}

/** The HTTP settings the flags (and AIRLOCK_METRICS_TOKEN) ask for; unset ones keep the defaults. */
export function httpSettings(f: ServeFlags, env: NodeJS.ProcessEnv): HttpSettings {
  const limits: Partial<ServerLimits> = {};
  if (f.maxPending !== undefined) limits.pendingPerRequester = f.maxPending;
  if (f.maxPendingBytes !== undefined) limits.pendingBytesPerRequester = f.maxPendingBytes;
  if (f.maxArgsBytes !== undefined) limits.argsBytes = f.maxArgsBytes;
  if (f.maxPreviewBytes !== undefined) limits.previewBytes = f.maxPreviewBytes;
  if (f.maxSummaryBytes !== undefined) limits.summaryBytes = f.maxSummaryBytes;
  const inbox: HttpSettings["inbox"] = {};
  if (f.secureCookies) inbox.secureCookies = true;
  if (f.trustProxy) inbox.trustProxy = true;
  return {
    ...(f.rateLimit === undefined ? {} : { rateLimit: f.rateLimit }),
    ...(Object.keys(limits).length ? { limits } : {}),
    ...(f.maxStreams === undefined ? {} : { maxStreamsPerToken: f.maxStreams }),
    ...(env.AIRLOCK_METRICS_TOKEN ? { metricsToken: env.AIRLOCK_METRICS_TOKEN } : {}),
    ...(Object.keys(inbox).length ? { inbox } : {}),
    ...(env.AIRLOCK_EMBED_SECRET ? { embedSecret: env.AIRLOCK_EMBED_SECRET } : {}),
    ...(f.embedOrigin?.length ? { embedOrigins: f.embedOrigin } : {}),
  };
}

export interface Serving {
  url: string;
  /** Set when this start created the admin token. */
  adminToken: string | undefined;
  close(): Promise<void>;
}

/** The id of the admin token taken from AIRLOCK_ADMIN_TOKEN. */
export const ENV_ADMIN_ID = "tok_env_admin";
const MIN_ENV_TOKEN_LENGTH = 16;

export function registerServe(program: Command, globals: () => GlobalOptions): void {
  program
    .command("serve")
    .description("run the web inbox and the HTTP API; stop with Ctrl-C or SIGTERM")
    .option("--postgres <url>", "use PostgreSQL instead of the SQLite file (AIRLOCK_DATABASE_URL)")
    .option("--port <port>", "port to listen on", portNumber, 7420)
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option(
      "--demo",
      "run the five example agents against this server (their gates wait in the inbox)",
    )
    .option(
      "--rate-limit <n/window>",
      "API requests per token, e.g. 600/60s (the default) or off",
      rateLimitFlag,
    )
    .option(
      "--max-pending <n>",
      "pending requests per requester (1000)",
      positiveInt("--max-pending"),
    )
    .option(
      "--max-pending-bytes <n>",
      "bytes of pending requests per requester (64 MiB)",
      positiveInt("--max-pending-bytes"),
    )
    .option(
      "--max-args-bytes <n>",
      "largest args, in bytes (256 KiB)",
      positiveInt("--max-args-bytes"),
    )
    .option(
      "--max-preview-bytes <n>",
      "largest preview, in bytes (256 KiB)",
      positiveInt("--max-preview-bytes"),
    )
    .option(
      "--max-summary-bytes <n>",
      "largest summary, in bytes (64 KiB)",
      positiveInt("--max-summary-bytes"),
    )
    .option("--max-streams <n>", "open event streams per token (8)", positiveInt("--max-streams"))
    .option(
      "--checkpoint-file <path>",
      "append signed checkpoints of the audit chain to this file (AIRLOCK_CHECKPOINT_FILE)",
    )
    .option(
      "--audit-key-file <path>",
      "read the audit key (16+ bytes; keys the audit chain with HMACs) from this file (AIRLOCK_AUDIT_KEY_FILE, or the key itself in AIRLOCK_AUDIT_KEY)",
    )
    .option(
      "--unkeyed-audit",
      "run without an audit key (AIRLOCK_UNKEYED_AUDIT=1): a plain SHA-256 chain that whoever can write to the database can rewrite; PostgreSQL refuses to start without a key otherwise",
    )
    .option("--secure-cookies", "mark the inbox's cookies Secure (serving behind a TLS proxy)")
    .option("--trust-proxy", "believe X-Forwarded-Proto from the proxy in front of the server")
    .option(
      "--embed-origin <origin>",
      "an origin whose pages may show the approval card (repeatable; embed tokens are signed with AIRLOCK_EMBED_SECRET)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      "--trust-threshold <n>",
      "approvals by people in a row before the inbox suggests a rule that approves such calls (20; 0: off)",
      trustThresholdFlag,
    )
    .option(
      "--retention-days <n>",
      "prune terminal requests (and a prefix of the audit log, anchored) older than N days, daily",
      positiveNumber("--retention-days"),
    )
    .option(
      "--approver-index <use>",
      "read a reviewer's listing from the approver index: auto (by its share and count), always, never (auto)",
      oneOf("--approver-index", APPROVER_INDEX_USES),
    )
    .option(
      "--config <file>",
      "channels config: Slack, email, webhooks, routes, reminders (AIRLOCK_CONFIG)",
    )
    .action(async (opts: ServeFlags) => {
      // Ctrl-C and SIGTERM are handled from the very start: a signal that arrives while the server is
      // starting (or right after it printed its address) stops it gracefully instead of killing it.
      const signals = catchSignals();
      const env = process.env;
      const postgres = postgresUrlOf(opts.postgres, env);
      const db = globals().db;
      const config = opts.config ?? env.AIRLOCK_CONFIG;
      let serving: Serving;
      try {
        serving = await startServe({
          ...(db === undefined ? {} : { db }),
          ...(postgres === undefined ? {} : { postgres }),
          port: opts.port,
          host: opts.host,
          demo: opts.demo === true,
          env,
          ...(opts.checkpointFile === undefined ? {} : { checkpointFile: opts.checkpointFile }),
          ...(opts.auditKeyFile === undefined ? {} : { auditKeyFile: opts.auditKeyFile }),
          unkeyedAudit: opts.unkeyedAudit === true || unkeyedFromEnv(env),
          http: httpSettings(opts, env),
          ...(config ? { config } : {}),
          ...(opts.trustThreshold === undefined ? {} : { trustThreshold: opts.trustThreshold }),
          ...(opts.retentionDays === undefined ? {} : { retentionDays: opts.retentionDays }),
          ...(opts.approverIndex === undefined ? {} : { approverIndex: opts.approverIndex }),
        });
      } catch (err) {
        signals.release();
        throw err;
      }
      await signals.stop(serving);
    });
}

/** Opens the store, ensures an admin token, seeds the demo and listens. */
export async function startServe(options: ServeOptions): Promise<Serving> {
  const env = options.env ?? process.env;
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  // The demo's lines are for people: its JSON log (stderr) keeps to warnings and errors unless
  // AIRLOCK_LOG_LEVEL asks for more, so the two do not interleave in one terminal.
  const logger =
    options.logger ??
    pino({ level: env.AIRLOCK_LOG_LEVEL ?? (options.demo ? "warn" : "info") }, pino.destination(2));
  const dbPath = resolveDbPath(options.db === undefined ? {} : { db: options.db }, env);

  const warn = options.warn ?? ((line: string) => process.stderr.write(`${line}\n`));
  const unkeyed = options.unkeyedAudit === true;
  const audit = auditSettings({
    ...(options.postgres ? {} : { sqlitePath: dbPath }),
    ...(options.checkpointFile === undefined ? {} : { checkpointFile: options.checkpointFile }),
    ...(options.auditKeyFile === undefined ? {} : { keyFile: options.auditKeyFile }),
    unkeyed,
    env,
  });
  const auditKeyed = audit.auditKey !== undefined;
  // A new SQLite file gets a key beside it without being asked; PostgreSQL has no such place, and an
  // unkeyed chain there went unnoticed: it is refused unless asked for, and said at every start.
  if (!auditKeyed && options.postgres && !unkeyed) throw new CliError(POSTGRES_NEEDS_KEY);
  if (!auditKeyed) warn(`airlock: warning: ${UNKEYED_AUDIT_WARNING}`);
  const beside = auditFilesBesideDatabase(
    options.postgres ? undefined : dbPath,
    audit,
    env,
    options.auditKeyFile,
  );
  for (const line of beside) warn(`airlock: warning: ${line}`);
  // The store's background work: an audit checkpoint not written, a WAL checkpoint thread that
  // stopped. The error's own message says which.
  const onError = (err: Error) => logger.error({ err }, "store background error");
  const approverIndex = options.approverIndex ?? "auto";
  const { store, tokens } = options.postgres
    ? await openPostgres(options.postgres, postgresSchemaOf(options.postgresSchema, env), {
        ...audit,
        onError,
        approverIndex,
      })
    : {
        store: sqliteStore(dbPath, { ...audit, onError, approverIndex }),
        tokens: sqliteTokenStore(dbPath),
      };
  let airlock: Airlock | undefined;
  let demo: DemoAgents | undefined;
  let server: ReturnType<typeof createServer> | undefined;
  let running: RunningChannels | undefined;
  let retention: RetentionSchedule | undefined;
  try {
    // Read before anything starts: a bad config fails the start with its one-line reason.
    const channels = options.config
      ? await createChannels(loadChannelsConfig(options.config, env), { logger })
      : undefined;
    let publicUrl = channels?.config.publicUrl ?? "";
    // The demo's small file writes pass by rule and its actions have schemas; those live on the
    // server, as agents may not skip approval themselves.
    const demoModule = options.demo ? await loadDemo() : undefined;
    // Learned trust: rules accepted in the inbox approve matching calls, after the demo's own rules.
    const redaction = cliRedaction(env);
    const trust = createLearnedTrust({
      store,
      threshold: options.trustThreshold ?? DEFAULT_TRUST_THRESHOLD,
      redaction,
    });
    const demoEngine = demoModule?.engineOptions();
    airlock = await createAirlock({
      store,
      logger,
      redaction,
      ...demoEngine,
      policy: demoEngine?.policy ? firstVerdict(demoEngine.policy, trust.policy) : trust.policy,
      ...(channels
        ? { notifiers: channels.router, onOutbox: () => running?.dispatcher.wake() }
        : {}),
    });
    const serverChannels = channels && {
      drivers: channels.drivers,
      identities: channels.identities,
      publicUrl: () => publicUrl,
    };
    const http = createServer({
      airlock,
      auth: { tokens },
      // /healthz says 503 `starting` (and the API 503) until the admin token is stored, below.
      starting: true,
      auditKeyed,
      logger,
      trust,
      ...options.http,
      ...(serverChannels ? { channels: serverChannels } : {}),
    });
    server = http;
    const port = options.port ?? 7420;
    const host = options.host ?? "127.0.0.1";
    // Listen before the admin token is made: a start that cannot bind makes no token it cannot print.
    const { url } = await http.listen({ port, host }).catch((err: unknown) => {
      server = undefined;
      throw listenError(err, host, port);
    });
    if (channels && serverChannels) {
      publicUrl ||= url;
      running = await startChannels(channels, {
        store,
        inbound: inboundDeps(airlock, serverChannels, logger),
        logger,
        publicUrl: () => publicUrl,
      });
      print(
        `Channels: ${channels.drivers.map((d) => `${d.name} (${d.type})`).join(", ") || "none"}; delivery log at ${url}/v1/outbox`,
      );
    }
    retention =
      options.retentionDays === undefined
        ? undefined
        : startRetention({
            store,
            retentionDays: options.retentionDays,
            onRun: ({ result, error, before }) => {
              if (error) logger.error({ err: error, before }, "prune failed");
              else logger.info({ ...result, before }, "pruned");
            },
          });
    const adminToken = await ensureAdminToken(tokens, env);
    // Ready means ready: the token table is migrated and the admin token stored (on PostgreSQL that
    // took ~200 ms after listening, during which /healthz said 200 and the admin token got 401).
    http.ready();
    print(
      `Airlock is serving at ${url}/ (the inbox; the API is under ${url}/v1, described at ${url}/openapi.json)`,
    );
    if (adminToken) {
      print(`Admin token (shown once; keep it somewhere safe): ${adminToken}`);
    }
    // The demo prints how to sign in as its reviewer, then the agents' progress.
    demo = demoModule
      ? await demoModule.startDemoAgents({
          url,
          tokens,
          print,
          env,
          ...demoReviewerSecret(options.postgres ? undefined : dbPath),
        })
      : undefined;
    const engine = airlock;
    const agents = demo;
    const delivering = running;
    const pruning = retention;
    let closing: Promise<void> | undefined;
    return {
      url,
      adminToken,
      close() {
        closing ??= (async () => {
          await agents?.stop();
          await http.close();
          await pruning?.stop();
          await delivering?.close();
          await engine.close();
          await tokens.close();
          logger.info("Airlock server stopped");
        })();
        return closing;
      },
    };
  } catch (err) {
    await demo?.stop().catch(() => {});
    await server?.close().catch(() => {});
    await running?.close().catch(() => {});
    await retention?.stop().catch(() => {});
    await airlock?.close().catch(() => {});
    if (!airlock) await store.close().catch(() => {});
    await tokens.close().catch(() => {});
    throw err;
  }
}

/** With AIRLOCK_ADMIN_TOKEN set, that value is the admin token (its hash replaces the last one).
 * Without it, the previous env token is revoked, and when no admin token is left a new one is made
 * and returned, to be printed once. */
export async function ensureAdminToken(
  tokens: TokenStore,
  env: NodeJS.ProcessEnv,
  now = Date.now(),
): Promise<string | undefined> {
  const fromEnv = env.AIRLOCK_ADMIN_TOKEN;
  if (fromEnv !== undefined && fromEnv !== "") {
    if (fromEnv.length < MIN_ENV_TOKEN_LENGTH) {
      throw new CliError(
        `AIRLOCK_ADMIN_TOKEN must hold at least ${MIN_ENV_TOKEN_LENGTH} characters, got ${fromEnv.length}`,
      );
    }
    const record: TokenRecord = {
      id: ENV_ADMIN_ID,
      name: env.AIRLOCK_ADMIN_NAME ?? "admin",
      roles: ["admin"],
      groups: [],
      createdAt: now,
    };
    await tokens.put(record, hashToken(fromEnv));
    return undefined;
  }
  const all = await tokens.list();
  if (all.some((t) => t.id === ENV_ADMIN_ID && t.revokedAt === undefined)) {
    await tokens.revoke(ENV_ADMIN_ID, now);
  }
  const active = (await tokens.list()).filter(
    (t) => t.revokedAt === undefined && t.roles.includes("admin"),
  );
  if (active.length > 0) return undefined;
  const { token } = await createToken(tokens, { name: "admin", roles: ["admin"] }, now);
  return token;
}

/** The request store and, on its pool and in its schema, the token store. */
async function openPostgres(
  url: string,
  schema: string | undefined,
  settings: AuditSettings & { onError: (err: Error) => void; approverIndex: ApproverIndexUse },
): Promise<{ store: Store; tokens: TokenStore }> {
  // Imported only when asked for, so the commands on SQLite never load the PostgreSQL driver.
  const [{ postgresStore }, { postgresTokenStore }] = await needPeer("serve --postgres", () =>
    Promise.all([import("../store/postgres.js"), import("../server/tokens-postgres.js")]),
  );
  const store = postgresStore(url, { ...settings, ...(schema === undefined ? {} : { schema }) });
  // The token store borrows the request store's pool, which closing the request store ends.
  return { store, tokens: postgresTokenStore(store.pool, { schema: store.schema }) };
}

/** SIGTERM and SIGINT, caught from the moment this is called. `stop(serving)` resolves once the
 * server has stopped after the first signal (at once if one came during the start); a second signal
 * exits at once. */
function catchSignals(): { stop(serving: Serving): Promise<void>; release(): void } {
  let received: NodeJS.Signals | undefined;
  let onFirst: ((signal: NodeJS.Signals) => void) | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (received) {
      process.stderr.write(`airlock: ${signal} again, exiting now\n`);
      process.exit(1);
    }
    received = signal;
    process.stderr.write(`airlock: ${signal}, stopping gracefully\n`);
    onFirst?.(signal);
  };
  const release = () => {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return {
    release,
    stop(serving) {
      return new Promise<void>((resolve, reject) => {
        const close = () => {
          serving.close().then(() => {
            release();
            resolve();
          }, reject);
        };
        if (received) close();
        else onFirst = close;
      });
    },
  };
}

/** A failed bind as one clear line. */
function listenError(err: unknown, host: string, port: number): Error {
  const code = (err as { code?: string } | null)?.code;
  if (code === "EADDRINUSE") {
    return new CliError(
      `${host}:${port} is already in use (another airlock serve?); stop it or choose another port with --port`,
    );
  }
  if (code === "EACCES") {
    return new CliError(`not allowed to listen on ${host}:${port}; choose a port above 1023`);
  }
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") {
    return new CliError(`cannot listen on ${host}: no such address on this machine`);
  }
  return err instanceof Error ? err : new Error(String(err));
}

function rateLimitFlag(value: string): RateLimitOptions | false {
  try {
    return parseRateLimit(value);
  } catch (err) {
    throw new CliError(`--rate-limit: ${(err as Error).message}`);
  }
}

function portNumber(value: string): number {
  if (value === "0") return 0;
  const n = positiveInt("--port")(value);
  if (n > 65_535) throw new CliError(`--port expects a port from 0 to 65535, got \`${value}\``);
  return n;
}

/** The demo reviewer's token secret for a SQLite file: kept in `<db>.demo-reviewer-token` (mode
 * 0600, like the audit key beside a new database), made on the first demo start, so a restart on the
 * same database prints the same token and a browser stays signed in. The token store holds only its
 * hash, as for every token. None for PostgreSQL or an in-memory database (a new token every start). */
function demoReviewerSecret(dbPath: string | undefined): { reviewerSecret?: string } {
  if (dbPath === undefined || dbPath === ":memory:" || dbPath === "") return {};
  const file = `${dbPath}.demo-reviewer-token`;
  try {
    const kept = readFileSync(file, "utf8").trim();
    if (/^alk_[A-Za-z0-9_-]{43}$/.test(kept)) return { reviewerSecret: kept };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const secret = newTokenSecret();
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { reviewerSecret: secret };
}
