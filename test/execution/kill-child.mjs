// A worker that runs approved requests through runApproved and is killed (SIGKILL) at random points
// by test/execution/kill.int.test.ts. Plain JavaScript: it loads the engine from the module paths it
// is given (the built package, or the sources under tsx), so it starts fast when dist/ is current.
// Env: ENTRY, STORE_ENTRY (module URLs), STORE (sqlite | postgres), DB (file or URL), SCHEMA, IDS
// (a file of request ids, one per line), EFFECTS (the tool's own record, appended to), LEASE_MS.
import { appendFileSync, readFileSync } from "node:fs";

const env = process.env;
const { createAirlock, runApproved } = await import(env.ENTRY);
const stores = await import(env.STORE_ENTRY);
const store =
  env.STORE === "sqlite"
    ? stores.sqliteStore(env.DB)
    : stores.postgresStore(env.DB, { schema: env.SCHEMA, max: 2 });
const engine = await createAirlock({ store });
const ids = readFileSync(env.IDS, "utf8").split("\n").filter(Boolean);
const pause = () => new Promise((r) => setTimeout(r, Math.floor(Math.random() * 12)));
process.stdout.write("ready\n");
for (const id of ids) {
  await runApproved(
    engine,
    id,
    async () => {
      await pause();
      // The side effect, and the tool's own record of it: a line per run.
      appendFileSync(env.EFFECTS, `${id}\n`);
      await pause();
      return { ran: id };
    },
    { wait: false, leaseMs: Number(env.LEASE_MS), by: `worker-${process.pid}` },
  );
}
await engine.close();
process.stdout.write("done\n");
