// The store a command that only looks at the database (audit verify, audit list, metrics) was
// pointed at, opened only when it exists: `--postgres` / AIRLOCK_DATABASE_URL (schema
// AIRLOCK_POSTGRES_SCHEMA), else the SQLite file (`--db`, AIRLOCK_DB, ./airlock.db), resolved as
// `airlock serve` resolves them. Opening the store as serve does would create a missing SQLite file
// (with a new key beside it) or PostgreSQL schema and migrate it, and a verification would then pass
// a log it had just made empty: here a missing or older store is one line and a non-zero exit.
import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import type { Store } from "../core/store.js";
import { POSTGRES_MIGRATIONS } from "../store/postgres-migrations.js";
import { SQLITE_MIGRATIONS } from "../store/sqlite-migrations.js";
import type { AuditSettings } from "./audit-settings.js";
import {
  CliError,
  type GlobalOptions,
  postgresSchemaOf,
  postgresUrlOf,
  remoteTarget,
  resolveDbPath,
} from "./context.js";

export type StoreTarget =
  | { kind: "sqlite"; path: string }
  | { kind: "postgres"; url: string; schema: string };

/** Where the command works: PostgreSQL when `--postgres` or AIRLOCK_DATABASE_URL says so, else the
 * SQLite file. */
export function storeTarget(
  globals: GlobalOptions,
  postgresFlag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): StoreTarget {
  const url = postgresUrlOf(postgresFlag, env);
  if (url === undefined) return { kind: "sqlite", path: resolveDbPath(globals, env) };
  return { kind: "postgres", url, schema: postgresSchemaOf(undefined, env) ?? "public" };
}

/** How the store is named in messages (a PostgreSQL password masked). */
export async function describeTarget(target: StoreTarget): Promise<string> {
  if (target.kind === "sqlite") return `the SQLite database at ${target.path}`;
  const { maskUrl } = await import("../store/postgres-errors.js");
  return `PostgreSQL schema ${target.schema} at ${maskUrl(target.url)}`;
}

/** Fails with one line unless the store exists and is at this Airlock's schema version, without
 * creating or changing anything. Call it before `auditSettings`, which makes a key file beside a
 * SQLite file that does not exist. */
export async function requireExistingStore(target: StoreTarget, command: string): Promise<void> {
  const where = await describeTarget(target);
  const version =
    target.kind === "sqlite"
      ? sqliteVersion(target.path, where, command)
      : await postgresVersion(target, where, command);
  const known =
    (target.kind === "sqlite" ? SQLITE_MIGRATIONS : POSTGRES_MIGRATIONS).at(-1)?.version ?? 0;
  if (version < known) {
    throw new CliError(
      `${where} is at schema version ${version}, older than this Airlock's (${known}): \`airlock ${command}\` does not upgrade it; start \`airlock serve\` on it once (that upgrades it), then run this again`,
    );
  }
}

/** Opens the store `requireExistingStore` found, with the audit key and checkpoint file of
 * `settings`, and checks its chain head and key as every start does (`migrate`, a no-op on a store at
 * this version). */
export async function openExistingStore(
  target: StoreTarget,
  settings: AuditSettings,
): Promise<Store> {
  let store: Store;
  if (target.kind === "sqlite") {
    const { sqliteStore } = await import("../store/sqlite.js");
    store = sqliteStore(target.path, settings);
  } else {
    // Imported only when asked for, so the commands on SQLite never load the PostgreSQL driver.
    const { postgresStore } = await import("../store/postgres.js");
    store = postgresStore(target.url, { ...settings, schema: target.schema, max: 2 });
  }
  try {
    await store.migrate();
    return store;
  } catch (err) {
    await store.close().catch(() => {});
    throw err;
  }
}

/** How each command that checks for its store is pointed at PostgreSQL (the others work on the
 * SQLite file only). */
const POSTGRES_HINT: Record<string, string> = {
  "audit verify":
    "; PostgreSQL: --postgres URL or AIRLOCK_DATABASE_URL, schema AIRLOCK_POSTGRES_SCHEMA",
  "audit list": "; PostgreSQL: AIRLOCK_DATABASE_URL, schema AIRLOCK_POSTGRES_SCHEMA",
  metrics: "; PostgreSQL: AIRLOCK_DATABASE_URL, schema AIRLOCK_POSTGRES_SCHEMA",
};

function noStore(what: string, command: string): CliError {
  return new CliError(
    `${what}: \`airlock ${command}\` never creates one; point it at your database (--db FILE or AIRLOCK_DB${POSTGRES_HINT[command] ?? ""})`,
  );
}

/** The schema version of an Airlock SQLite file, read without writing (a read-only connection). */
function sqliteVersion(path: string, where: string, command: string): number {
  if (path === ":memory:" || path === "" || !existsSync(path)) {
    throw noStore(`no SQLite database at ${path}`, command);
  }
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new CliError(`cannot open ${where}: ${(err as Error).message}`);
  }
  try {
    const row = db
      .prepare<[], { v: number | null }>("SELECT MAX(version) AS v FROM airlock_migrations")
      .get();
    return row?.v ?? 0;
  } catch (err) {
    const message = (err as Error).message;
    if (/no such table/.test(message)) throw noStore(`${path} holds no Airlock database`, command);
    throw new CliError(`cannot read ${where}: ${message}`);
  } finally {
    db.close();
  }
}

/** The schema version of Airlock's tables in a PostgreSQL schema, read on a short-lived connection. */
async function postgresVersion(
  target: { url: string; schema: string },
  where: string,
  command: string,
): Promise<number> {
  const { default: pg } = await import("pg");
  const { quoteIdent } = await import("../store/postgres-sql.js");
  const client = new pg.Client({ connectionString: target.url, connectionTimeoutMillis: 5000 });
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (err) {
    throw new CliError(`cannot reach ${where}: ${(err as Error).message || (err as Error).name}`);
  }
  try {
    const table = `${quoteIdent(target.schema)}.airlock_migrations`;
    const found = await client.query<{ t: string | null }>("SELECT to_regclass($1)::text AS t", [
      table,
    ]);
    if (!found.rows[0]?.t) throw noStore(`no Airlock database in ${where}`, command);
    const v = await client.query<{ v: number }>(
      `SELECT COALESCE(MAX(version), 0) AS v FROM ${table}`,
    );
    return Number(v.rows[0]?.v ?? 0);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read ${where}: ${(err as Error).message}`);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Without AIRLOCK_URL a command that only reads or decides what is already there works on the local
 * SQLite file, which it must not create. */
export async function requireLocalStore(globals: GlobalOptions, command: string): Promise<void> {
  if (remoteTarget()) return;
  await requireExistingStore({ kind: "sqlite", path: resolveDbPath(globals) }, command);
}
