// /v1/tokens: API token management, for admins. A new token's secret is in the creation answer
// only; listings show ids, names, roles and groups, never secrets or hashes.
import { Hono } from "hono";
import { requireRole } from "../auth.js";
import { readJson } from "../body.js";
import type { RouteDeps, ServerEnv } from "../env.js";
import { tokenCreateBody } from "../schemas.js";
import { createToken, revokeToken, type TokenStore } from "../tokens.js";

export function tokenRoutes(deps: RouteDeps, tokens: TokenStore): Hono<ServerEnv> {
  const app = new Hono<ServerEnv>();
  app.use("*", requireRole("admin"));

  app.get("/", async (c) => c.json({ items: await tokens.list() }));

  app.post("/", async (c) => {
    const { data } = await readJson(c, tokenCreateBody);
    const { token, record } = await createToken(tokens, data);
    deps.logger.info(
      { token_id: record.id, name: record.name, roles: record.roles, by: c.var.principal.name },
      "API token created",
    );
    return c.json({ ...record, token }, 201);
  });

  app.delete("/:id", async (c) => {
    const record = await revokeToken(tokens, c.req.param("id"));
    // Streams and long-polls opened with it end now, not at the next periodic check.
    await deps.credentials.recheck();
    deps.logger.info(
      { token_id: record.id, name: record.name, by: c.var.principal.name },
      "API token revoked",
    );
    return c.json(record);
  });

  return app;
}
