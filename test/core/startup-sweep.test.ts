// A start after a long stop finds a backlog of overdue gates: the engine times out the first batch
// before it is handed out and the rest in the background, and every one of them ends timed out once.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { eventually, tempDir } from "../helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function until(check: () => Promise<boolean>) {
  await eventually(check, { timeoutMs: 10_000, what: "the backlog swept" });
}

describe("overdue gates found at start", () => {
  it("are all timed out, the first batch before the engine is handed out", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const file = join(t.dir, "airlock.db");
    const clock = { t: 1_700_000_000_000 };
    const before = await createAirlock({
      store: sqliteStore(file),
      clock: { now: () => clock.t },
      sweeper: false,
    });
    const ids: string[] = [];
    for (let i = 0; i < 250; i++) {
      ids.push(
        (await before.request({ title: `gate ${i}`, requester: "agent", timeoutMs: 1000 })).id,
      );
    }
    await before.close();

    clock.t += 60_000;
    const after: Airlock = await createAirlock({
      store: sqliteStore(file),
      clock: { now: () => clock.t },
    });
    cleanups.push(() => after.close());
    expect(await after.count({ status: "timed_out" })).toBeGreaterThanOrEqual(100);
    await until(async () => (await after.count({ status: "pending" })) === 0);
    expect(await after.count({ status: "timed_out" })).toBe(250);
    const events = (await after.audit({ limit: 1000 })).filter((e) => e.type === "timed_out");
    expect(new Set(events.map((e) => e.requestId))).toEqual(new Set(ids));
    expect(events).toHaveLength(250);
  });
});
