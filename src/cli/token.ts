// `airlock token create | list | revoke`: API tokens. Works on the SQLite file (`--db`,
// AIRLOCK_DB, ./airlock.db), on PostgreSQL with `--postgres URL` or AIRLOCK_DATABASE_URL (the tokens
// `airlock serve --postgres` uses; schema from AIRLOCK_POSTGRES_SCHEMA), or, when AIRLOCK_URL is set,
// through that server's /v1/tokens with the admin token in AIRLOCK_TOKEN. `create` prints the new
// token alone on stdout, so `TOKEN=$(airlock token create --role reviewer --name alice)` works.
import type { Command } from "commander";
import { createTransport } from "../client/http.js";
import { isAirlockError } from "../core/errors.js";
import {
  createToken,
  ROLES,
  type Role,
  revokeToken,
  type TokenInput,
  type TokenRecord,
} from "../server/tokens.js";
import { sqliteTokenStore } from "../server/tokens-sqlite.js";
import { auditSettings } from "./audit-settings.js";
import { CliError, type GlobalOptions, resolveDbPath } from "./context.js";
import { printJson, table } from "./output.js";
import { collect, oneOf } from "./parse.js";

/** What the token commands need, whether the tokens are local or on a server. */
export interface TokenBackend {
  create(input: TokenInput): Promise<{ token: string; record: TokenRecord }>;
  list(): Promise<TokenRecord[]>;
  revoke(id: string): Promise<TokenRecord>;
  close(): Promise<void>;
}

export function registerToken(program: Command, globals: () => GlobalOptions): void {
  const token = program
    .command("token")
    .description(
      "API tokens for the server (local database, PostgreSQL, or AIRLOCK_URL with an admin token)",
    );

  token
    .command("create")
    .description("create a token and print it alone on stdout (it is shown this once)")
    .requiredOption("--name <name>", "the principal: requester or reviewer name")
    .requiredOption("--role <role>", `one of ${ROLES.join(", ")} (repeat for several)`, collect)
    .option("--group <group>", "a group the principal belongs to (repeat for several)", collect)
    .option("--postgres <url>", POSTGRES_HELP)
    .action(async (opts: { name: string; role: string[]; group?: string[]; postgres?: string }) => {
      const roles = opts.role.map(roleOf);
      await withBackend(globals(), opts, async (b) => {
        const created = await b.create({ name: opts.name, roles, groups: opts.group ?? [] });
        process.stdout.write(`${created.token}\n`);
        process.stderr.write(
          `created ${created.record.id} for ${created.record.name} (${roles.join(", ")}); the token is not shown again\n`,
        );
      });
    });

  token
    .command("list")
    .description("list tokens (never their secrets)")
    .option("--json", "print JSON")
    .option("--all", "include revoked tokens")
    .option("--postgres <url>", POSTGRES_HELP)
    .action(async (opts: { json?: boolean; all?: boolean; postgres?: string }) => {
      await withBackend(globals(), opts, async (b) => {
        const all = await b.list();
        const shown = opts.all ? all : all.filter((t) => t.revokedAt === undefined);
        if (opts.json) {
          printJson(shown);
          return;
        }
        const rows = [["ID", "NAME", "ROLES", "GROUPS", "CREATED", "REVOKED"]];
        for (const t of shown) {
          rows.push([
            t.id,
            t.name,
            t.roles.join(","),
            t.groups.join(",") || "-",
            new Date(t.createdAt).toISOString(),
            t.revokedAt === undefined ? "-" : new Date(t.revokedAt).toISOString(),
          ]);
        }
        process.stdout.write(`${table(rows)}\n`);
      });
    });

  token
    .command("revoke <id>")
    .description("revoke a token by its id (see `airlock token list`)")
    .option("--postgres <url>", POSTGRES_HELP)
    .action(async (id: string, opts: { postgres?: string }) => {
      await withBackend(globals(), opts, async (b) => {
        const revoked = await b.revoke(id);
        process.stderr.write(`revoked ${revoked.id} (${revoked.name})\n`);
      });
    });
}

const POSTGRES_HELP =
  "the tokens in this PostgreSQL database, as `serve --postgres` uses them (AIRLOCK_DATABASE_URL)";

async function withBackend(
  globals: GlobalOptions,
  opts: { postgres?: string },
  fn: (b: TokenBackend) => Promise<void>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  // An explicit --postgres wins over AIRLOCK_URL; AIRLOCK_DATABASE_URL does not.
  const backend =
    env.AIRLOCK_URL && opts.postgres === undefined
      ? remoteBackend(env.AIRLOCK_URL, env)
      : await localBackend(globals, env, opts.postgres);
  try {
    await fn(backend);
  } catch (err) {
    if (isAirlockError(err)) throw new CliError(err.message);
    throw err;
  } finally {
    await backend.close();
  }
}

/** The token table in the SQLite file. A database this command creates gets its audit key file
 * first, as every command makes it (see `auditSettings`): otherwise the file would exist without
 * a key and stay unkeyed. */
function localTokenStore(path: string, env: NodeJS.ProcessEnv) {
  auditSettings({ sqlitePath: path, env });
  return sqliteTokenStore(path);
}

/** The tokens in PostgreSQL when `postgres` (else AIRLOCK_DATABASE_URL) names a database, else in
 * the SQLite file. */
export async function localBackend(
  globals: GlobalOptions,
  env: NodeJS.ProcessEnv,
  postgres?: string,
): Promise<TokenBackend> {
  const url = postgres ?? env.AIRLOCK_DATABASE_URL ?? env.AIRLOCK_POSTGRES;
  const schema = env.AIRLOCK_POSTGRES_SCHEMA;
  // PostgreSQL is imported only when asked for, so the SQLite path never loads its driver.
  const store = url
    ? (await import("../server/tokens-postgres.js")).postgresTokenStore(
        url,
        schema === undefined ? {} : { schema },
      )
    : localTokenStore(resolveDbPath(globals, env), env);
  return {
    create: (input) => createToken(store, input),
    list: () => store.list(),
    revoke: (id) => revokeToken(store, id),
    close: () => store.close(),
  };
}

function remoteBackend(url: string, env: NodeJS.ProcessEnv): TokenBackend {
  const token = env.AIRLOCK_TOKEN;
  if (!token) throw new CliError("AIRLOCK_URL is set, so AIRLOCK_TOKEN must hold an admin token");
  const http = createTransport({ url, token, fetch: globalThis.fetch });
  const timeoutMs = 30_000;
  return {
    async create(input) {
      const created = await http.call<TokenRecord & { token: string }>("POST", "/v1/tokens", {
        body: input,
        timeoutMs,
      });
      const { token: secret, ...record } = created;
      return { token: secret, record };
    },
    async list() {
      return (await http.call<{ items: TokenRecord[] }>("GET", "/v1/tokens", { timeoutMs })).items;
    },
    revoke: (id) =>
      http.call<TokenRecord>("DELETE", `/v1/tokens/${encodeURIComponent(id)}`, {
        timeoutMs,
        subject: { what: "token", id },
      }),
    close: async () => {},
  };
}

const roleOf: (value: string) => Role = oneOf("--role", ROLES);
