// Resolves where the command line works: a server when AIRLOCK_URL is set (with AIRLOCK_TOKEN), else
// the embedded SQLite file (`--db`, `AIRLOCK_DB`, default ./airlock.db), shared by every `airlock`
// process on this machine.
import pino, { type Logger } from "pino";
import { type RedactionOptions, redactionKeysFrom } from "../audit/redact.js";
import { createClient } from "../client/index.js";
import type { Store } from "../core/store.js";
import type { AirlockApi } from "../engine/api.js";
import { type Airlock, createAirlock } from "../engine/engine.js";
import { sqliteStore } from "../store/sqlite.js";
import { auditSettings } from "./audit-settings.js";
import { CliError } from "./errors.js";

export interface GlobalOptions {
  db?: string;
}

export { CliError };

export function resolveDbPath(opts: GlobalOptions, env: NodeJS.ProcessEnv = process.env): string {
  return opts.db ?? env.AIRLOCK_DB ?? "airlock.db";
}

/** The PostgreSQL database a command was pointed at: `--postgres`, else AIRLOCK_DATABASE_URL (or
 * AIRLOCK_POSTGRES); undefined: the SQLite file. Shared by `serve` and `audit verify`. */
export function postgresUrlOf(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  return (flag ?? env.AIRLOCK_DATABASE_URL ?? env.AIRLOCK_POSTGRES) || undefined;
}

/** The PostgreSQL schema holding Airlock's tables: the option, else AIRLOCK_POSTGRES_SCHEMA. */
export function postgresSchemaOf(
  option: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  return option ?? env.AIRLOCK_POSTGRES_SCHEMA;
}

export function cliLogger(env: NodeJS.ProcessEnv = process.env): Logger {
  return pino({ level: env.AIRLOCK_LOG_LEVEL ?? "warn" }, pino.destination(2));
}

/** The key names every command's engine redacts besides the built-in rules: AIRLOCK_REDACT_KEYS
 * (comma-separated). */
export function cliRedaction(env: NodeJS.ProcessEnv = process.env): RedactionOptions {
  return { keys: redactionKeysFrom(env.AIRLOCK_REDACT_KEYS) };
}

/** The SQLite file with its audit key and checkpoint file (see `auditSettings`), as every command
 * must open it: a keyed database refuses to open without its key. */
export function openSqliteStore(path: string): Store {
  return sqliteStore(path, auditSettings({ sqlitePath: path }));
}

async function openEngine(opts: GlobalOptions): Promise<Airlock> {
  return createAirlock({
    store: openSqliteStore(resolveDbPath(opts)),
    logger: cliLogger(),
    redaction: cliRedaction(),
  });
}

/** Runs `fn` with an engine and always closes it. */
export async function withEngine<T>(
  opts: GlobalOptions,
  fn: (a: Airlock) => Promise<T>,
): Promise<T> {
  const engine = await openEngine(opts);
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}

/** Where the request commands work: a server (`remote`, identities come from the token) or the
 * local database (identities are declared with --requester / --as). */
export interface Gate {
  api: AirlockApi;
  remote: boolean;
  /** The engine on the local database (absent against a server): what decides as the local user. */
  local?: Airlock;
}

export function remoteTarget(
  env: NodeJS.ProcessEnv = process.env,
): { url: string; token: string } | undefined {
  const url = env.AIRLOCK_URL?.trim();
  if (!url) return undefined;
  const token = env.AIRLOCK_TOKEN?.trim();
  if (!token)
    throw new CliError(
      "AIRLOCK_URL is set, so AIRLOCK_TOKEN must hold an API token for that server",
    );
  return { url, token };
}

export async function withGate<T>(opts: GlobalOptions, fn: (g: Gate) => Promise<T>): Promise<T> {
  const remote = remoteTarget();
  if (remote) return fn({ api: createClient(remote), remote: true });
  return withEngine(opts, (engine) => fn({ api: engine, remote: false, local: engine }));
}

/** For commands that need the database itself (audit, metrics, review). */
export function localOnly(command: string): void {
  if (remoteTarget()) {
    throw new CliError(
      `\`airlock ${command}\` works on the local database; unset AIRLOCK_URL (the server offers the same over HTTP)`,
    );
  }
}
