// Any interleaving of decisions, cancellations and the timeout on one request ends in exactly one
// terminal state, recorded exactly once in the audit, with a chain that verifies.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { createAirlock } from "../../src/engine/engine.js";
import { memoryStore } from "../../src/store/memory.js";
import { sqliteStore } from "../../src/store/sqlite.js";

type Op =
  | { kind: "decide"; outcome: "approved" | "rejected" | "revise"; reviewer: number }
  | { kind: "cancel" }
  | { kind: "timeout" };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant("decide" as const),
    outcome: fc.constantFrom("approved" as const, "rejected" as const, "revise" as const),
    reviewer: fc.integer({ min: 0, max: 3 }),
  }),
  fc.constant({ kind: "cancel" as const }),
  fc.constant({ kind: "timeout" as const }),
);

const TERMINAL = new Set(["decided", "timed_out", "cancelled"]);

for (const [name, makeStore] of [
  ["memory", () => memoryStore()],
  ["sqlite", () => sqliteStore(":memory:")],
] as const) {
  describe(`state machine under races (${name})`, () => {
    it("ends in exactly one terminal state, recorded once", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(opArb, { minLength: 1, maxLength: 8 }),
          fc.integer({ min: 1, max: 3 }),
          fc.scheduler(),
          async (ops, quorum, s) => {
            const clock = { t: 1_000 };
            const engine = await createAirlock({
              store: makeStore(),
              clock: { now: () => clock.t },
              sweeper: false,
            });
            const r = await engine.request({
              title: "t",
              requester: "agent",
              quorum,
              timeoutMs: 100,
            });
            const run = (op: Op): Promise<number | ApprovalRequest> => {
              if (op.kind === "cancel") return engine.cancel(r.id);
              if (op.kind === "timeout") {
                clock.t += 1_000;
                return engine.sweep();
              }
              return engine.decide(r.id, { outcome: op.outcome, reviewer: `user${op.reviewer}` });
            };
            const settled = Promise.allSettled(
              ops.map((op) => s.schedule(Promise.resolve(op)).then(run)),
            );
            await s.waitAll();
            const results = await settled;
            // Whatever is still pending times out now: every gate ends.
            clock.t += 10_000;
            const lateTimeouts = await engine.sweep();

            const final = await engine.get(r.id);
            expect(final.status).not.toBe("pending");
            const events = await engine.audit({ requestId: r.id });
            const terminal = events.filter((e) => TERMINAL.has(e.type));
            expect(terminal).toHaveLength(1);
            expect(terminal[0]?.data.outcome).toBe(final.decision?.outcome);
            expect(final.decisions.at(-1)).toEqual(final.decision);
            // Exactly one operation reports that it ended the gate.
            let wins = lateTimeouts;
            for (const res of results) {
              if (res.status !== "fulfilled") continue;
              if (typeof res.value === "number") wins += res.value;
              else if (res.value.status !== "pending") wins += 1;
            }
            if (wins === 0) {
              // A decision or cancellation that arrived past the deadline timed the gate out itself
              // (a deadline is a deadline) and lost, with a conflict naming the timeout.
              expect(final.decision?.method).toBe("timeout");
              const named = results.some(
                (res) =>
                  res.status === "rejected" &&
                  /timed out at .* before this decision arrived/.test(String(res.reason)),
              );
              expect(named).toBe(true);
            } else {
              expect(wins).toBe(1);
            }
            for (const res of results) {
              if (res.status === "rejected") {
                expect(["conflict", "forbidden"]).toContain((res.reason as { code?: string }).code);
              }
            }
            expect((await engine.verifyAudit()).ok).toBe(true);
            await engine.close();
          },
        ),
        { numRuns: 150 },
      );
    });
  });
}
