import { join } from "node:path";
import { afterAll } from "vitest";
import type { Store } from "../../src/core/store.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { runStoreContract } from "../../src/testing/index.js";
import { tempDir } from "../helpers.js";

runStoreContract({
  name: "sqlite :memory:",
  create: async () => sqliteStore(":memory:"),
  skip: [
    {
      reason: "a :memory: database belongs to its one connection",
      tests: [
        "change signal: commits by another connection call onExternalChange",
        "change signal: each listener is called, and unsubscribing one keeps the others",
        "pending quota: parallel creates through two connections leave exactly the quota pending",
      ],
    },
  ],
});

const dirs: (() => void)[] = [];
const keyedDirs: (() => void)[] = [];
const files = new Map<Store, string>();
afterAll(() => {
  for (const c of keyedDirs.splice(0)) c();
});
runStoreContract({
  name: "sqlite file",
  create: async () => {
    const t = tempDir();
    dirs.push(t.cleanup);
    const file = join(t.dir, "airlock.db");
    const store = sqliteStore(file);
    files.set(store, file);
    return store;
  },
  reopen: async (store) => sqliteStore(files.get(store) as string),
  createKeyed: async (options) => {
    const t = tempDir();
    keyedDirs.push(t.cleanup);
    return sqliteStore(join(t.dir, "keyed.db"), options);
  },
  destroy: async (store) => {
    files.delete(store);
    dirs.pop()?.();
  },
});
