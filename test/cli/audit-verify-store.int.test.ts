// `airlock audit verify` verifies the store it is pointed at (issue 32, item 2). It ignored
// --postgres / AIRLOCK_DATABASE_URL, created ./airlock.db (and a key beside it) in the working
// directory, and passed that empty log: `ok: true, count: 0`. Now it opens the store `airlock serve`
// would (the same flags, environment and audit key options), never creates one (a missing store is
// one line on stderr and exit 4), and fails on an empty log unless told --allow-empty. Each run is a
// real `airlock` process in a temporary working directory, which must stay empty.
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import pino from "pino";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/core/store.js";
import { createAirlock } from "../../src/engine/engine.js";
import { postgresStore } from "../../src/store/postgres.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import { adminQuery, describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";
import { childEnv, runAirlockIn } from "./airlock-child.js";

const KEY = "k".repeat(32);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function dir(): string {
  const t = tempDir("airlock-verify-store-");
  cleanups.push(t.cleanup);
  return t.dir;
}

/** Two requests (and one decision) through a real engine: a few audit events. */
async function fill(store: Store): Promise<void> {
  const engine = await createAirlock({ store, logger: pino({ level: "silent" }) });
  try {
    const first = await engine.request({ title: "Deploy", approvers: ["ops"] });
    await engine.request({ title: "Rotate keys" });
    await engine.decide(first.id, { outcome: "rejected", reviewer: "alice", groups: ["ops"] });
  } finally {
    await engine.close();
  }
}

/** One line on stderr, nothing on stdout. */
function oneLine(r: { stdout: string; stderr: string }): string {
  expect(r.stdout).toBe("");
  const lines = r.stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  return lines[0] as string;
}

describe("airlock audit verify on SQLite", () => {
  it("a missing --db file (or ./airlock.db) fails with one line, creating nothing", async () => {
    const cwd = dir();
    const elsewhere = dir();
    const missing = join(elsewhere, "nothing.db");
    const r = await runAirlockIn(["--db", missing, "audit", "verify"], childEnv(), cwd);
    expect(r.code).toBe(4);
    expect(oneLine(r)).toBe(
      `airlock: no SQLite database at ${missing}: \`airlock audit verify\` never creates one; point it at your database (--db FILE or AIRLOCK_DB; PostgreSQL: --postgres URL or AIRLOCK_DATABASE_URL, schema AIRLOCK_POSTGRES_SCHEMA)`,
    );
    expect(readdirSync(elsewhere)).toEqual([]);
    // No --db: ./airlock.db, which is not there either.
    const bare = await runAirlockIn(["audit", "verify", "--json"], childEnv(), cwd);
    expect(bare.code).toBe(4);
    expect(oneLine(bare)).toMatch(/^airlock: no SQLite database at airlock\.db: /);
    // Nor do the other commands that only read the local database.
    const others = [
      ["audit", "list"],
      ["metrics"],
      ["prune", "--before", "2020-01-01"],
      ["list"],
      ["show", "req_x"],
      ["decide", "req_x", "approve", "--as", "alice"],
      ["cancel", "req_x"],
    ];
    for (const args of others) {
      const other = await runAirlockIn(args, childEnv(), cwd);
      expect(other.code, args.join(" ")).toBe(4);
      expect(oneLine(other)).toMatch(/^airlock: no SQLite database at airlock\.db: /);
    }
    expect(readdirSync(cwd)).toEqual([]);
  });

  it("a file holding no Airlock database fails with one line and is left as it was", async () => {
    const cwd = dir();
    const empty = join(cwd, "empty.db");
    writeFileSync(empty, "");
    const r = await runAirlockIn(["--db", empty, "audit", "verify"], childEnv(), cwd);
    expect(r.code).toBe(4);
    expect(oneLine(r)).toMatch(/^airlock: .*empty\.db holds no Airlock database: /);
    expect(readdirSync(cwd)).toEqual(["empty.db"]);
  });

  it("a file at an older schema version is refused, not migrated", async () => {
    const cwd = dir();
    const db = join(dir(), "airlock.db");
    const store = sqliteStore(db);
    await store.migrate();
    await store.close();
    const raw = new Database(db);
    const latest = (
      raw.prepare("SELECT MAX(version) AS v FROM airlock_migrations").get() as {
        v: number;
      }
    ).v;
    raw.prepare("DELETE FROM airlock_migrations WHERE version = ?").run(latest);
    raw.close();
    const r = await runAirlockIn(["--db", db, "audit", "verify"], childEnv(), cwd);
    expect(r.code).toBe(4);
    expect(oneLine(r)).toBe(
      `airlock: the SQLite database at ${db} is at schema version ${latest - 1}, older than this Airlock's (${latest}): \`airlock audit verify\` does not upgrade it; start \`airlock serve\` on it once (that upgrades it), then run this again`,
    );
    const after = new Database(db, { readonly: true });
    expect(after.prepare("SELECT MAX(version) AS v FROM airlock_migrations").get()).toEqual({
      v: latest - 1,
    });
    after.close();
  });

  it("counts the events of an intact log, fails on an edited row, and on an empty log unless --allow-empty", async () => {
    const cwd = dir();
    const db = join(dir(), "airlock.db");
    // Made without a key: a keyed new file starts its log with the record that checkpoints are
    // written, so only an unkeyed one is empty.
    const store = sqliteStore(db);
    await store.migrate();
    await store.close();
    const empty = await runAirlockIn(["--db", db, "audit", "verify"], childEnv(), cwd);
    expect(empty.code).toBe(1);
    expect(oneLine(empty)).toBe(
      `airlock: the audit log of the SQLite database at ${db} is empty: nothing was verified (pass --allow-empty if an empty log is expected)`,
    );
    const allowed = await runAirlockIn(
      ["--db", db, "audit", "verify", "--allow-empty"],
      childEnv(),
      cwd,
    );
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toBe("audit chain intact: 0 events\n");
    expect(allowed.stderr).toMatch(/^airlock: warning: the audit chain is not keyed/);

    await fill(sqliteStore(db));
    const count = sqliteAuditCount(db);
    expect(count).toBeGreaterThan(2);
    const intact = await runAirlockIn(["--db", db, "audit", "verify"], childEnv(), cwd);
    expect(intact.stdout).toBe(`audit chain intact: ${count} events\n`);
    expect(intact.code).toBe(0);

    const raw = new Database(db);
    raw.prepare("UPDATE audit SET data = replace(data, 'Deploy', 'Deplox') WHERE seq = 1").run();
    raw.close();
    const broken = await runAirlockIn(["--db", db, "audit", "verify"], childEnv(), cwd);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/^audit chain broken at event #1: /);
    expect(readdirSync(cwd)).toEqual([]);
  });
});

function sqliteAuditCount(db: string): number {
  const raw = new Database(db, { readonly: true });
  try {
    return (raw.prepare("SELECT COUNT(*) AS n FROM audit").get() as { n: number }).n;
  } finally {
    raw.close();
  }
}

await describePg("airlock audit verify on PostgreSQL", ({ url }) => {
  const schemas: string[] = [];
  const schema = () => {
    const s = freshSchema("airlock_verify_cli");
    schemas.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of schemas) await dropSchema(url, s);
  });

  const auditCount = async (s: string) =>
    Number((await adminQuery<{ n: string }>(url, `SELECT count(*) AS n FROM "${s}".audit`))[0]?.n);

  it("verifies the schema it is pointed at (--postgres and AIRLOCK_DATABASE_URL), and fails on an edited row", async () => {
    const s = schema();
    await fill(postgresStore(url, { schema: s, auditKey: KEY, max: 2 }));
    const count = await auditCount(s);
    expect(count).toBeGreaterThan(2);
    const cwd = dir();
    const env = childEnv({ AIRLOCK_POSTGRES_SCHEMA: s, AIRLOCK_AUDIT_KEY: KEY });

    // As the issue ran it: the database in the environment only. (It opened ./airlock.db instead.)
    const plain = await runAirlockIn(
      ["audit", "verify"],
      { ...env, AIRLOCK_DATABASE_URL: url },
      cwd,
    );
    expect(readdirSync(cwd)).toEqual([]);
    expect(plain.stdout).toBe(`audit chain intact: ${count} events\n`);
    expect(plain.code).toBe(0);

    const byFlag = await runAirlockIn(["audit", "verify", "--postgres", url], env, cwd);
    expect(byFlag.stderr).toBe("");
    expect(byFlag.stdout).toBe(`audit chain intact: ${count} events\n`);
    expect(byFlag.code).toBe(0);

    // The key from a file (--audit-key-file) and the database from the environment, as serve takes them.
    const keyFile = join(dir(), "audit-key");
    writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
    const byEnv = await runAirlockIn(
      ["audit", "verify", "--json", "--audit-key-file", keyFile],
      childEnv({ AIRLOCK_POSTGRES_SCHEMA: s, AIRLOCK_DATABASE_URL: url }),
      cwd,
    );
    expect(byEnv.code).toBe(0);
    expect(JSON.parse(byEnv.stdout)).toMatchObject({ ok: true, count, keyed: true });

    // Without its key a keyed chain is not "verified": one line saying so.
    const keyless = await runAirlockIn(
      ["audit", "verify"],
      childEnv({ AIRLOCK_POSTGRES_SCHEMA: s, AIRLOCK_DATABASE_URL: url }),
      cwd,
    );
    expect(keyless.code).not.toBe(0);
    expect(oneLine(keyless)).toMatch(/the audit chain is keyed/);

    await adminQuery(
      url,
      `UPDATE "${s}".audit SET data = replace(data, 'Deploy', 'Deplox') WHERE seq = 1`,
    );
    const broken = await runAirlockIn(["audit", "verify", "--postgres", url], env, cwd);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/^audit chain broken at event #1: /);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it("an empty log fails unless --allow-empty; a schema without Airlock's tables fails and is not created", async () => {
    const s = schema();
    const store = postgresStore(url, { schema: s, auditKey: KEY, max: 1 });
    await store.migrate();
    await store.close();
    const cwd = dir();
    const env = childEnv({ AIRLOCK_POSTGRES_SCHEMA: s, AIRLOCK_AUDIT_KEY: KEY });
    const empty = await runAirlockIn(["audit", "verify", "--postgres", url], env, cwd);
    expect(empty.code).toBe(1);
    expect(oneLine(empty)).toMatch(
      new RegExp(
        `^airlock: the audit log of PostgreSQL schema ${s} at .* is empty: nothing was verified \\(pass --allow-empty`,
      ),
    );
    const allowed = await runAirlockIn(
      ["audit", "verify", "--postgres", url, "--allow-empty"],
      env,
      cwd,
    );
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toBe("audit chain intact: 0 events\n");

    const never = freshSchema("airlock_verify_none");
    schemas.push(never);
    const missing = await runAirlockIn(
      ["audit", "verify"],
      childEnv({
        AIRLOCK_POSTGRES_SCHEMA: never,
        AIRLOCK_DATABASE_URL: url,
        AIRLOCK_AUDIT_KEY: KEY,
      }),
      cwd,
    );
    expect(missing.code).toBe(4);
    expect(oneLine(missing)).toMatch(
      new RegExp(`^airlock: no Airlock database in PostgreSQL schema ${never} at `),
    );
    expect(await adminQuery(url, "SELECT 1 FROM pg_namespace WHERE nspname = $1", [never])).toEqual(
      [],
    );
    expect(readdirSync(cwd)).toEqual([]);
  });
});
