// `airlock serve --postgres`: the same server on the PostgreSQL store, API tokens included, so several
// servers on one database share them (skipped, saying why, when no PostgreSQL is reachable; see
// test/postgres/pg-env.ts).
import { existsSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { afterAll, expect, it } from "vitest";
import { type ServeOptions, startServe } from "../../src/cli/serve.js";
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

  const options = (print: (line: string) => void): ServeOptions => ({
    postgres: url,
    postgresSchema: schema,
    db: join(t.dir, "airlock.db"),
    port: 0,
    // PostgreSQL refuses to serve without an audit key (or --unkeyed-audit).
    env: { AIRLOCK_AUDIT_KEY: "k".repeat(32) },
    logger: pino({ level: "silent" }),
    print,
  });

  it("serves from PostgreSQL, with the tokens there too and no local file", async () => {
    const printed: string[] = [];
    const warnings: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void warnings.push(line) });
    const serving = await startServe({ ...options((line) => printed.push(line)), logger });
    try {
      const admin = serving.adminToken as string;
      expect(admin).toMatch(/^alk_/);
      expect(printed.join("\n")).toContain(admin);
      expect(warnings.join("")).not.toMatch(/token/i);
      expect(existsSync(join(t.dir, "airlock.db"))).toBe(false);
      const tokenRows = await adminQuery<{ name: string; roles: string[] }>(
        url,
        `SELECT name, roles FROM "${schema}".airlock_tokens WHERE revoked_at IS NULL`,
      );
      expect(tokenRows).toEqual([{ name: "admin", roles: ["admin"] }]);
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

  it("shares API tokens between two servers on one database", async () => {
    const printed: string[] = [];
    // The first test's server made the admin token: neither of these makes another.
    const [one, two] = await Promise.all([
      startServe(options((line) => printed.push(line))),
      startServe(options((line) => printed.push(line))),
    ]);
    try {
      expect(one.adminToken).toBeUndefined();
      expect(two.adminToken).toBeUndefined();
      expect(printed.join("\n")).not.toMatch(/alk_/);
      // An admin from the environment, as automation would start them.
      const secret = "a-shared-admin-token-for-tests";
      await one.close();
      const three = await startServe({
        ...options(() => {}),
        env: { ...options(() => {}).env, AIRLOCK_ADMIN_TOKEN: secret },
      });
      try {
        const created = await call(three.url, secret, "POST", "/v1/tokens", {
          name: "deploy-bot",
          roles: ["agent"],
        });
        expect(created.status).toBe(201);
        const agent = created.body.token as string;
        // Made through the third server, accepted by the second.
        const made = await call(two.url, agent, "POST", "/v1/requests", { title: "Shared token" });
        expect(made.status).toBe(201);
        expect(made.body.requester).toBe("deploy-bot");
        // Revoked through the second, refused by the third.
        const revoked = await call(two.url, secret, "DELETE", `/v1/tokens/${created.body.id}`);
        expect(revoked.status).toBe(200);
        const refused = await call(three.url, agent, "GET", `/v1/requests/${made.body.id}`);
        expect(refused.status).toBe(401);
      } finally {
        await three.close();
      }
    } finally {
      await one.close();
      await two.close();
    }
  });
});
