import { join } from "node:path";
import { afterAll } from "vitest";
import type { Store } from "../../src/core/store.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { runStoreContract } from "../../src/testing/index.js";
import { runTicketContract } from "../../src/testing/ticket-contract.js";
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

runTicketContract({ name: "sqlite :memory:", create: async () => sqliteStore(":memory:") });

// On a file, the races take through several connections (another store object each).
const ticketFiles = new Map<Store, { file: string; cleanup: () => void }>();
runTicketContract({
  name: "sqlite file",
  create: async () => {
    const t = tempDir();
    const file = join(t.dir, "airlock.db");
    const store = sqliteStore(file);
    ticketFiles.set(store, { file, cleanup: t.cleanup });
    return store;
  },
  reopen: async (store) => sqliteStore(ticketFiles.get(store)?.file as string),
  destroy: async (store) => {
    const t = ticketFiles.get(store);
    ticketFiles.delete(store);
    // Closed first: the suite closes it again, which is safe.
    await store.close();
    t?.cleanup();
  },
});
