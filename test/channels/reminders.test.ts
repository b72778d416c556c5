// Reminders: a nudge through the routes when a pending request's deadline is near, written once per
// deadline (however often and by however many servers it is looked for), and a new one for an
// escalation's new deadline; nothing for requests that are decided or not yet near.
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createReminders } from "../../src/channels/reminders.js";
import { createAirlock } from "../../src/engine/engine.js";
import { memoryStore } from "../../src/store/memory.js";

const silent = pino({ level: "silent" });
let clockMs = 5_000_000;
const clock = { now: () => clockMs };
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

describe("reminders", () => {
  it("nudges once per deadline, through the routes, only when the deadline is near", async () => {
    const store = memoryStore();
    const airlock = await createAirlock({ store, logger: silent, clock, sweeper: false });
    closers.push(() => airlock.close());
    const router = (r: { action: string }) => (r.action === "deploy" ? ["slack", "mail"] : []);
    let woken = 0;
    const reminders = createReminders({
      store,
      router,
      beforeMs: 60_000,
      logger: silent,
      clock,
      onEnqueued: () => woken++,
    });
    const soon = await airlock.request({
      title: "soon",
      action: "deploy",
      timeoutMs: 120_000,
      onTimeout: { escalate: { approvers: ["leads"], timeoutMs: 120_000 } },
    });
    await airlock.request({ title: "later", action: "deploy", timeoutMs: 3_600_000 });
    await airlock.request({ title: "not routed", action: "files.write", timeoutMs: 90_000 });
    const decided = await airlock.request({
      title: "decided",
      action: "deploy",
      timeoutMs: 90_000,
      approvers: ["bob"],
    });
    await airlock.decide(decided.id, { outcome: "approved", reviewer: "bob" });

    expect(await reminders.tick()).toBe(0); // nothing within a minute yet
    clockMs += 61_000;
    expect(await reminders.tick()).toBe(2); // "soon", to both routed channels
    expect(await reminders.tick()).toBe(0); // once per deadline
    expect(woken).toBe(1);
    const log = await airlock.outbox({ topic: "reminder" });
    expect(log.map((m) => [m.requestId, m.target])).toEqual([
      [soon.id, "slack"],
      [soon.id, "mail"],
    ]);
    expect(log[0]?.availableAt).toBe(clockMs);

    // The deadline passes: escalated, with a new deadline, which gets its own reminder.
    clockMs += 60_000;
    await airlock.sweep();
    expect((await airlock.get(soon.id)).approvers).toEqual(["leads"]);
    clockMs += 61_000;
    expect(await reminders.tick()).toBe(2);
    expect(await airlock.outbox({ topic: "reminder" })).toHaveLength(4);
  });
});
