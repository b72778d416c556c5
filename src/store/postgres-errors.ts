// How the PostgreSQL store names its database in messages (never with the password) and tells a lost
// or refused connection, which becomes `store_unavailable`, from an error in the statement itself.
import type { Pool } from "pg";
import { AirlockError } from "../core/errors.js";

/** The connection string with any password replaced by `***`. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    if (u.searchParams.has("password")) u.searchParams.set("password", "***");
    return u.toString();
  } catch {
    // Not a URL: the libpq "key=value" form, e.g. `host=db password='p w'`.
    return url.replace(/(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)/gi, "$1***");
  }
}

/** A URL-like description of what a pool connects to, for error messages. */
export function describePool(pool: Pool): string {
  const o = pool.options;
  if (typeof o.connectionString === "string") return maskUrl(o.connectionString);
  const user = o.user ?? process.env.PGUSER ?? "";
  const host = o.host ?? process.env.PGHOST ?? "localhost";
  const port = o.port ?? process.env.PGPORT ?? 5432;
  const database = o.database ?? process.env.PGDATABASE ?? "";
  return `postgres://${user ? `${user}@` : ""}${host}:${port}/${database}`;
}

// Socket-level failures: the server is down, unreachable or went away.
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
]);
// SQLSTATEs that mean "this connection is gone or refused", not "this statement is wrong":
// admin_shutdown (pg_terminate_backend), crash_shutdown, cannot_connect_now, too_many_connections,
// idle_in_transaction_session_timeout.
const SERVER_CODES = new Set(["57P01", "57P02", "57P03", "53300", "25P03"]);
// node-postgres reports a few of its own connection failures by message only.
const LOST_MESSAGE =
  /connection terminated|timeout exceeded when trying to connect|not queryable|connection timeout|client was closed/i;

/** True when `err` means the database could not be reached or the connection dropped. */
export function isConnectionError(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string") {
    if (NETWORK_CODES.has(code) || SERVER_CODES.has(code)) return true;
    if (/^08[0-9A-Z]{3}$/.test(code)) return true; // class 08: connection exception
  }
  // Errors from `net` may arrive wrapped in an AggregateError (one per resolved address).
  const inner = (err as { errors?: unknown }).errors;
  if (Array.isArray(inner) && inner.some(isConnectionError)) return true;
  const message = (err as { message?: unknown }).message;
  return typeof message === "string" && LOST_MESSAGE.test(message);
}

// SQLSTATEs of a database that is there but cannot take writes now: read_only_sql_transaction (a
// standby after a failover, or default_transaction_read_only), disk_full, insufficient_resources,
// out_of_memory, configuration_limit_exceeded. Worth retrying later; not a bug in the statement.
const STORAGE_CODES: Record<string, string> = {
  "25006": "the database is read-only",
  "53100": "the database's disk is full",
  "53000": "the database is out of resources",
  "53200": "the database is out of memory",
  "53400": "the database hit a configured limit",
};

/** Why the database cannot take this write now, when `err` says so (see STORAGE_CODES). */
export function storageFault(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? STORAGE_CODES[code] : undefined;
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) {
    if (err.message) return err.message;
    const inner = (err as { errors?: unknown }).errors;
    if (Array.isArray(inner) && inner[0] instanceof Error) return inner[0].message;
    return err.name;
  }
  return String(err);
}

/** The one error a caller sees when the database is out of reach. */
export function storeUnavailable(target: string, what: string, cause: unknown): AirlockError {
  return new AirlockError(
    "store_unavailable",
    `PostgreSQL at ${target} is unavailable (${what}): ${errorMessage(cause)}`,
    { cause },
  );
}
