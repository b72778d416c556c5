// Per-client rate limiting with rate-limiter-flexible: up to `max` requests per key (a token id, or a
// client address for failed logins) in each window of `windowMs`. On SQLite (one server) the counts
// live in this process; give a PostgreSQL pool (`store`) and they live in the database, so several
// servers behind a load balancer share one limit instead of each allowing `max`.
import type { Pool } from "pg";
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
} from "rate-limiter-flexible";
import { expectPositiveInt, invalidOption } from "../core/validate.js";
import { quoteIdent } from "../store/postgres-sql.js";

export interface RateLimitOptions {
  /** Requests a client may make per window. */
  max: number;
  windowMs: number;
}

/** Where counts are kept when several servers share a PostgreSQL database. */
export interface RateLimitStore {
  pool: Pool;
  /** The schema of the table `airlock_rate_limits` (created when missing). @default "public" */
  schema?: string;
}

export interface RateDecision {
  ok: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until one more request is allowed (0 when `ok`). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  take(key: string): Promise<RateDecision>;
  /** Looks without taking. */
  peek(key: string): Promise<RateDecision>;
}

const TABLE = "airlock_rate_limits";

/** PostgreSQL's answers when another session created the same table (or its row type) between our
 * `IF NOT EXISTS` check and our insert into the catalog: the table is there, which is all we need. */
const CREATED_CONCURRENTLY = new Set(["23505", "42P07", "42710"]);
const tables = new WeakMap<Pool, Map<string, Promise<void>>>();

/** Creates the shared table once per pool and schema. rate-limiter-flexible creates it itself in
 * each limiter, but a server has several limiters and a deployment several servers: their
 * concurrent `CREATE TABLE IF NOT EXISTS` can fail with "already exists", which it does not
 * catch, and the limiter would then count in this process alone. */
function ensureTable(store: RateLimitStore): Promise<void> {
  const schema = store.schema ?? "public";
  const bySchema = tables.get(store.pool) ?? new Map<string, Promise<void>>();
  tables.set(store.pool, bySchema);
  let created = bySchema.get(schema);
  if (!created) {
    const name = `${quoteIdent(schema)}.${quoteIdent(TABLE)}`;
    // The columns rate-limiter-flexible's own statement gives the table.
    const sql = `CREATE TABLE IF NOT EXISTS ${name} (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)`;
    created = store.pool.query(sql).then(
      () => undefined,
      (err: { code?: string }) => {
        if (!CREATED_CONCURRENTLY.has(err.code ?? "")) throw err;
      },
    );
    // A failure is not remembered: the next server on this pool tries again.
    created.catch(() => bySchema.delete(schema));
    bySchema.set(schema, created);
  }
  return created;
}

/** Throws an InvalidInputError naming the bad field, so a bad limit fails at start-up. */
export function checkRateLimit(options: RateLimitOptions): void {
  expectPositiveInt("rateLimit.max", options.max);
  if (!(typeof options.windowMs === "number" && options.windowMs >= 1)) {
    throw invalidOption("rateLimit.windowMs", "a number of ms from 1 up", options.windowMs);
  }
}

/** A limiter named `name` (keys of different limiters never mix in a shared table). With `store`,
 * the counts are kept in PostgreSQL, with an in-process limiter standing in while it fails. */
export function createRateLimiter(
  options: RateLimitOptions,
  name = "rate",
  store?: RateLimitStore,
): RateLimiter {
  checkRateLimit(options);
  const { max, windowMs } = options;
  const shape = { points: max, duration: windowMs / 1000, keyPrefix: `airlock_${name}` };
  const memory = new RateLimiterMemory(shape);
  let limiter: RateLimiterAbstract = memory;
  let ready: Promise<void> = Promise.resolve();
  if (store) {
    ready = ensureTable(store).then(() => {
      limiter = new RateLimiterPostgres({
        ...shape,
        storeClient: store.pool,
        tableName: TABLE,
        // Always named: the table is created there (ensureTable), whatever the search_path says.
        schemaName: store.schema ?? "public",
        tableCreated: true,
        // A database that cannot answer must not stop the server: this process limits alone.
        insuranceLimiter: memory,
      });
    });
    // Until the table exists the in-process limiter answers; a failure to create it is not fatal.
    ready = ready.catch(() => {
      limiter = memory;
    });
  }

  function decision(res: RateLimiterRes, ok: boolean): RateDecision {
    return {
      ok,
      limit: max,
      remaining: Math.max(0, res.remainingPoints),
      retryAfterSeconds: ok ? 0 : Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
    };
  }

  return {
    async take(key) {
      await ready;
      try {
        return decision(await limiter.consume(key), true);
      } catch (err) {
        if (err instanceof RateLimiterRes) return decision(err, false);
        throw err;
      }
    },
    async peek(key) {
      await ready;
      const res = await limiter.get(key);
      if (!res) return { ok: true, limit: max, remaining: max, retryAfterSeconds: 0 };
      return decision(res, res.consumedPoints < max);
    },
  };
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000 };

/** Reads a rate limit as written on a command line: `600/60s`, `600/min`, `10/s`, `1000/5m`,
 * `100/500ms`, or `off` (no limit). For `airlock serve --rate-limit`. */
export function parseRateLimit(text: string): RateLimitOptions | false {
  const t = text.trim().toLowerCase();
  if (t === "off" || t === "false" || t === "none") return false;
  const m = /^(\d+)\s*\/\s*(\d*)\s*(ms|s|min|m|h)$/.exec(t);
  if (!m) {
    throw invalidOption("rateLimit", "a rate limit like `600/60s`, `600/min` or `off`", text);
  }
  const max = Number(m[1]);
  const windowMs = Number(m[2] || "1") * (UNIT_MS[m[3] as string] as number);
  // Validated like the server option.
  checkRateLimit({ max, windowMs });
  return { max, windowMs };
}
