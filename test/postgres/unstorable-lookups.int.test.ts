// A library caller who hands the PostgreSQL stores text no text column takes (a NUL) in a lookup gets
// the stores' own invalid_input, as for a write (storable.ts), not the driver's `invalid byte sequence
// for encoding "UTF8": 0x00`; the connection stays usable (skipped, saying why, without PostgreSQL).
import pino from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { createToken } from "../../src/server/tokens.js";
import { type PostgresTokenStore, postgresTokenStore } from "../../src/server/tokens-postgres.js";
import { postgresStore } from "../../src/store/postgres.js";
import { describePg, dropSchema, freshSchema } from "./pg-env.js";

await describePg("PostgreSQL lookups with text it cannot store", ({ url }) => {
  const schema = freshSchema("airlock_unstorable_lookups");
  let airlock: Airlock;
  let tokens: PostgresTokenStore;
  beforeAll(async () => {
    const store = postgresStore(url, { schema });
    airlock = await createAirlock({ store, logger: pino({ level: "silent" }) });
    tokens = postgresTokenStore(store.pool, { schema });
  });
  afterAll(async () => {
    await tokens?.close();
    await airlock?.close();
    await dropSchema(url, schema);
  });

  const refused = { code: "invalid_input", message: expect.stringMatching(/NUL character/) };

  it("answers invalid_input to a NUL in an id, key, filter or audit lookup, then serves on", async () => {
    const created = await airlock.request({ title: "Deploy", key: "k1" });
    await expect(airlock.get("req_\u0000")).rejects.toMatchObject(refused);
    await expect(airlock.getByKey("k\u0000", { requester: "bot" })).rejects.toMatchObject(refused);
    await expect(airlock.list({ requester: "a\u0000" })).rejects.toMatchObject(refused);
    await expect(airlock.list({ q: "\u0000" })).rejects.toMatchObject(refused);
    await expect(airlock.audit({ requestId: "req_\u0000" })).rejects.toMatchObject(refused);
    await expect(
      airlock.decide("req_\u0000", { outcome: "approved", reviewer: "alice" }),
    ).rejects.toMatchObject({ code: expect.stringMatching(/invalid_input/) });
    // The connections the refusals used are still good.
    expect((await airlock.get(created.id)).title).toBe("Deploy");
    expect((await airlock.list({})).items).toHaveLength(1);
  });

  it("answers invalid_input to a NUL in a token's id, name or group", async () => {
    await expect(tokens.revoke("tok_\u0000", Date.now())).rejects.toMatchObject(refused);
    const now = Date.now();
    const record = {
      id: "tok_x",
      name: "x\u0000y",
      roles: ["reviewer" as const],
      groups: [],
      createdAt: now,
    };
    await expect(tokens.put(record, "h1")).rejects.toMatchObject(refused);
    await expect(
      tokens.put({ ...record, name: "x", groups: ["g\u0000"] }, "h2"),
    ).rejects.toMatchObject(refused);
    expect(await tokens.list()).toEqual([]);
    const made = await createToken(tokens, { name: "alice", roles: ["reviewer"] });
    expect((await tokens.list()).map((t) => t.id)).toEqual([made.record.id]);
  });
});
