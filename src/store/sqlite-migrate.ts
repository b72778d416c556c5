// Applies versioned SQLite migrations in order, each once, recording them in `table`. The write lock
// is taken up front (BEGIN IMMEDIATE), so two processes opening one file at once apply each once.
import type Database from "better-sqlite3";

export interface Migration {
  version: number;
  sql: string;
  /** A step SQL cannot do (JavaScript's lower-casing), run after `sql` in the same transaction. */
  after?: (db: Database.Database) => void;
}

export function applySqliteMigrations(
  db: Database.Database,
  table: string,
  migrations: readonly Migration[],
): void {
  if (!/^[a-z_]+$/.test(table)) throw new TypeError(`bad migrations table name \`${table}\``);
  db.exec(
    `CREATE TABLE IF NOT EXISTS ${table} (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`,
  );
  const apply = db.transaction(() => {
    const row = db
      .prepare<[], { v: number | null }>(`SELECT MAX(version) AS v FROM ${table}`)
      .get();
    const current = row?.v ?? 0;
    for (const m of migrations) {
      if (m.version <= current) continue;
      db.exec(m.sql);
      m.after?.(db);
      db.prepare(`INSERT INTO ${table} (version, applied_at) VALUES (?, ?)`).run(
        m.version,
        Date.now(),
      );
    }
  });
  apply.immediate();
}
