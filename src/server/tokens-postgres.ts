// API tokens in PostgreSQL, so several `airlock serve --postgres` processes share one set of tokens: a
// table of its own (`airlock_tokens`) in the request store's schema, with its own migration counter
// (`airlock_token_migrations`) and its own migration lock, so it never collides with the request
// store's numbering. Connection handling is the request store's: the same pool settings, the same
// `store_unavailable` errors naming the database with its password masked, the same single retry on a
// fresh connection (every operation here is idempotent, so a retry never writes twice).
import type { Pool, PoolClient, QueryResultRow } from "pg";
import { AirlockError } from "../core/errors.js";
import { checkSchema, createPool, lockKey } from "../store/postgres.js";
import { createRunner } from "../store/postgres-client.js";
import { describePool, maskUrl, storeUnavailable } from "../store/postgres-errors.js";
import { quoteIdent } from "../store/postgres-sql.js";
import type { Role, TokenRecord, TokenStore } from "./tokens.js";

export interface PostgresTokenStoreOptions {
  /** The schema holding the token table (the request store's, to keep them together); created when
   * missing. @default "public" */
  schema?: string;
  /** Size of the pool created from a URL. @default 2 */
  max?: number;
  /** How long to wait for a new connection before failing with `store_unavailable`. @default 5000 */
  connectionTimeoutMs?: number;
  /** An idle pooled connection died (as `store_unavailable`; the pool recovers by itself). Only for a
   * pool the token store created: a pool you pass is yours to listen to. */
  onError?: (err: Error) => void;
}

/** A TokenStore backed by PostgreSQL, plus the pool it queries. */
export interface PostgresTokenStore extends TokenStore {
  readonly kind: "postgres";
  readonly pool: Pool;
  readonly schema: string;
}

interface TokenRow extends QueryResultRow {
  id: string;
  name: string;
  roles: string[];
  groups: string[];
  created_at: number;
  revoked_at: number | null;
}

interface TokenMigration {
  version: number;
  sql: (schema: string) => string;
}

const TOKEN_MIGRATIONS: readonly TokenMigration[] = [
  {
    version: 1,
    // Times are epoch milliseconds as double precision (exactly a JS number), as in the request store.
    sql: (s) => `
      CREATE TABLE ${s}.airlock_tokens (
        id text COLLATE "C" PRIMARY KEY,
        hash text NOT NULL UNIQUE,
        name text NOT NULL,
        roles text[] NOT NULL,
        groups text[] NOT NULL,
        created_at double precision NOT NULL,
        revoked_at double precision
      );
    `,
  },
];

/** Tokens in PostgreSQL, on a connection string or on a `pg.Pool` you own (`close()` then leaves it
 * open; the `PostgresStore`'s `pool` is fine). The table is created on first use, or by `migrate()`. */
export function postgresTokenStore(
  urlOrPool: string | Pool,
  options: PostgresTokenStoreOptions = {},
): PostgresTokenStore {
  const schema = options.schema ?? "public";
  checkSchema(schema);
  const ownPool = typeof urlOrPool === "string";
  const target = ownPool ? maskUrl(urlOrPool) : describePool(urlOrPool);
  const pool: Pool = ownPool
    ? createPool(urlOrPool, {
        max: options.max ?? 2,
        connectionTimeoutMs: options.connectionTimeoutMs ?? 5000,
        applicationName: "airlock",
      })
    : urlOrPool;
  // Without a listener node-postgres would crash the process when an idle connection dies.
  const onPoolError = (err: Error) =>
    options.onError?.(storeUnavailable(target, "idle connection lost", err));
  if (ownPool) pool.on("error", onPoolError);

  const s = quoteIdent(schema);
  const table = `${s}.airlock_tokens`;
  const migrations = `${s}.airlock_token_migrations`;
  const sql = {
    put: `INSERT INTO ${table} (id, hash, name, roles, groups, created_at, revoked_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7)
      ON CONFLICT (id) DO UPDATE SET hash = excluded.hash, name = excluded.name,
        roles = excluded.roles, groups = excluded.groups, revoked_at = excluded.revoked_at`,
    byHash: `SELECT * FROM ${table} WHERE hash = $1 AND revoked_at IS NULL`,
    list: `SELECT * FROM ${table} ORDER BY created_at, id`,
    // Sets revoked_at only the first time, and returns the row as it ends up (none: no such id).
    revoke: `UPDATE ${table} SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2 RETURNING *`,
  };

  let closed = false;
  let closing: Promise<void> | undefined;
  let migrated: Promise<void> | undefined;
  const runner = createRunner(pool, target, () => closed);
  function guard() {
    if (closed) throw new AirlockError("closed", "the PostgreSQL token store is closed");
  }
  function run<T>(what: string, fn: (c: PoolClient) => Promise<T>): Promise<T> {
    guard();
    return runner.run(`tokens ${what}`, fn);
  }

  async function migrateOnce(): Promise<void> {
    await run("migrate", async (c) => {
      await c.query("BEGIN");
      // Held until COMMIT: token-store migrations of this schema run one at a time, each once.
      await c.query("SELECT pg_advisory_xact_lock($1::bigint)", [
        lockKey(schema, "migrate-tokens"),
      ]);
      const exists = async () =>
        ((await c.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])).rowCount ?? 0) >
        0;
      if (!(await exists())) {
        // The request store creates the schema under its own lock: take that one too, so the two
        // never race to create it (that store never waits for ours, so this cannot deadlock).
        await c.query("SELECT pg_advisory_xact_lock($1::bigint)", [lockKey(schema)]);
        if (!(await exists())) await c.query(`CREATE SCHEMA ${s}`);
      }
      await c.query(
        `CREATE TABLE IF NOT EXISTS ${migrations} (version integer PRIMARY KEY, applied_at double precision NOT NULL)`,
      );
      const current = Number(
        (await c.query<{ v: number }>(`SELECT COALESCE(MAX(version), 0) AS v FROM ${migrations}`))
          .rows[0]?.v,
      );
      const known = TOKEN_MIGRATIONS[TOKEN_MIGRATIONS.length - 1]?.version ?? 0;
      if (current > known) {
        throw new AirlockError(
          "store_unavailable",
          `the token table in schema ${s} is at migration ${current}, newer than this Airlock knows (${known}): upgrade Airlock`,
        );
      }
      for (const m of TOKEN_MIGRATIONS) {
        if (m.version <= current) continue;
        await c.query(m.sql(s));
        await c.query(`INSERT INTO ${migrations} (version, applied_at) VALUES ($1, $2)`, [
          m.version,
          Date.now(),
        ]);
      }
      await c.query("COMMIT");
    });
  }

  /** Migrates before the first operation; a failed attempt is tried again by the next one. */
  function ready(): Promise<void> {
    guard();
    migrated ??= migrateOnce().catch((err: unknown) => {
      migrated = undefined;
      throw err;
    });
    return migrated;
  }

  async function query(what: string, text: string, values: unknown[] = []): Promise<TokenRow[]> {
    await ready();
    return run(what, async (c) => (await c.query<TokenRow>(text, values)).rows);
  }

  return {
    kind: "postgres",
    pool,
    schema,

    async migrate() {
      await ready();
    },

    async put(record, hash) {
      try {
        await query("put", sql.put, [
          record.id,
          hash,
          record.name,
          record.roles,
          record.groups,
          record.createdAt,
          record.revokedAt ?? null,
        ]);
      } catch (err) {
        if ((err as { code?: unknown }).code === "23505") {
          throw new AirlockError("conflict", "another token has the same secret", { cause: err });
        }
        throw err;
      }
    },

    async findByHash(hash) {
      const [row] = await query("findByHash", sql.byHash, [hash]);
      return row ? recordOf(row) : undefined;
    },

    async list() {
      return (await query("list", sql.list)).map(recordOf);
    },

    async revoke(id, at) {
      const [row] = await query("revoke", sql.revoke, [at, id]);
      return row ? recordOf(row) : undefined;
    },

    close() {
      closing ??= (async () => {
        closed = true;
        await migrated?.catch(() => {});
        if (ownPool) {
          await pool.end();
          pool.removeListener("error", onPoolError);
        }
      })();
      return closing;
    },
  };
}

function recordOf(row: TokenRow): TokenRecord {
  const record: TokenRecord = {
    id: row.id,
    name: row.name,
    roles: row.roles as Role[],
    groups: row.groups,
    createdAt: row.created_at,
  };
  if (row.revoked_at !== null) record.revokedAt = row.revoked_at;
  return record;
}
