// The PostgreSQL store's tickets (Store.takeTicket): the table's migration and the statements. A take
// is one INSERT ... ON CONFLICT DO UPDATE ... WHERE: PostgreSQL settles racing takes of one key on the
// row itself (the later ones wait for the first to commit, then see its lease), so exactly one of
// them gets a free ticket, whichever server sends it.
import type { PoolClient } from "pg";
import type { Store, TicketTakeResult } from "../core/store.js";
import type { Step } from "./postgres-client.js";
import { checkTicketFinish, checkTicketTake, heldBy, type TicketRow } from "./ticket-rows.js";

/** Migration 13: the tickets, one row per scope and key, for the quoted schema `s`. */
export function postgresTicketsSql(s: string): string {
  return `
    CREATE TABLE ${s}.tickets (
      scope text COLLATE "C" NOT NULL,
      key text COLLATE "C" NOT NULL,
      holder text NOT NULL,
      taken_at double precision NOT NULL,
      expires_at double precision NOT NULL,
      finished_at double precision,
      PRIMARY KEY (scope, key)
    );
  `;
}

type TicketMethods = Required<Pick<Store, "takeTicket" | "finishTicket" | "pruneTickets">>;

export interface PostgresTicketDeps {
  /** The quoted schema name. */
  schema: string;
  /** Runs `fn` on a pooled connection with the store's failure rules. */
  run<T>(what: string, fn: (c: PoolClient, step: Step) => Promise<T>): Promise<T>;
}

/** Reads of a ticket another take holds, before giving up: the row can only go between the upsert
 * and the read if `pruneTickets` deleted it meanwhile (then the take is tried again). */
const TAKE_TRIES = 3;

export function postgresTickets(deps: PostgresTicketDeps): TicketMethods {
  const t = `${deps.schema}.tickets`;
  // Inserted when new; else taken over (expired, unfinished) or renewed (same holder), keeping when
  // the holder first took it. No row back: someone else holds it, or it is finished.
  const take = `
    INSERT INTO ${t} AS k (scope, key, holder, taken_at, expires_at)
    VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (scope, key) DO UPDATE SET
      taken_at = CASE WHEN k.holder = excluded.holder THEN k.taken_at ELSE excluded.taken_at END,
      holder = excluded.holder,
      expires_at = excluded.expires_at
    WHERE k.finished_at IS NULL AND (k.expires_at <= excluded.taken_at OR k.holder = excluded.holder)
    RETURNING expires_at`;
  const get = `SELECT holder, expires_at, finished_at FROM ${t} WHERE scope = $1 AND key = $2`;
  return {
    async takeTicket(ticket) {
      checkTicketTake(ticket);
      const expires = ticket.now + ticket.leaseMs;
      const values = [ticket.scope, ticket.key, ticket.holder, ticket.now, expires];
      return deps.run("takeTicket", async (c): Promise<TicketTakeResult> => {
        for (let i = 0; i < TAKE_TRIES; i++) {
          const won = await c.query<{ expires_at: number }>(take, values);
          const row = won.rows[0];
          if (row) return { taken: true, expiresAt: Number(row.expires_at) };
          const held = await c.query<TicketRow>(get, [ticket.scope, ticket.key]);
          const found = held.rows[0];
          if (found) return heldBy(found);
        }
        throw new Error(`ticket ${ticket.key} was neither taken nor found ${TAKE_TRIES} times`);
      });
    },
    async finishTicket(finish) {
      checkTicketFinish(finish);
      return deps.run("finishTicket", async (c) => {
        const res = await c.query(
          `UPDATE ${t} SET finished_at = COALESCE(finished_at, $1)
           WHERE scope = $2 AND key = $3 AND holder = $4`,
          [finish.now, finish.scope, finish.key, finish.holder],
        );
        return (res.rowCount ?? 0) > 0;
      });
    },
    async pruneTickets(before) {
      return deps.run("pruneTickets", async (c) => {
        const res = await c.query(`DELETE FROM ${t} WHERE COALESCE(finished_at, expires_at) < $1`, [
          before,
        ]);
        return res.rowCount ?? 0;
      });
    },
  };
}
