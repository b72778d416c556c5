import { join } from "node:path";
import { afterAll } from "vitest";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import { runStoreContract } from "./contract.js";

runStoreContract({ name: "sqlite :memory:", create: async () => sqliteStore(":memory:") });

const dirs: (() => void)[] = [];
const keyedDirs: (() => void)[] = [];
afterAll(() => {
  for (const c of keyedDirs.splice(0)) c();
});
runStoreContract({
  name: "sqlite file",
  create: async () => {
    const t = tempDir();
    dirs.push(t.cleanup);
    return sqliteStore(join(t.dir, "airlock.db"));
  },
  createKeyed: async (options) => {
    const t = tempDir();
    keyedDirs.push(t.cleanup);
    return sqliteStore(join(t.dir, "keyed.db"), options);
  },
  destroy: async () => {
    dirs.pop()?.();
  },
});
