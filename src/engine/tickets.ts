// Tickets: a named, once-only right to go on, such as the resume of one parked LangGraph thread or
// OpenAI Agents turn. Of all the processes that take a ticket at once exactly one gets it; it is held
// under a lease, renewed while its holder works (`withTicket`) and finished when the work is done, so
// it is never taken again. A holder that dies leaves it unfinished: once the lease has run out, the
// next take gets it, and the work runs again (the gates' claims keep an approved call from running
// twice). Tickets are not requests: no listing, count, metric, quota or audit event sees them. Keys
// are scoped by requester (over HTTP, the token's principal), so one agent cannot take or block
// another's.
import { randomUUID } from "node:crypto";
import { InvalidInputError } from "../core/errors.js";
import { normalizeIdentity } from "../core/identity.js";
import { DEFAULT_REQUESTER } from "../core/schemas.js";
import type { Store } from "../core/store.js";

/** How long a take holds unless renewed or finished: 5 minutes. */
export const DEFAULT_TICKET_LEASE_MS = 5 * 60_000;
/** The longest lease a take may ask for: a day. */
export const MAX_TICKET_LEASE_MS = 24 * 3600_000;
const MAX_KEY_LENGTH = 200;
const MAX_NAME_LENGTH = 200;

export interface TakeTicketOptions {
  /** Whose ticket: keys are scoped per requester. In process @default "anonymous" (a request's
   * default requester); over HTTP it is always the token's principal and is not sent. */
  requester?: string;
  /** Who takes it; the holder is this name and a random part. In process @default the requester;
   * over HTTP the token's principal. */
  by?: string;
  /** The holder an earlier take answered: takes the ticket again for it, renewing its lease, while it
   * still holds it (a ticket finished, or taken over after the lease ran out, is not renewed). */
  holder?: string;
  /** How long the take holds unless renewed or finished (1 ms to a day). @default 300000 */
  leaseMs?: number;
}

export type Ticket =
  /** This take holds the ticket until `expiresAt` (renew it before then, finish it when done). */
  | { taken: true; key: string; holder: string; expiresAt: number }
  /** Another holder does, until `expiresAt`, or it is `finished` (never taken again). */
  | { taken: false; key: string; holder: string; expiresAt: number; finished: boolean };

export interface FinishTicketOptions {
  /** The holder the take answered. */
  holder: string;
  /** As in `TakeTicketOptions`. */
  requester?: string;
}

/** What the engine and the HTTP client (`createClient`) offer for tickets. */
export interface AirlockTickets {
  /** Takes the ticket `key` (atomic: of several takes at once, in any processes, one gets a free
   * ticket); see the file's header. */
  takeTicket(key: string, options?: TakeTicketOptions): Promise<Ticket>;
  /** Marks the ticket done if `options.holder` holds it, so it is never taken again; true then (and
   * on a repeat), false when another holder took it over after the lease ran out. */
  finishTicket(key: string, options: FinishTicketOptions): Promise<boolean>;
}

// The engine's interface (types.ts) gains the ticket methods here, beside their implementation.
declare module "./types.js" {
  interface Airlock {
    /** See `AirlockTickets.takeTicket`. */
    takeTicket(key: string, options?: TakeTicketOptions): Promise<Ticket>;
    /** See `AirlockTickets.finishTicket`. */
    finishTicket(key: string, options: FinishTicketOptions): Promise<boolean>;
  }
}

/** The engine's ticket methods, on its store. */
export function engineTickets(deps: {
  store: Store;
  now: () => number;
  guard: () => void;
}): AirlockTickets {
  const { store } = deps;
  const methods = () => {
    const { takeTicket, finishTicket } = store;
    if (!takeTicket || !finishTicket) {
      throw new InvalidInputError(
        `the ${store.kind} store keeps no tickets (Store.takeTicket): resume with \`force: true\`, or use a store that does`,
      );
    }
    return { take: takeTicket.bind(store), finish: finishTicket.bind(store) };
  };
  return {
    async takeTicket(key, options = {}) {
      deps.guard();
      checkKey(key);
      const leaseMs = leaseOf(options.leaseMs);
      const scope = scopeOf(options.requester);
      const holder =
        options.holder === undefined
          ? `${name(options.by ?? scope, "by")}#${randomUUID().slice(0, 13)}`
          : name(options.holder, "holder", MAX_NAME_LENGTH + 14);
      const got = await methods().take({ scope, key, holder, now: deps.now(), leaseMs });
      return got.taken
        ? { taken: true, key, holder, expiresAt: got.expiresAt }
        : {
            taken: false,
            key,
            holder: got.holder,
            expiresAt: got.expiresAt,
            finished: got.finishedAt !== undefined,
          };
    },
    async finishTicket(key, options) {
      deps.guard();
      checkKey(key);
      const holder = name(options?.holder, "holder", MAX_NAME_LENGTH + 14);
      const scope = scopeOf(options.requester);
      return methods().finish({ scope, key, holder, now: deps.now() });
    },
  };
}

export type Held<T> =
  /** The work ran under the ticket; `finished` is false when finishing failed or the lease was lost
   * meanwhile (the ticket then expires and may be taken again). */
  | { ran: true; value: T; finished: boolean }
  /** Another holder has the ticket, or it is finished: the work did not run. */
  | { ran: false; ticket: Extract<Ticket, { taken: false }> };

/** Runs `work` under the ticket `key`: takes it, renews its lease every third of it while `work`
 * runs, and finishes it once `work` resolved. A `work` that throws leaves the ticket unfinished (it
 * expires after its lease, and a later take may run the work again); the error is thrown. */
export async function withTicket<T>(
  api: AirlockTickets,
  key: string,
  options: Omit<TakeTicketOptions, "holder">,
  work: () => Promise<T>,
): Promise<Held<T>> {
  const leaseMs = leaseOf(options.leaseMs);
  const ticket = await api.takeTicket(key, options);
  if (!ticket.taken) return { ran: false, ticket };
  const scope = options.requester === undefined ? {} : { requester: options.requester };
  const renewal = { ...scope, holder: ticket.holder, leaseMs };
  let held = true;
  let renewing: Promise<void> | undefined;
  const timer = setInterval(
    () => {
      // One renewal at a time; a failed one is tried again at the next tick (the lease runs on).
      renewing ??= api
        .takeTicket(key, renewal)
        .then(
          (again) => {
            if (!again.taken) held = false;
          },
          () => {},
        )
        .finally(() => {
          renewing = undefined;
        });
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  timer.unref?.();
  let value: T;
  try {
    value = await work();
  } finally {
    clearInterval(timer);
    await renewing;
  }
  const finished = await api.finishTicket(key, { ...scope, holder: ticket.holder }).then(
    (done) => done && held,
    () => false,
  );
  return { ran: true, value, finished };
}

function checkKey(key: unknown): asserts key is string {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new InvalidInputError(
      `a ticket's key must be a string of 1 to ${MAX_KEY_LENGTH} characters`,
      "key",
    );
  }
}

function name(value: unknown, field: string, max = MAX_NAME_LENGTH): string {
  if (typeof value !== "string" || value.trim().length === 0 || value.length > max) {
    throw new InvalidInputError(`\`${field}\` must be a name of 1 to ${max} characters`, field);
  }
  return value;
}

function scopeOf(requester: string | undefined): string {
  return normalizeIdentity(name(requester ?? DEFAULT_REQUESTER, "requester"));
}

function leaseOf(leaseMs: unknown): number {
  if (leaseMs === undefined) return DEFAULT_TICKET_LEASE_MS;
  if (
    typeof leaseMs !== "number" ||
    !Number.isInteger(leaseMs) ||
    leaseMs < 1 ||
    leaseMs > MAX_TICKET_LEASE_MS
  ) {
    throw new InvalidInputError(
      `\`leaseMs\` must be a whole number of milliseconds from 1 to ${MAX_TICKET_LEASE_MS}`,
      "leaseMs",
    );
  }
  return leaseMs;
}
