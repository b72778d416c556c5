// The door contract (door-contract.ts) against every door (doors.ts) on SQLite; on PostgreSQL in
// doors-postgres.int.test.ts (two files, so that the two run side by side).
import { afterAll, beforeAll, describe } from "vitest";
import { sqliteTokenStore } from "../../src/server/tokens-sqlite.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
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
