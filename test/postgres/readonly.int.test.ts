// A PostgreSQL database that cannot take writes (a standby after a failover, a full disk) answers
// `store_unavailable` saying why, not a bare error; reads go on.
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { postgresStore } from "../../src/store/postgres.js";
import { request } from "../audit/fixtures.js";
import { describePg, dropSchema, freshSchema } from "./pg-env.js";

await describePg("postgres storage faults", ({ url }) => {
  const schema = freshSchema("airlock_ro");
  afterAll(async () => {
    await dropSchema(url, schema);
  });

  it("a read-only database is store_unavailable and says read-only", async () => {
    const writable = postgresStore(url, { schema, max: 1 });
    await writable.migrate();
    await writable.insertRequest(request("req_1"), []);
    await writable.close();
    const pool = new pg.Pool({
      connectionString: url,
      max: 1,
      options: "-c default_transaction_read_only=on",
    });
    const store = postgresStore(pool, { schema });
    try {
      await expect(store.insertRequest(request("req_2"), [])).rejects.toMatchObject({
        code: "store_unavailable",
        message: expect.stringMatching(/unavailable \(insertRequest: the database is read-only\)/),
      });
      expect((await store.getRequest("req_1"))?.id).toBe("req_1");
    } finally {
      await store.close();
      await pool.end();
    }
  });
});
