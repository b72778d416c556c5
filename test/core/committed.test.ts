// Once the store committed a change, the caller gets the committed result (issue 10 item 11): a failed
// read of the audit log for subscribers is not the caller's failure; it is logged and retried.
import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/core/store.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { memoryStore } from "../../src/store/memory.js";

let engine: Airlock | undefined;
afterEach(async () => {
  await engine?.close();
});

/** A store whose next audit read fails once right after a committed transition, as when the
 * connection to PostgreSQL is cut between the commit and the read. Before each transition it appends
 * an event as another writer would, so the feed must read the log back instead of using its own. */
function flakyAfterCommit(inner: Store) {
  const state = { failNext: false, failed: 0, readsAfterFailure: 0 };
  const store: Store = Object.create(inner);
  store.transition = async (next, expectedVersion, events) => {
    await inner.appendAudit([{ type: "notified", actor: "other-process", at: 0, data: {} }]);
    const result = await inner.transition(next, expectedVersion, events);
    if (result.ok) state.failNext = true;
    return result;
  };
  store.listAudit = async (filter) => {
    if (state.failNext) {
      state.failNext = false;
      state.failed++;
      throw Object.assign(new Error("Connection terminated unexpectedly"), { code: "57P01" });
    }
    if (state.failed > 0) state.readsAfterFailure++;
    return inner.listAudit(filter);
  };
  return { store, state };
}

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: "warn" }, sink), lines };
}

describe("a committed decision is reported as committed", () => {
  it("returns the decision when the read for subscribers fails, logs it and retries", async () => {
    const { store, state } = flakyAfterCommit(memoryStore());
    const { logger, lines } = capturingLogger();
    engine = await createAirlock({ store, logger });
    const r = await engine.request({ title: "Deploy", requester: "agent" });
    const waiting = engine.waitFor(r.id);

    const decided = await engine.decide(r.id, { outcome: "approved", reviewer: "alice" });
    expect(state.failed).toBe(1);
    expect(decided.status).toBe("approved");
    expect((await waiting).status).toBe("approved");
    await expect.poll(() => state.readsAfterFailure, { timeout: 5000 }).toBeGreaterThan(0);
    await expect
      .poll(() => lines.find((l) => String(l.msg).includes("the change is committed")))
      .toMatchObject({ level: 40, retry_in_ms: 100 });
  });

  it("the same for a cancellation and an execution claim", async () => {
    const { store, state } = flakyAfterCommit(memoryStore());
    engine = await createAirlock({ store });
    const a = await engine.request({ title: "A", requester: "agent" });
    const b = await engine.request({ title: "B", requester: "agent" });
    const waiters = [engine.waitFor(a.id), engine.waitFor(b.id)];
    expect((await engine.cancel(a.id)).status).toBe("cancelled");
    await engine.decide(b.id, { outcome: "approved", reviewer: "alice" });
    await Promise.all(waiters);
    const events = engine.events({ after: 0 })[Symbol.asyncIterator]();
    await events.next(); // a subscriber, so the feed reads the log back
    const claimed = await engine.claimExecution(b.id);
    expect(claimed.execution?.state).toBe("claimed");
    expect(state.failed).toBeGreaterThanOrEqual(2);
    await events.return?.();
  });
});
