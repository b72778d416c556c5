// The store contract on a real PostgreSQL: every store object gets its own fresh schema, dropped when
// the file is done (see test/postgres/pg-env.ts for how the database is found or the suite skipped).
// Twice: on the pool the store creates (statements pipelined) and on a pool the caller passes (plain
// node-postgres defaults, one statement at a time).
import pg from "pg";
import { afterAll } from "vitest";
import { postgresStore } from "../../src/store/postgres.js";
import { describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";
import { runStoreContract } from "./contract.js";

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
  runStoreContract({
    name: "postgres",
    create: async () => postgresStore(url, { schema: schema(), max: 4 }),
    createKeyed: async (options) => postgresStore(url, { schema: schema(), max: 2, ...options }),
  });
  runStoreContract({
    name: "postgres on a pool you pass",
    create: async () => {
      const pool = new pg.Pool({ connectionString: url, max: 4 });
      pools.push(pool);
      return postgresStore(pool, { schema: schema() });
    },
  });
});
