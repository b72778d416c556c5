// The PostgreSQL token store: the token-store contract, plus what PostgreSQL adds (migrations once
// under a lock, beside the request store in one schema, tokens shared between stores, pool ownership,
// a clear error when the database is unreachable) and `airlock token --postgres`.
import { spawn } from "node:child_process";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { localBackend } from "../../src/cli/token.js";
import { createToken, hashToken } from "../../src/server/tokens.js";
import { type PostgresTokenStore, postgresTokenStore } from "../../src/server/tokens-postgres.js";
import { postgresStore } from "../../src/store/postgres.js";
import { POSTGRES_MIGRATIONS } from "../../src/store/postgres-migrations.js";
import { airlockArgs } from "../helpers.js";
import { tokenStoreContract } from "../server/token-contract.js";
import { adminQuery, describePg, dropSchema, freshSchema } from "./pg-env.js";

describe("postgres token store without a database", () => {
  it("fails with one clear error naming the URL, password masked", async () => {
    const tokens = postgresTokenStore("postgres://alice:s3cret@127.0.0.1:1/test");
    const err = await tokens.list().then(
      () => undefined,
      (e: unknown) => e,
    );
    await tokens.close();
    expect(err).toMatchObject({ code: "store_unavailable" });
    const message = (err as Error).message;
    expect(message).toContain("postgres://alice:***@127.0.0.1:1/test");
    expect(message).not.toContain("s3cret");
    expect(message).toMatch(/ECONNREFUSED|refused/i);
  });

  it("checks the schema name", () => {
    expect(() => postgresTokenStore("postgres://x@127.0.0.1/test", { schema: "" })).toThrow(
      /`schema`/,
    );
  });
});

const contractSchemas: string[] = [];
const stores: PostgresTokenStore[] = [];
function open(schema: string, url: string): PostgresTokenStore {
  const store = postgresTokenStore(url, { schema });
  stores.push(store);
  return store;
}

await describePg("postgres token store", ({ url }) => {
  const schema = freshSchema("airlock_tokens");
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    for (const s of [schema, ...contractSchemas]) await dropSchema(url, s);
  });

  // Each store of the contract starts empty: a schema of its own.
  tokenStoreContract("postgres", () => {
    const s = freshSchema("airlock_tokens_c");
    contractSchemas.push(s);
    return open(s, url);
  });

  it("migrates once when several token stores and the request store start together", async () => {
    const fresh = freshSchema("airlock_tokens_m");
    const requests = postgresStore(url, { schema: fresh, max: 2 });
    try {
      const many = Array.from({ length: 4 }, () => open(fresh, url));
      await Promise.all([requests.migrate(), ...many.map((s) => s.migrate())]);
      const versions = await adminQuery(
        url,
        `SELECT version FROM "${fresh}".airlock_token_migrations`,
      );
      expect(versions).toEqual([{ version: 1 }]);
      expect(await adminQuery(url, `SELECT version FROM "${fresh}".airlock_migrations`)).toEqual(
        POSTGRES_MIGRATIONS.map((m) => ({ version: m.version })),
      );
      expect(await requests.countPending()).toBe(0);
      expect(await many[0]?.list()).toEqual([]);

      // A token table migrated by a newer Airlock is refused, not misread.
      await adminQuery(url, `INSERT INTO "${fresh}".airlock_token_migrations VALUES (999, 0)`);
      await expect(open(fresh, url).migrate()).rejects.toThrow(
        /migration 999, newer than this Airlock/,
      );
    } finally {
      await requests.close();
      await dropSchema(url, fresh);
    }
  });

  it("shares tokens between stores on one database, and keeps no secret in it", async () => {
    const a = open(schema, url);
    const b = open(schema, url);
    const { token, record } = await createToken(a, { name: "bot", roles: ["agent"] });
    expect(await b.findByHash(hashToken(token))).toEqual(record);
    expect((await b.list()).map((t) => t.id)).toContain(record.id);

    expect((await b.revoke(record.id, 42))?.revokedAt).toBe(42);
    expect(await a.findByHash(hashToken(token))).toBeUndefined();
    expect((await a.list()).find((t) => t.id === record.id)?.revokedAt).toBe(42);

    const rows = await adminQuery(url, `SELECT * FROM "${schema}".airlock_tokens`);
    const dump = JSON.stringify(rows);
    expect(dump).toContain(hashToken(token));
    expect(dump).not.toContain(token.slice(4, 30));
  });

  it("keeps schemas apart", async () => {
    const other = freshSchema("airlock_tokens_o");
    contractSchemas.push(other);
    const here = open(schema, url);
    const there = open(other, url);
    const { token } = await createToken(here, { name: "alice", roles: ["reviewer"] });
    expect(await there.findByHash(hashToken(token))).toBeUndefined();
    expect(await there.list()).toEqual([]);
  });

  it("leaves a pool it was given open, ends its own, and closes idempotently", async () => {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const borrowed = postgresTokenStore(pool, { schema });
    await borrowed.list();
    await borrowed.close();
    await borrowed.close();
    expect((await pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await expect(borrowed.list()).rejects.toMatchObject({ code: "closed" });
    await expect(borrowed.migrate()).rejects.toMatchObject({ code: "closed" });
    await pool.end();

    const own = postgresTokenStore(url, { schema });
    await own.migrate();
    await own.close();
    await own.close();
    expect(own.pool.ended).toBe(true);
  });

  it("serves `airlock token` with --postgres or AIRLOCK_DATABASE_URL", async () => {
    const cliSchema = freshSchema("airlock_tokens_cli");
    contractSchemas.push(cliSchema);
    // In process: the backend the token commands use.
    const backend = await localBackend({}, { AIRLOCK_POSTGRES_SCHEMA: cliSchema }, url);
    const made = await backend.create({ name: "deploy-bot", roles: ["agent"] });
    await backend.close();
    const fromEnv = await localBackend(
      {},
      { AIRLOCK_DATABASE_URL: url, AIRLOCK_POSTGRES_SCHEMA: cliSchema },
    );
    expect((await fromEnv.list()).map((t) => t.id)).toEqual([made.record.id]);
    await fromEnv.close();

    // As a process: `--postgres` on the command line, then AIRLOCK_DATABASE_URL.
    const created = await cli(
      ["token", "create", "--role", "reviewer", "--name", "alice", "--postgres", url],
      {
        AIRLOCK_POSTGRES_SCHEMA: cliSchema,
      },
    );
    expect(created.code).toBe(0);
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^alk_/);
    const listed = await cli(["token", "list", "--json"], {
      AIRLOCK_DATABASE_URL: url,
      AIRLOCK_POSTGRES_SCHEMA: cliSchema,
    });
    expect(listed.code).toBe(0);
    const names = (JSON.parse(listed.stdout) as { name: string }[]).map((t) => t.name);
    expect(names).toEqual(["deploy-bot", "alice"]);
    const check = open(cliSchema, url);
    expect((await check.findByHash(hashToken(secret)))?.name).toBe("alice");
  });
});

function cli(args: string[], extra: NodeJS.ProcessEnv) {
  const clean = { ...process.env };
  for (const k of [
    "AIRLOCK_URL",
    "AIRLOCK_DATABASE_URL",
    "AIRLOCK_POSTGRES",
    "AIRLOCK_POSTGRES_SCHEMA",
    "AIRLOCK_DB",
  ]) {
    delete clean[k];
  }
  const child = spawn(process.execPath, [...airlockArgs(), ...args], {
    env: { ...clean, ...extra },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once("exit", (code) => resolve({ code, stdout, stderr })),
  );
}
