// The SQLite store's tickets (Store.takeTicket): the table's migration and the statements. A take is
// one upsert inside an IMMEDIATE transaction (the database's write lock), so of several takes at
// once, in this process or others on the same file, exactly one gets a free ticket.
import type Database from "better-sqlite3";
import type { Store, TicketTake, TicketTakeResult } from "../core/store.js";
import { checkTicketFinish, checkTicketTake, heldBy, type TicketRow } from "./ticket-rows.js";

/** Migration 13: the tickets, one row per scope and key. */
export const SQLITE_TICKETS_SQL = `
  CREATE TABLE tickets (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    holder TEXT NOT NULL,
    taken_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    finished_at REAL,
    PRIMARY KEY (scope, key)
  ) WITHOUT ROWID;
`;

type TicketMethods = Required<Pick<Store, "takeTicket" | "finishTicket" | "pruneTickets">>;

export interface SqliteTicketDeps {
  db: Database.Database;
  /** Runs a statement, waiting while another process holds the lock (the store's own). */
  attempt<T>(what: string, fn: () => T): Promise<T>;
}

export function sqliteTickets(deps: SqliteTicketDeps): TicketMethods {
  const { db } = deps;
  const stmt = {
    // Inserted when new; else taken over (expired, unfinished) or renewed (same holder), keeping
    // when the holder first took it. No row back: someone else holds it, or it is finished.
    take: db.prepare<
      { scope: string; key: string; holder: string; now: number; expires: number },
      { expires_at: number }
    >(
      `INSERT INTO tickets (scope, key, holder, taken_at, expires_at)
       VALUES (@scope, @key, @holder, @now, @expires)
       ON CONFLICT (scope, key) DO UPDATE SET
         taken_at = CASE WHEN holder = excluded.holder THEN taken_at ELSE excluded.taken_at END,
         holder = excluded.holder,
         expires_at = excluded.expires_at
       WHERE finished_at IS NULL AND (expires_at <= excluded.taken_at OR holder = excluded.holder)
       RETURNING expires_at`,
    ),
    get: db.prepare<[string, string], TicketRow>(
      "SELECT holder, expires_at, finished_at FROM tickets WHERE scope = ? AND key = ?",
    ),
    finish: db.prepare<[number, string, string, string]>(
      `UPDATE tickets SET finished_at = COALESCE(finished_at, ?)
       WHERE scope = ? AND key = ? AND holder = ?`,
    ),
    prune: db.prepare<[number]>("DELETE FROM tickets WHERE COALESCE(finished_at, expires_at) < ?"),
  };

  const takeTx = db.transaction((take: TicketTake): TicketTakeResult => {
    const expires = take.now + take.leaseMs;
    const won = stmt.take.get({
      scope: take.scope,
      key: take.key,
      holder: take.holder,
      now: take.now,
      expires,
    });
    if (won) return { taken: true, expiresAt: Number(won.expires_at) };
    const row = stmt.get.get(take.scope, take.key);
    // The upsert found the row (it returned none), and the write lock is still held: it is there.
    if (!row) throw new Error(`ticket ${take.key} vanished inside its own transaction`);
    return heldBy(row);
  });

  return {
    async takeTicket(take) {
      checkTicketTake(take);
      return deps.attempt("takeTicket", () => takeTx.immediate(take));
    },
    async finishTicket(finish) {
      checkTicketFinish(finish);
      return deps.attempt(
        "finishTicket",
        () => stmt.finish.run(finish.now, finish.scope, finish.key, finish.holder).changes > 0,
      );
    },
    async pruneTickets(before) {
      return deps.attempt("pruneTickets", () => stmt.prune.run(before).changes);
    },
  };
}
