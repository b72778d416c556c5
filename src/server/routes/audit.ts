// GET /v1/audit (a request's events, or for admins the whole log), POST /v1/audit (an agent reports
// what it executed without a human, or its progress) and GET /v1/audit/verify.
import { Hono } from "hono";
import { auditKeying } from "../../audit/unkeyed.js";
import { ConflictError } from "../../core/errors.js";
import { loadVisible } from "../access.js";
import { hasRole, type RouteDeps, type ServerEnv } from "../env.js";
import { HttpProblem } from "../problem.js";
import { defineRoute, mount } from "../route.js";
import { auditAppendBody, auditQuery } from "../schemas.js";

const DEFAULT_LIMIT = 1000;
const PREFIX = "/v1/audit";

export const readAuditRoute = defineRoute({
  method: "get",
  path: PREFIX,
  summary: "Audit events of one request, or (admins) of all",
  query: auditQuery,
  responses: { 200: { description: "a page of events", schema: "AuditPage" } },
  problems: [400, 403, 404],
});

export const appendAuditRoute = defineRoute({
  method: "post",
  path: PREFIX,
  summary:
    "Append an auto_executed or notified event (agent, admin); the actor is the token's principal",
  roles: ["agent", "admin"],
  body: { schema: auditAppendBody, component: "AuditInput", required: true },
  responses: { 201: { description: "the event as chained", schema: "AuditEvent" } },
  problems: [400, 403, 404, 409, 413, 415],
});

export const verifyAuditRoute = defineRoute({
  method: "get",
  path: `${PREFIX}/verify`,
  summary:
    "Verify the hash chain (admin); an intact chain answers `keyed`, with a `warning` when it is not keyed (a plain SHA-256 chain, which whoever can write to the database can rewrite)",
  roles: ["admin"],
  responses: { 200: { description: "the result", schema: "VerifyResult" } },
  problems: [403],
});

export const AUDIT_ROUTES = [readAuditRoute, appendAuditRoute, verifyAuditRoute];

/** `keyed`: whether the store keys the audit chain (the server's `auditKeyed`); unknown, a
 * verification infers it from the chain it checked. */
export function auditRoutes(deps: RouteDeps, keyed?: boolean): Hono<ServerEnv> {
  const { airlock } = deps;
  const app = new Hono<ServerEnv>();

  mount(app, PREFIX, readAuditRoute, async (c, { query: q }) => {
    const p = c.var.principal;
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

  mount(app, PREFIX, appendAuditRoute, async (c, { body: data }) => {
    const p = c.var.principal;
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

  // An unkeyed chain verifies "ok" whatever a database writer did to it: the answer says so.
  mount(app, PREFIX, verifyAuditRoute, async (c) => {
    const result = await airlock.verifyAudit();
    if (!result.ok) return c.json(result);
    return c.json({ ...result, ...auditKeying(keyed ?? result.keyedFrom !== undefined) });
  });

  return app;
}
