// /v1/tokens: API token management, for admins. A new token's secret is in the creation answer
// only; listings show ids, names, roles and groups, never secrets or hashes.
import { Hono } from "hono";
import type { RouteDeps, ServerEnv } from "../env.js";
import { defineRoute, mount } from "../route.js";
import { tokenCreateBody } from "../schemas.js";
import { createToken, revokeToken, type TokenStore } from "../tokens.js";

const PREFIX = "/v1/tokens";

export const listTokensRoute = defineRoute({
  method: "get",
  path: PREFIX,
  summary: "List API tokens (admin); never their secrets",
  roles: ["admin"],
  responses: { 200: { description: "the tokens", schema: "TokenList" } },
  problems: [403],
});

export const createTokenRoute = defineRoute({
  method: "post",
  path: PREFIX,
  summary: "Create an API token (admin); its secret is in this answer only",
  roles: ["admin"],
  body: { schema: tokenCreateBody, component: "TokenInput", required: true },
  responses: { 201: { description: "the token with its secret", schema: "TokenCreated" } },
  problems: [400, 403, 413, 415, 422],
});

export const revokeTokenRoute = defineRoute({
  method: "delete",
  path: `${PREFIX}/{id}`,
  summary: "Revoke an API token (admin)",
  roles: ["admin"],
  responses: { 200: { description: "the revoked token", schema: "TokenRecord" } },
  problems: [403, 404],
});

export const TOKEN_ROUTES = [listTokensRoute, createTokenRoute, revokeTokenRoute];

export function tokenRoutes(deps: RouteDeps, tokens: TokenStore): Hono<ServerEnv> {
  const app = new Hono<ServerEnv>();

  mount(app, PREFIX, listTokensRoute, async (c) => c.json({ items: await tokens.list() }));

  mount(app, PREFIX, createTokenRoute, async (c, { body: data }) => {
    const { token, record } = await createToken(tokens, data);
    deps.logger.info(
      { token_id: record.id, name: record.name, roles: record.roles, by: c.var.principal.name },
      "API token created",
    );
    return c.json({ ...record, token }, 201);
  });

  mount(app, PREFIX, revokeTokenRoute, async (c) => {
    const record = await revokeToken(tokens, c.req.param("id") ?? "");
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
