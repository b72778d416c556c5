// GET /v1/audit (a request's events, or for admins the whole log), POST /v1/audit (an agent reports
// what it executed without a human, or its progress) and GET /v1/audit/verify.
import { Hono } from "hono";
import { ConflictError } from "../../core/errors.js";
import { loadVisible } from "../access.js";
import { requireRole } from "../auth.js";
import { parse, queryObject, readJson } from "../body.js";
import { hasRole, type RouteDeps, type ServerEnv } from "../env.js";
import { HttpProblem } from "../problem.js";
import { auditAppendBody, auditQuery } from "../schemas.js";

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

  app.post("/", requireRole("agent", "admin"), async (c) => {
    const p = c.var.principal;
    const { data } = await readJson(c, auditAppendBody);
    if (data.requestId !== undefined) {
      const request = await loadVisible(airlock, p, data.requestId);
      // "Executed without a human" belongs to an approved request only: reporting it on a rejected,
      // pending or cancelled one would put a false story in the audit log.
      if (data.type === "auto_executed" && request.status !== "approved") {
        throw new ConflictError(
          `${request.id} is ${request.status}, not approved: an auto_executed event cannot be recorded for it`,
          request,
        );
      }
    }
    // The actor is whoever holds the token; a name the agent gave itself is kept, but only as data.
    const extra =
      data.actor !== undefined && data.actor !== p.name ? { claimedActor: data.actor } : {};
    const event = await airlock.record({
      type: data.type,
      actor: p.name,
      ...(data.requestId === undefined ? {} : { requestId: data.requestId }),
      data: { ...data.data, ...extra },
    });
    return c.json(event, 201);
  });

  app.get("/verify", requireRole("admin"), async (c) => c.json(await airlock.verifyAudit()));

  return app;
}
