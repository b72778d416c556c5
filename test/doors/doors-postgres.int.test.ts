// The door contract (door-contract.ts) against every door (doors.ts) on PostgreSQL; on SQLite in
// doors-sqlite.int.test.ts.
import { afterAll, beforeAll, describe } from "vitest";
import { postgresTokenStore } from "../../src/server/tokens-postgres.js";
import { postgresStore } from "../../src/store/postgres.js";
import { tempDir } from "../helpers.js";
import { describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";
import { doorContract } from "./door-contract.js";
import { ALL_DOORS } from "./doors.js";
import { startWorld, type World } from "./world.js";

await describePg("door contract on PostgreSQL", ({ url }) => {
  let world: World;
  const schema = freshSchema("airlock_doors");
  const temp = tempDir("airlock-doors-pg-");
  beforeAll(async () => {
    world = await startWorld({
      store: postgresStore(url, { schema }),
      tokens: postgresTokenStore(url, { schema }),
      dir: temp.dir,
    });
  });
  afterAll(async () => {
    await world?.close();
    await dropSchema(url, schema);
    temp.cleanup();
  });
  for (const door of ALL_DOORS) describe(door.name, () => doorContract(() => world, door));
});
