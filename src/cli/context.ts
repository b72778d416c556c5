// Resolves where the command line works: the embedded SQLite file (`--db`, `AIRLOCK_DB`, default
// ./airlock.db), shared by every `airlock` process on this machine.
import pino, { type Logger } from "pino";
import { type Airlock, createAirlock } from "../core/engine.js";
import { sqliteStore } from "../store/sqlite.js";

export interface GlobalOptions {
  db?: string;
}

export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 4) {
    super(message);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}

export function resolveDbPath(opts: GlobalOptions, env: NodeJS.ProcessEnv = process.env): string {
  return opts.db ?? env.AIRLOCK_DB ?? "airlock.db";
}

export function cliLogger(env: NodeJS.ProcessEnv = process.env): Logger {
  return pino({ level: env.AIRLOCK_LOG_LEVEL ?? "warn" }, pino.destination(2));
}

export async function openEngine(opts: GlobalOptions): Promise<Airlock> {
  return createAirlock({ store: sqliteStore(resolveDbPath(opts)), logger: cliLogger() });
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
