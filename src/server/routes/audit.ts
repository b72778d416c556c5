// GET /v1/audit (a request's events, or for admins the whole log) and GET /v1/audit/verify.
import { Hono } from "hono";
import { loadVisible } from "../access.js";
import { requireRole } from "../auth.js";
import { parse, queryObject } from "../body.js";
import { hasRole, type RouteDeps, type ServerEnv } from "../env.js";
import { HttpProblem } from "../problem.js";
import { auditQuery } from "../schemas.js";

const DEFAULT_LIMIT = 1000;

export function auditRoutes(deps: RouteDeps): Hono<ServerEnv> {
  const { airlock } = deps;
  const app = new Hono<ServerEnv>();

  app.get("/", async (c) => {
    const p = c.var.principal;
    const q = parse(auditQuery, queryObject(c), "query");
    if (!hasRole(p, "admin")) {
      if (q.requestId === undefined) {
        throw new HttpProblem(
          403,
          "forbidden",
          "only admins read the whole audit log; name a request with `requestId`",
        );
      }
      await loadVisible(airlock, p, q.requestId);
    }
    const limit = q.limit ?? DEFAULT_LIMIT;
    const items = await airlock.audit({
      limit,
      ...(q.requestId === undefined ? {} : { requestId: q.requestId }),
      ...(q.after === undefined ? {} : { after: q.after }),
    });
    const last = items[items.length - 1];
    return c.json(items.length === limit && last ? { items, nextAfter: last.seq } : { items });
  });

  app.get("/verify", requireRole("admin"), async (c) => c.json(await airlock.verifyAudit()));

  return app;
}
