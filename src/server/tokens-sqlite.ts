// API tokens in SQLite: a table of its own (`airlock_tokens`) in the same database file as the
// requests, on its own connection, with its own migration counter so it never collides with the
// core store's numbering.
import Database from "better-sqlite3";
import { AirlockError } from "../core/errors.js";
import { whileLocked } from "../store/sqlite-faults.js";
import { applySqliteMigrations } from "../store/sqlite-migrate.js";
import type { Role, TokenRecord, TokenStore } from "./tokens.js";

interface TokenRow {
  id: string;
  name: string;
  roles: string;
  groups: string;
  created_at: number;
  revoked_at: number | null;
}

const MIGRATIONS: readonly { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE airlock_tokens (
        id TEXT PRIMARY KEY,
        hash TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        roles TEXT NOT NULL,
        groups TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      );
    `,
  },
];

/** Tokens in the SQLite file at `path` (the same file `sqliteStore` uses is fine). */
export function sqliteTokenStore(path: string): TokenStore {
  let db: Database.Database;
  try {
    db = new Database(path);
  } catch (err) {
    throw new AirlockError(
      "store_unavailable",
      `cannot open SQLite database \`${path}\` for tokens: ${(err as Error).message}`,
      { cause: err },
    );
  }
  db.pragma("journal_mode = WAL");
  // A short wait per try; a longer lock is waited for on timers (`whileLocked`), so another process
  // holding the write lock never freezes this server's event loop.
  db.pragma("busy_timeout = 25");
  const where = `the SQLite token table at ${path}`;
  const run = <T>(what: string, fn: () => T) =>
    whileLocked(fn, { where, what, waitMs: 2000, guard });
  migrate(db);

  const stmt = {
    put: db.prepare(
      `INSERT INTO airlock_tokens (id, hash, name, roles, groups, created_at, revoked_at)
       VALUES (@id, @hash, @name, @roles, @groups, @created_at, @revoked_at)
       ON CONFLICT(id) DO UPDATE SET hash = excluded.hash, name = excluded.name, roles = excluded.roles,
         groups = excluded.groups, revoked_at = excluded.revoked_at`,
    ),
    byHash: db.prepare<[string], TokenRow>(
      "SELECT * FROM airlock_tokens WHERE hash = ? AND revoked_at IS NULL",
    ),
    byId: db.prepare<[string], TokenRow>("SELECT * FROM airlock_tokens WHERE id = ?"),
    list: db.prepare<[], TokenRow>("SELECT * FROM airlock_tokens ORDER BY created_at, id"),
    revoke: db.prepare<[number, string]>(
      "UPDATE airlock_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
    ),
  };

  let closed = false;
  function guard() {
    if (closed) throw new AirlockError("closed", "the SQLite token store is closed");
  }

  return {
    kind: "sqlite",
    async migrate() {
      guard();
      await run("migrate", () => migrate(db));
    },
    async put(record, hash) {
      guard();
      await run("saving a token", () =>
        stmt.put.run({
          id: record.id,
          hash,
          name: record.name,
          roles: JSON.stringify(record.roles),
          groups: JSON.stringify(record.groups),
          created_at: record.createdAt,
          revoked_at: record.revokedAt ?? null,
        }),
      );
    },
    async findByHash(hash) {
      guard();
      const row = await run("looking up a token", () => stmt.byHash.get(hash));
      return row ? recordOf(row) : undefined;
    },
    async list() {
      guard();
      return (await run("listing tokens", () => stmt.list.all())).map(recordOf);
    },
    async revoke(id, at) {
      guard();
      const row = await run("revoking a token", () => {
        stmt.revoke.run(at, id);
        return stmt.byId.get(id);
      });
      return row ? recordOf(row) : undefined;
    },
    async close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

function migrate(db: Database.Database): void {
  applySqliteMigrations(db, "airlock_token_migrations", MIGRATIONS);
}

function recordOf(row: TokenRow): TokenRecord {
  const record: TokenRecord = {
    id: row.id,
    name: row.name,
    roles: JSON.parse(row.roles) as Role[],
    groups: JSON.parse(row.groups) as string[],
    createdAt: row.created_at,
  };
  if (row.revoked_at !== null) record.revokedAt = row.revoked_at;
  return record;
}
