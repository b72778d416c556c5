// engine.getByKey on PostgreSQL (store.getRequestByKey): keys per requester, absent key undefined.
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { postgresStore } from "../../src/store/postgres.js";
import { describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";

await describePg("postgres: getByKey", ({ url }) => {
  const schema = freshSchema("airlock_by_key");
  let engine: Airlock;
  beforeAll(async () => {
    engine = await createAirlock({ store: postgresStore(url, { schema, max: 2 }) });
  });
  afterAll(async () => {
    await engine?.close();
    await dropSchema(url, schema);
  });

  it("finds a request by its key, per requester", async () => {
    const a = await engine.request({ key: "k1", title: "a", requester: "Bot" });
    const anon = await engine.request({ key: "k1", title: "b" });
    expect((await engine.getByKey("k1", { requester: "bot" }))?.id).toBe(a.id);
    expect((await engine.getByKey("k1"))?.id).toBe(anon.id);
    expect(await engine.getByKey("k2", { requester: "bot" })).toBeUndefined();
    expect(await engine.getByKey("k1", { requester: "other" })).toBeUndefined();
  });
});
