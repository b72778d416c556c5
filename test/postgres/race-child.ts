// One of the three processes of race.int.test.ts: creates (or replays) every request of the plan,
// waits on a third of them, decides its share near their deadlines, and runs a timeout sweeper, all
// against one PostgreSQL schema shared with the other two.

import { isAirlockError } from "../../src/core/errors.js";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { createAirlock } from "../../src/engine/engine.js";
import { postgresStore } from "../../src/store/postgres.js";
import { failWith, type Message, tell } from "./child.js";
import { deciders, inputFor, offsetMs, TOTAL, WORKERS } from "./race-plan.js";

const url = process.env.PG_URL ?? "";
const schema = process.env.PG_SCHEMA ?? "";
const index = Number(process.env.WORKER_INDEX);
const LIMIT_MS = 50_000;

async function main() {
  const engine = await createAirlock({
    store: postgresStore(url, { schema, max: 4, applicationName: `airlock-race-${index}` }),
    // Other processes' deadlines are found through nextDeadline after each sweep; this bounds
    // how long a sweeper sleeps when it knows of none.
    sweepMaxSleepMs: 300,
  });
  const go = new Promise<void>((resolve) => {
    process.on("message", (m: Message) => {
      if (m.type === "go") resolve();
      if (m.type === "exit") void engine.close().then(() => process.exit(0), failWith);
    });
  });
  tell({ type: "ready" });
  await go;
  const started = Date.now();

  let won = 0;
  let lost = 0;
  const errors: string[] = [];
  const pending = new Set<Promise<unknown>>();
  const track = (p: Promise<unknown>) => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };
  const waited: Record<string, string> = {};

  async function decideLater(k: number, r: ApprovalRequest) {
    const at = (r.deadline ?? Date.now()) + offsetMs(k, index);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
    try {
      await engine.decide(r.id, {
        outcome: k % 2 ? "approved" : "rejected",
        reviewer: `reviewer-${index}`,
        groups: ["oncall"],
      });
      won++;
    } catch (err) {
      if (isAirlockError(err, "conflict")) lost++;
      else errors.push(`${r.id}: ${String(err)}`);
    }
  }

  // Every worker walks all keys from its own starting point, a few at a time, so creations and
  // replays of the same key collide across processes.
  const order = Array.from(
    { length: TOTAL },
    (_, j) => (j + Math.floor((index * TOTAL) / WORKERS)) % TOTAL,
  );
  let next = 0;
  async function lane() {
    while (next < order.length) {
      const k = order[next++] as number;
      const r = await engine.request(inputFor(k));
      if (k % WORKERS === index) {
        track(
          engine.waitFor(r.id, { timeoutMs: LIMIT_MS }).then(
            (done) => {
              waited[done.id] = done.status;
            },
            (err: unknown) => errors.push(`waitFor ${r.id}: ${String(err)}`),
          ),
        );
      }
      if (deciders(k).includes(index)) track(decideLater(k, r));
    }
  }
  await Promise.all([lane(), lane(), lane(), lane()]);
  const createdMs = Date.now() - started;

  // Done when every decision and wait has settled and no request is pending anywhere.
  while (Date.now() - started < LIMIT_MS) {
    if (pending.size === 0 && (await engine.count({ status: "pending" })) === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  tell({
    type: "done",
    won,
    lost,
    errors: errors.slice(0, 20),
    errorCount: errors.length,
    waited,
    stillPending: pending.size,
    createdMs,
    totalMs: Date.now() - started,
  });
}

main().catch(failWith);
