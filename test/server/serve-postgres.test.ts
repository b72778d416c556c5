// `airlock serve --postgres`: the same server on the PostgreSQL store (skipped, saying why, when no
// PostgreSQL is reachable; see test/postgres/pg-env.ts).
import { join } from "node:path";
import pino from "pino";
import { afterAll, expect, it } from "vitest";
import { startServe } from "../../src/cli/serve.js";
import { tempDir } from "../helpers.js";
import { adminQuery, describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";
import { call } from "./helpers.js";

await describePg("airlock serve --postgres", ({ url }) => {
  const schema = freshSchema("airlock_serve");
  const t = tempDir("airlock-serve-pg-");
  afterAll(async () => {
    await dropSchema(url, schema);
    t.cleanup();
  });

  it("serves from PostgreSQL, with tokens in the local file", async () => {
    const printed: string[] = [];
    const serving = await startServe({
      postgres: url,
      postgresSchema: schema,
      db: join(t.dir, "tokens.db"),
      port: 0,
      env: {},
      logger: pino({ level: "silent" }),
      print: (line) => printed.push(line),
    });
    try {
      const admin = serving.adminToken as string;
      expect(admin).toMatch(/^alk_/);
      expect(printed.join("\n")).toContain(admin);
      const created = await call(serving.url, admin, "POST", "/v1/requests", {
        title: "In PostgreSQL",
      });
      expect(created.status).toBe(201);
      const rows = await adminQuery<{ n: string }>(
        url,
        `SELECT count(*) AS n FROM "${schema}".requests WHERE id = $1`,
        [created.body.id],
      );
      expect(Number(rows[0]?.n)).toBe(1);
      const waited = await call(
        serving.url,
        admin,
        "GET",
        `/v1/requests/${created.body.id}/wait?timeout=0.1`,
      );
      expect(waited.body.status).toBe("pending");
    } finally {
      await serving.close();
    }
  });
});
