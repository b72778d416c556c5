import { join } from "node:path";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import { runStoreContract } from "./contract.js";

runStoreContract({ name: "sqlite :memory:", create: async () => sqliteStore(":memory:") });

const dirs: (() => void)[] = [];
runStoreContract({
  name: "sqlite file",
  create: async () => {
    const t = tempDir();
    dirs.push(t.cleanup);
    return sqliteStore(join(t.dir, "airlock.db"));
  },
  destroy: async () => {
    dirs.pop()?.();
  },
});
