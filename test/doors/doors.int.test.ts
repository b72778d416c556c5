// The door contract (door-contract.ts) against every door (doors.ts), on SQLite and on PostgreSQL.
import { afterAll, beforeAll, describe } from "vitest";
import { postgresTokenStore } from "../../src/server/tokens-postgres.js";
import { sqliteTokenStore } from "../../src/server/tokens-sqlite.js";
import { postgresStore } from "../../src/store/postgres.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import { describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";
import { doorContract } from "./door-contract.js";
import { ALL_DOORS } from "./doors.js";
import { dbPath, startWorld, type World } from "./world.js";

describe("door contract on SQLite", () => {
  let world: World;
  const temp = tempDir("airlock-doors-");
  beforeAll(async () => {
    const path = dbPath(temp.dir);
    world = await startWorld({
      store: sqliteStore(path),
      tokens: sqliteTokenStore(path),
      dir: temp.dir,
    });
  });
  afterAll(async () => {
    await world?.close();
    temp.cleanup();
  });
  for (const door of ALL_DOORS) describe(door.name, () => doorContract(() => world, door));
});

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
