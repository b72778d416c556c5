// What the three stores share about tickets (Store.takeTicket): the checks before a write, and the
// SQL row of a ticket, so they accept, refuse and read back alike.
import { InvalidInputError } from "../core/errors.js";
import type { TicketFinish, TicketTake, TicketTakeResult } from "../core/store.js";
import { columnText } from "./storable.js";

/** Refuses a take the stores could not keep as written, or whose times are not times. */
export function checkTicketTake(take: TicketTake): void {
  checkTicketFinish(take);
  if (!Number.isFinite(take.leaseMs) || take.leaseMs <= 0) {
    throw new InvalidInputError("`leaseMs` must be a positive number of milliseconds", "leaseMs");
  }
  if (!Number.isFinite(take.now + take.leaseMs)) {
    throw new InvalidInputError("`now + leaseMs` must be a finite time", "leaseMs");
  }
}

/** Refuses a finish the stores could not look up as written. */
export function checkTicketFinish(finish: TicketFinish): void {
  columnText(finish.scope, "scope");
  columnText(finish.key, "key");
  columnText(finish.holder, "holder");
  if (!Number.isFinite(finish.now)) {
    throw new InvalidInputError("`now` must be a finite time (epoch ms)", "now");
  }
}

/** A ticket as the SQL stores keep it (PostgreSQL returns double precision as numbers). */
export interface TicketRow {
  holder: string;
  expires_at: number | string;
  finished_at: number | string | null;
}

/** The answer to a take that did not get the ticket, from the row that kept it. */
export function heldBy(row: TicketRow): Extract<TicketTakeResult, { taken: false }> {
  const held: Extract<TicketTakeResult, { taken: false }> = {
    taken: false,
    holder: row.holder,
    expiresAt: Number(row.expires_at),
  };
  if (row.finished_at !== null) held.finishedAt = Number(row.finished_at);
  return held;
}
