// The store contract on a real PostgreSQL: every store object gets its own fresh schema, dropped when
// the file is done (see test/postgres/pg-env.ts for how the database is found or the suite skipped).
// Twice: on the pool the store creates (statements pipelined) and on a pool the caller passes (plain
// node-postgres defaults, one statement at a time).
import pg from "pg";
import { afterAll } from "vitest";
import type { Store } from "../../src/core/store.js";
import { type PostgresStore, postgresStore } from "../../src/store/postgres.js";
import { runStoreContract } from "../../src/testing/index.js";
import { runTicketContract } from "../../src/testing/ticket-contract.js";
import { describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";

await describePg("postgres store contract", ({ url }) => {
  const schemas: string[] = [];
  const pools: pg.Pool[] = [];
  afterAll(async () => {
    for (const p of pools) await p.end();
    for (const s of schemas) await dropSchema(url, s);
  });
  const schema = () => {
    const s = freshSchema("airlock_contract");
    schemas.push(s);
    return s;
  };
  // Another store object on the same schema, with a pool of its own: as another process opens it.
  const reopen = async (store: Store) =>
    postgresStore(url, { schema: (store as PostgresStore).schema, max: 2 });
  runStoreContract({
    name: "postgres",
    create: async () => postgresStore(url, { schema: schema(), max: 4 }),
    reopen,
    createKeyed: async (options) => postgresStore(url, { schema: schema(), max: 2, ...options }),
  });
  // Several pools on one schema: the races take through several connections of each.
  runTicketContract({
    name: "postgres",
    create: async () => postgresStore(url, { schema: schema(), max: 4 }),
    reopen,
  });
  runStoreContract({
    name: "postgres on a pool you pass",
    create: async () => {
      const pool = new pg.Pool({ connectionString: url, max: 4 });
      pools.push(pool);
      return postgresStore(pool, { schema: schema() });
    },
    reopen,
  });
});
