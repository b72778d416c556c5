// The Store contract's part on tickets (Store.takeTicket, finishTicket, pruneTickets): a take is one
// atomic insert-or-take-over, a lease that ran out is taken over, a finished ticket is never taken
// again, keys are scoped, and tickets are not requests. `runTicketContract` runs it for one store
// (each test on a new, migrated store); a store without a second connection (in memory) runs the
// races through one store object and names no `reopen`.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store, TicketTake } from "../core/store.js";

/** What `runTicketContract` needs to know about a store: the same as `runStoreContract`. */
export interface TicketContractOptions {
  /** Names the suite: "Ticket contract: <name>". */
  name: string;
  /** A new, empty store; the suite calls `migrate()` and, after the test, `destroy` and `close()`. */
  create(): Promise<Store>;
  destroy?(store: Store): Promise<void>;
  /** A second store object on the same database, as another process would open it: the races
   * take through several of them (closed by the suite). Absent: through the one store. */
  reopen?(store: Store): Promise<Store>;
}

type Methods = Required<Pick<Store, "takeTicket" | "finishTicket" | "pruneTickets">>;
function methods(store: Store): Methods {
  const { takeTicket, finishTicket, pruneTickets } = store;
  if (!takeTicket || !finishTicket || !pruneTickets) {
    throw new Error(`the ${store.kind} store has no ticket methods`);
  }
  return {
    takeTicket: takeTicket.bind(store),
    finishTicket: finishTicket.bind(store),
    pruneTickets: pruneTickets.bind(store),
  };
}

const T0 = 1_700_000_000_000;
const LEASE = 60_000;
let counter = 0;
/** A take of a fresh key (unless `over` names one) at T0. */
function take(over: Partial<TicketTake> = {}): TicketTake {
  counter++;
  return {
    scope: "bot",
    key: `resume:${counter}`,
    holder: `resumer-${counter}#a`,
    now: T0,
    leaseMs: LEASE,
    ...over,
  };
}

/** Strings no text column keeps as written: a NUL, a lone high and a lone low surrogate. */
const UNSTORABLE = ["a\u0000b", "x\ud800y", "\udc00z"];

/** Defines the ticket tests for `get()`'s store; `others()` gives more store objects on the same
 * database for the races (or none). */
export function ticketContract(
  test: (name: string, fn: () => Promise<void>) => void,
  get: () => Store,
  others: (n: number) => Promise<Store[]> = async () => [],
): void {
  test("tickets: a free ticket is taken; another holder is told who holds it until when", async () => {
    const t = methods(get());
    const first = take();
    expect(await t.takeTicket(first)).toEqual({ taken: true, expiresAt: T0 + LEASE });
    const second = { ...first, holder: "resumer-x#b", now: T0 + 10 };
    expect(await t.takeTicket(second)).toEqual({
      taken: false,
      holder: first.holder,
      expiresAt: T0 + LEASE,
    });
    // Just before the lease ends it is still held.
    const late = { ...second, now: T0 + LEASE - 1 };
    expect(await t.takeTicket(late)).toMatchObject({ taken: false, holder: first.holder });
  });

  test("tickets: the holder renews its lease by taking again; others still wait", async () => {
    const t = methods(get());
    const first = take();
    await t.takeTicket(first);
    const renewed = await t.takeTicket({ ...first, now: T0 + LEASE - 5 });
    expect(renewed).toEqual({ taken: true, expiresAt: T0 + 2 * LEASE - 5 });
    // After the first lease, within the renewed one: still the holder's.
    const other = { ...first, holder: "resumer-x#b", now: T0 + LEASE + 100 };
    expect(await t.takeTicket(other)).toEqual({
      taken: false,
      holder: first.holder,
      expiresAt: T0 + 2 * LEASE - 5,
    });
  });

  test("tickets: a lease that ran out unfinished is taken over; the old holder cannot finish it", async () => {
    const t = methods(get());
    const dead = take();
    await t.takeTicket(dead);
    const next = { ...dead, holder: "resumer-next#b", now: T0 + LEASE };
    expect(await t.takeTicket(next)).toEqual({ taken: true, expiresAt: T0 + 2 * LEASE });
    // The dead holder, back: neither renews nor finishes what is now another's.
    expect(await t.takeTicket({ ...dead, now: T0 + LEASE + 1 })).toMatchObject({
      taken: false,
      holder: next.holder,
    });
    expect(await t.finishTicket({ ...dead, now: T0 + LEASE + 2 })).toBe(false);
    expect(await t.finishTicket({ ...next, now: T0 + LEASE + 3 })).toBe(true);
  });

  test("tickets: a finished ticket is never taken again, even after its lease", async () => {
    const t = methods(get());
    const first = take();
    await t.takeTicket(first);
    expect(await t.finishTicket({ ...first, now: T0 + 50 })).toBe(true);
    // A repeat (an answer lost on the way) answers true again and keeps the first time.
    expect(await t.finishTicket({ ...first, now: T0 + 60 })).toBe(true);
    const later = { ...first, holder: "resumer-late#c", now: T0 + 10 * LEASE };
    expect(await t.takeTicket(later)).toEqual({
      taken: false,
      holder: first.holder,
      expiresAt: T0 + LEASE,
      finishedAt: T0 + 50,
    });
    // Nor renewed by its own holder.
    expect(await t.takeTicket({ ...first, now: T0 + 70 })).toMatchObject({ taken: false });
    // A stranger finishes nothing; an unknown ticket neither.
    expect(await t.finishTicket({ ...later, now: T0 + 80 })).toBe(false);
    expect(await t.finishTicket({ ...take(), now: T0 })).toBe(false);
  });

  test("tickets: keys are scoped: one key in two scopes is two tickets", async () => {
    const t = methods(get());
    const mine = take({ scope: "bot" });
    const theirs = { ...mine, scope: "other-bot", holder: "other#z" };
    expect(await t.takeTicket(mine)).toMatchObject({ taken: true });
    expect(await t.takeTicket(theirs)).toMatchObject({ taken: true });
    expect(await t.finishTicket({ ...theirs, holder: mine.holder })).toBe(false);
    expect(await t.finishTicket(mine)).toBe(true);
    expect(await t.takeTicket({ ...theirs, holder: "other#y" })).toMatchObject({
      taken: false,
      holder: theirs.holder,
    });
  });

  test("tickets: many takes of one key at once, through several connections: exactly one gets it", async () => {
    const stores = [get(), ...(await others(3))];
    for (const n of [8, 32]) {
      const key = `race-${n}-${++counter}`;
      const outs = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          methods(stores[i % stores.length] as Store).takeTicket(
            take({ key, holder: `racer-${i}#r`, now: T0 + i }),
          ),
        ),
      );
      const won = outs.flatMap((o, i) => (o.taken ? [i] : []));
      expect(won).toHaveLength(1);
      const winner = `racer-${won[0]}#r`;
      for (const o of outs) if (!o.taken) expect(o.holder).toBe(winner);
    }
  });

  test("tickets: many take-overs of one expired ticket at once: exactly one gets it", async () => {
    const stores = [get(), ...(await others(3))];
    const dead = take();
    await methods(get()).takeTicket(dead);
    const now = T0 + LEASE + 1;
    const outs = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        methods(stores[i % stores.length] as Store).takeTicket({
          ...dead,
          holder: `heir-${i}#h`,
          now,
        }),
      ),
    );
    expect(outs.filter((o) => o.taken)).toHaveLength(1);
  });

  test("tickets: prune deletes those finished or expired before the cut, keeps the rest", async () => {
    const t = methods(get());
    const done = take();
    const expired = take();
    const live = take({ now: T0 + 10 * LEASE });
    const doneLate = take();
    for (const x of [done, expired, live, doneLate]) await t.takeTicket(x);
    await t.finishTicket({ ...done, now: T0 + 1 });
    await t.finishTicket({ ...doneLate, now: T0 + 5 * LEASE });
    // Cut at T0 + 2 leases: `done` (finished T0+1) and `expired` (lease ended T0+LEASE) go.
    expect(await t.pruneTickets(T0 + 2 * LEASE)).toBe(2);
    const now = T0 + 20 * LEASE;
    // Pruned: free again. Kept: `live` still held, `doneLate` still finished.
    expect(await t.takeTicket({ ...done, holder: "n#1", now })).toMatchObject({ taken: true });
    expect(await t.takeTicket({ ...expired, holder: "n#2", now })).toMatchObject({
      taken: true,
    });
    expect(await t.takeTicket({ ...live, holder: "n#3", now: T0 + 10 * LEASE })).toMatchObject({
      taken: false,
      holder: live.holder,
    });
    expect(await t.takeTicket({ ...doneLate, holder: "n#4", now })).toMatchObject({
      taken: false,
      finishedAt: T0 + 5 * LEASE,
    });
  });

  test("tickets: text no column can keep is refused, and nothing is written", async () => {
    const t = methods(get());
    for (const bad of UNSTORABLE) {
      for (const field of ["scope", "key", "holder"] as const) {
        const x = take({ [field]: bad });
        await expect(t.takeTicket(x)).rejects.toMatchObject({ code: "invalid_input" });
        await expect(t.finishTicket(x)).rejects.toMatchObject({ code: "invalid_input" });
      }
    }
    await expect(t.takeTicket(take({ leaseMs: 0 }))).rejects.toMatchObject({
      code: "invalid_input",
    });
    expect(await t.pruneTickets(Number.MAX_SAFE_INTEGER)).toBe(0);
  });

  test("tickets are not requests: no count, listing, quota, metric or audit event sees them", async () => {
    const store = get();
    const t = methods(store);
    const held = take({ scope: "agent" });
    await t.takeTicket(held);
    const finished = take({ scope: "agent" });
    await t.takeTicket(finished);
    await t.finishTicket(finished);
    expect(await store.countRequests({})).toBe(0);
    expect((await store.listRequests({})).items).toEqual([]);
    expect((await store.listSummaries({})).items).toEqual([]);
    expect(await store.countPending()).toBe(0);
    expect(await store.pendingUsage("agent")).toEqual({ count: 0, bytes: 0 });
    expect(await store.outcomes(0)).toEqual([]);
    if (store.outcomeStats) expect(await store.outcomeStats(0)).toEqual([]);
    expect(await store.listAudit({})).toEqual([]);
  });

  test("tickets: another connection sees a take at once", async () => {
    const [other] = await others(1);
    if (!other) return; // one store object: nothing to compare with
    const x = take();
    await methods(get()).takeTicket(x);
    expect(await methods(other).takeTicket({ ...x, holder: "elsewhere#e" })).toMatchObject({
      taken: false,
      holder: x.holder,
    });
  });
}

/** Defines the ticket contract's tests (vitest `describe`/`it`) for one store. */
export function runTicketContract(init: TicketContractOptions): void {
  describe(`Ticket contract: ${init.name}`, () => {
    let store: Store;
    const opened: Store[] = [];
    beforeEach(async () => {
      store = await init.create();
      await store.migrate();
    });
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
      await init.destroy?.(store);
      await store.close();
    });
    const others = async (n: number): Promise<Store[]> => {
      const reopen = init.reopen;
      if (!reopen) return [];
      const more: Store[] = [];
      for (let i = 0; i < n; i++) {
        const s = await reopen(store);
        opened.push(s);
        await s.migrate();
        more.push(s);
      }
      return more;
    };
    ticketContract(
      (name, fn) => it(name, fn),
      () => store,
      others,
    );
  });
}
