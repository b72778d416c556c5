import { describe, expect, it } from "vitest";
import { createSweeper } from "../../src/engine/sweeper.js";
import { eventually } from "../helpers.js";

describe("sweeper", () => {
  it("keeps sweeping after the store failed", async () => {
    let calls = 0;
    let failing = true;
    const errors: unknown[] = [];
    const sweeper = createSweeper({
      now: () => Date.now(),
      maxSleepMs: 50,
      onError: (err) => errors.push(err),
      nextDeadline: async () => undefined,
      fireDue: async () => {
        calls++;
        if (failing) throw new Error("database is down");
        return 0;
      },
    });
    await expect(sweeper.sweep()).rejects.toThrow("database is down");
    failing = false;
    // The timer re-armed itself after the failure: more sweeps happen without anyone asking.
    try {
      await eventually(() => calls >= 3, { timeoutMs: 2_000, what: "three sweeps" });
    } finally {
      sweeper.stop();
    }
    expect(calls).toBeGreaterThanOrEqual(3);
  });
});
