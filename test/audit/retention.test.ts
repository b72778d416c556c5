// The cutoff a `--before` value names, and the retention schedule `airlock serve --retention-days`
// runs (driven here by runOnce, with its timers stopped at the end).
import { describe, expect, it } from "vitest";
import { parseCutoff, retentionCutoff, startRetention } from "../../src/audit/retention.js";
import { verifyAuditLog } from "../../src/audit/verify.js";
import type { PruneResult } from "../../src/core/store.js";
import { memoryStore } from "../../src/store/memory.js";
import { createAndDecide } from "./fixtures.js";

describe("parseCutoff", () => {
  it("reads a date as midnight UTC and a date and time with its zone", () => {
    expect(parseCutoff("2026-01-01")).toBe(Date.UTC(2026, 0, 1));
    expect(parseCutoff("2026-01-01T12:30:00Z")).toBe(Date.UTC(2026, 0, 1, 12, 30));
    expect(parseCutoff("2026-01-01T12:30:00.250+02:00")).toBe(Date.UTC(2026, 0, 1, 10, 30, 0, 250));
  });
  it.each(["", "2026", "2026-1-1", "2026-02-30", "2026-01-01T12:00", "now", "1700000000000"])(
    "refuses %j",
    (text) => {
      expect(() => parseCutoff(text)).toThrow(/`--before`/);
    },
  );
});

describe("startRetention", () => {
  it("prunes what is older than the retention, and stops cleanly", async () => {
    const store = memoryStore();
    await store.migrate();
    for (let i = 0; i < 3; i++) await createAndDecide(store, `req_${i}`, "approved");
    const runs: { result?: PruneResult; before: number }[] = [];
    const now = 1_700_000_000_000 + 31 * 24 * 3600 * 1000;
    const schedule = startRetention({
      store,
      retentionDays: 30,
      now: () => now,
      onRun: (o) => runs.push(o),
    });
    try {
      expect(await schedule.runOnce()).toMatchObject({ requests: 3, events: 6 });
      expect(runs).toEqual([
        expect.objectContaining({ before: retentionCutoff(30, now), result: expect.anything() }),
      ]);
      expect(await verifyAuditLog(store)).toMatchObject({ ok: true, count: 0, anchorSeq: 6 });
    } finally {
      await schedule.stop();
      await store.close();
    }
    expect(await schedule.runOnce()).toBeUndefined();
  });

  it("refuses a retention that is not a positive number of days", async () => {
    const store = memoryStore();
    expect(() => startRetention({ store, retentionDays: 0 })).toThrow(/retentionDays/);
    await store.close();
  });
});
