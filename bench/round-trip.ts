// The gate round trip every store is measured with: create → waiter registered → decide → waiter
// resumed → claimExecution, one gate at a time and then 8 (and 64) in flight. Shared by the SQLite
// and PostgreSQL benches.
import type { Airlock } from "../src/engine/engine.js";
import { bounded } from "./figures.js";

/** One round trip, up to the agent claiming the execution; returns the time from calling decide()
 * to the waiter resuming, in ms. */
export async function gateRoundTrip(engine: Airlock): Promise<number> {
  const r = await engine.request({
    title: "bench",
    requester: "agent",
    items: ["a", "b"],
    timeoutMs: 600_000,
  });
  let resumedAt = 0;
  const waiting = engine.waitFor(r.id).then((x) => {
    resumedAt = performance.now();
    return x;
  });
  const t0 = performance.now();
  await engine.decide(r.id, { outcome: "approved", reviewer: "alice", selected: ["item-2"] });
  const done = await waiting;
  if (done.status !== "approved") throw new Error("bench: the gate did not resume approved");
  const claimed = await engine.claimExecution(r.id, { by: "agent" });
  // Claimed under a lease; the outcome (finishExecution) is not part of the round trip.
  if (claimed.execution?.state !== "claimed")
    throw new Error("bench: the execution was not claimed");
  return resumedAt - t0;
}

/** Round trips per second with `agents` loops in flight at once, each bounded by `rounds` and `maxMs`. */
export async function concurrentRoundTrips(
  engine: Airlock,
  agents: number,
  rounds: number,
  maxMs: number,
): Promise<number> {
  const r = await roundTripsInFlight(engine, agents, rounds, maxMs);
  return (r.n / r.ms) * 1000;
}

/** How many round trips `agents` loops in flight made (`rounds` in all at most), and in how long. */
export function roundTripsInFlight(
  engine: Airlock,
  agents: number,
  rounds: number,
  maxMs: number,
): Promise<{ n: number; ms: number }> {
  return loopsInFlight(agents, rounds, maxMs, () => gateRoundTrip(engine));
}

/** `step` run by `loops` loops at once, `rounds` times in all at most, each loop bounded by `maxMs`:
 * how many steps were made, and in how long. */
export async function loopsInFlight(
  loops: number,
  rounds: number,
  maxMs: number,
  step: () => Promise<unknown>,
): Promise<{ n: number; ms: number }> {
  const start = performance.now();
  const done = await Promise.all(
    Array.from({ length: loops }, () =>
      bounded(Math.max(1, Math.floor(rounds / loops)), maxMs, async () => {
        await step();
      }),
    ),
  );
  return { n: done.reduce((s, l) => s + l.n, 0), ms: performance.now() - start };
}
