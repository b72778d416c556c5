// The memory store's tickets (Store.takeTicket): the same rules as the SQL stores' statements. One
// process owns the map and each method runs to its end without awaiting, so a take is atomic.
import type { Store } from "../core/store.js";
import { checkTicketFinish, checkTicketTake, heldBy } from "./ticket-rows.js";

type TicketMethods = Required<Pick<Store, "takeTicket" | "finishTicket" | "pruneTickets">>;

interface Held {
  holder: string;
  expiresAt: number;
  finishedAt?: number;
}

export function memoryTickets(deps: { guard(): void }): TicketMethods {
  // Keyed by scope and key, joined by a NUL (no column text holds one: checkTicketTake refuses it).
  const tickets = new Map<string, Held>();
  const id = (scope: string, key: string) => `${scope}\u0000${key}`;
  return {
    async takeTicket(take) {
      deps.guard();
      checkTicketTake(take);
      const at = id(take.scope, take.key);
      const held = tickets.get(at);
      const expiresAt = take.now + take.leaseMs;
      const free =
        !held ||
        (held.finishedAt === undefined &&
          (held.expiresAt <= take.now || held.holder === take.holder));
      if (!free) {
        return heldBy({
          holder: held.holder,
          expires_at: held.expiresAt,
          finished_at: held.finishedAt ?? null,
        });
      }
      tickets.set(at, { holder: take.holder, expiresAt });
      return { taken: true, expiresAt };
    },
    async finishTicket(finish) {
      deps.guard();
      checkTicketFinish(finish);
      const held = tickets.get(id(finish.scope, finish.key));
      if (!held || held.holder !== finish.holder) return false;
      held.finishedAt ??= finish.now;
      return true;
    },
    async pruneTickets(before) {
      deps.guard();
      let n = 0;
      for (const [at, held] of tickets) {
        if ((held.finishedAt ?? held.expiresAt) < before) {
          tickets.delete(at);
          n++;
        }
      }
      return n;
    },
  };
}
