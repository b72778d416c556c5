// Pattern 2's log lines from the engine: one field name for one fact on every line.
import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";

let engine: Airlock;
afterEach(async () => {
  await engine?.close();
});

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split("\n")) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  return { logger: pino({ level: "info" }, stream), lines };
}

describe("engine log lines", () => {
  it("decision, timeout and cancellation name the elapsed time and the reviewer alike", async () => {
    const { logger, lines } = capture();
    engine = await createAirlock({ store: sqliteStore(":memory:"), logger });
    const a = await engine.request({ title: "a", requester: "bot", correlationId: "c-a" });
    await engine.decide(a.id, { outcome: "approved", reviewer: "alice" });
    const b = await engine.request({ title: "b", requester: "bot", timeoutMs: 1 });
    await new Promise((r) => setTimeout(r, 5));
    await engine.sweep();
    const c = await engine.request({ title: "c", requester: "bot" });
    await engine.cancel(c.id, { by: "bot", reason: "no longer needed" });
    await new Promise((r) => setImmediate(r));

    const byMsg = (msg: string) => lines.filter((l) => l.msg === msg);
    const decided = byMsg("Human decision recorded")[0];
    const timedOut = byMsg("Human review timeout")[0];
    const cancelled = byMsg("Approval cancelled")[0];
    expect(decided).toMatchObject({ correlation_id: "c-a", request_id: a.id, reviewer: "alice" });
    expect(timedOut).toMatchObject({ request_id: b.id, outcome: "timed_out" });
    expect(cancelled).toMatchObject({ request_id: c.id, outcome: "cancelled", reviewer: "bot" });
    for (const line of [decided, timedOut, cancelled]) {
      expect(line?.review_duration_ms).toEqual(expect.any(Number));
      expect(line).not.toHaveProperty("timeout_ms");
      expect(line).not.toHaveProperty("by");
    }
  });
});

describe("engine options", () => {
  it("a bad sweepMaxSleepMs throws InvalidInputError naming it, before the store is touched", async () => {
    const store = sqliteStore(":memory:");
    await expect(createAirlock({ store, sweepMaxSleepMs: 0 })).rejects.toMatchObject({
      code: "invalid_input",
      message: "Expected `sweepMaxSleepMs` to be a whole number from 1 up, got `0` (number)",
    });
    await store.close();
  });
});
