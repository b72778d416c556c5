// The PostgreSQL modules for `serve --postgres` and `token --postgres`, imported only when asked for,
// so the CLI works where they are not built (the types are erased at compile time).
import type { postgresTokenStore } from "../server/tokens-postgres.js";
import type { postgresStore } from "../store/postgres.js";
import { CliError } from "./context.js";

export async function loadPostgresStore(): Promise<typeof postgresStore> {
  return (
    await importPostgres<{ postgresStore: typeof postgresStore }>(
      "../store/postgres.js",
      "postgresStore",
    )
  ).postgresStore;
}

export async function loadPostgresTokenStore(): Promise<typeof postgresTokenStore> {
  return (
    await importPostgres<{ postgresTokenStore: typeof postgresTokenStore }>(
      "../server/tokens-postgres.js",
      "postgresTokenStore",
    )
  ).postgresTokenStore;
}

async function importPostgres<M>(specifier: string, name: keyof M & string): Promise<M> {
  let mod: Partial<Record<string, unknown>>;
  try {
    mod = (await import(specifier)) as Partial<Record<string, unknown>>;
  } catch (err) {
    throw new CliError(`--postgres is not available in this build: ${(err as Error).message}`);
  }
  if (typeof mod[name] !== "function") {
    throw new CliError(`--postgres is not available in this build (no ${name})`);
  }
  return mod as M;
}
