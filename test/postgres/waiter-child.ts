// Process B of wakeup.int.test.ts: an engine with no sweeper that waits on the requests it is told
// about and reports when each wait resumed. It never polls: only the store's change signal can wake
// it.
import { createAirlock } from "../../src/engine/engine.js";
import { postgresStore } from "../../src/store/postgres.js";
import { failWith, type Message, tell } from "./child.js";

async function main() {
  const engine = await createAirlock({
    store: postgresStore(process.env.PG_URL ?? "", {
      schema: process.env.PG_SCHEMA ?? "",
      max: 2,
      applicationName: process.env.PG_APP ?? "airlock-waiter",
    }),
    sweeper: false,
  });
  process.on("message", (m: Message) => {
    if (m.type === "exit") {
      void engine.close().then(() => process.exit(0), failWith);
      return;
    }
    if (m.type !== "wait" || typeof m.id !== "string") return;
    const id = m.id;
    engine.waitFor(id, { timeoutMs: 20_000 }).then(
      (r) =>
        tell({
          type: "resumed",
          id,
          status: r.status,
          reviewer: r.decision?.reviewer ?? null,
          at: Date.now(),
        }),
      (err: unknown) =>
        tell({ type: "resumed", id, status: `error: ${String(err)}`, at: Date.now() }),
    );
    tell({ type: "waiting", id });
  });
  tell({ type: "ready" });
}

main().catch(failWith);
