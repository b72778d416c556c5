// What every TokenStore does (memory and SQLite in meta.int.test.ts, PostgreSQL in
// test/postgres/tokens.int.test.ts). `open` returns an empty store.
import { describe, expect, it } from "vitest";
import { createToken, hashToken, revokeToken, type TokenStore } from "../../src/server/tokens.js";

export function tokenStoreContract(name: string, open: () => TokenStore) {
  describe(`${name} token store`, () => {
    it("finds a token by the hash of its secret, lists without secrets, and revokes", async () => {
      const store = open();
      await store.migrate();
      const { token, record } = await createToken(store, {
        name: "alice",
        roles: ["reviewer"],
        groups: ["ops", "ops"],
      });
      expect(token).toMatch(/^alk_[A-Za-z0-9_-]{43}$/);
      expect(record.groups).toEqual(["ops"]);
      expect(await store.findByHash(hashToken(token))).toEqual(record);
      expect(await store.findByHash(hashToken(`${token}x`))).toBeUndefined();
      const listed = await store.list();
      expect(listed).toEqual([record]);
      expect(JSON.stringify(listed)).not.toContain(token);

      const revoked = await revokeToken(store, record.id, 123);
      expect(revoked.revokedAt).toBe(123);
      expect(await store.findByHash(hashToken(token))).toBeUndefined();
      await expect(revokeToken(store, "tok_nope")).rejects.toMatchObject({ code: "not_found" });
      await store.close();
    });

    it("replaces the hash of a token put again under the same id", async () => {
      const store = open();
      const record = {
        id: "tok_fixed",
        name: "admin",
        roles: ["admin" as const],
        groups: [],
        createdAt: 1,
      };
      await store.put(record, hashToken("first-secret-value"));
      await store.put(record, hashToken("second-secret-value"));
      expect(await store.findByHash(hashToken("first-secret-value"))).toBeUndefined();
      expect((await store.findByHash(hashToken("second-secret-value")))?.id).toBe("tok_fixed");
      await store.close();
    });

    it("revokes once, keeping the first time, and lists revoked tokens too, oldest first", async () => {
      const store = open();
      const first = await createToken(store, { name: "bot", roles: ["agent"] }, 1000);
      const second = await createToken(store, { name: "admin", roles: ["admin"] }, 2000);
      expect((await store.revoke(first.record.id, 3000))?.revokedAt).toBe(3000);
      expect((await store.revoke(first.record.id, 4000))?.revokedAt).toBe(3000);
      expect(await store.revoke("tok_missing", 5000)).toBeUndefined();
      expect(await store.list()).toEqual([{ ...first.record, revokedAt: 3000 }, second.record]);
      expect((await store.findByHash(hashToken(second.token)))?.id).toBe(second.record.id);
      await store.close();
    });

    it("refuses invalid token input, naming the field", async () => {
      const store = open();
      await expect(
        createToken(store, { name: "x", roles: ["superuser" as "admin"] }),
      ).rejects.toMatchObject({
        code: "invalid_input",
        field: "roles.0",
      });
      await expect(createToken(store, { name: "", roles: ["agent"] })).rejects.toMatchObject({
        field: "name",
      });
      await store.close();
    });
  });
}
