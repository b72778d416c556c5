// Finds the test PostgreSQL (AIRLOCK_TEST_PG_URL, else loopback as postgres or root, trust auth) and
// gives each test file its own schema. Without a reachable database the PostgreSQL suites skip with
// the reason in their title and on stderr, unless AIRLOCK_REQUIRE_PG=1: then they fail.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe, it } from "vitest";

export interface PgEnv {
  url: string;
}

const CANDIDATES = [
  "postgres://postgres@127.0.0.1:5432/test",
  "postgres://root@127.0.0.1:5432/test",
];

let probed: Promise<PgEnv | { reason: string }> | undefined;

/** The first URL that answers `SELECT 1`, or why none did. */
export function probePg(): Promise<PgEnv | { reason: string }> {
  probed ??= (async () => {
    const fromEnv = process.env.AIRLOCK_TEST_PG_URL;
    const urls = fromEnv ? [fromEnv] : CANDIDATES;
    const failures: string[] = [];
    for (const url of urls) {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
      client.on("error", () => {});
      try {
        await client.connect();
        await client.query("SELECT 1");
        return { url };
      } catch (err) {
        failures.push(`${url}: ${err instanceof Error ? err.message || err.name : String(err)}`);
      } finally {
        await client.end().catch(() => {});
      }
    }
    return { reason: `no PostgreSQL reachable (${failures.join("; ")})` };
  })();
  return probed;
}

/** A random schema name for one test file (or one test). */
export function freshSchema(prefix = "airlock_test"): string {
  return `${prefix}_${randomBytes(6).toString("hex")}`;
}

/** Runs one statement on a short-lived connection (setup, inspection, fault injection). */
export async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on("error", () => {});
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  await adminQuery(url, `DROP SCHEMA IF EXISTS "${schema.replace(/"/g, '""')}" CASCADE`);
}

/** `describe` when PostgreSQL is reachable; otherwise a skipped suite saying why, or a failing
 * test when AIRLOCK_REQUIRE_PG=1. `body` receives the database to use. */
export async function describePg(name: string, body: (env: PgEnv) => void): Promise<void> {
  const env = await probePg();
  if ("url" in env) {
    describe(name, () => body(env));
    return;
  }
  if (process.env.AIRLOCK_REQUIRE_PG === "1") {
    describe(name, () => {
      it("needs PostgreSQL (AIRLOCK_REQUIRE_PG=1)", () => {
        throw new Error(`AIRLOCK_REQUIRE_PG=1 but ${env.reason}`);
      });
    });
    return;
  }
  process.stderr.write(`[airlock] skipping "${name}": ${env.reason}\n`);
  describe.skip(`${name} (skipped: ${env.reason}; set AIRLOCK_TEST_PG_URL)`, () => {
    it("needs PostgreSQL", () => {});
  });
}
