// /v1/requests/{id}/execution: what became of an approved action (core/execution.ts). The process
// that runs it (its requester's token, or an admin's) claims it under a lease, renews the lease
// while it runs, and reports the outcome after the action returned or threw. A person who may decide
// the request settles an execution that is not known to have run (retry, done, abandon): who may is
// authority's rule, asked inside the engine's compare-and-set.
import { type Context, Hono } from "hono";
import { sameIdentity } from "../../core/identity.js";
import type { ApprovalRequest } from "../../core/schemas.js";
import { actorFor, loadVisible } from "../access.js";
import { hasRole, type Principal, type RouteDeps, type ServerEnv } from "../env.js";
import { HttpProblem } from "../problem.js";
import { defineRoute, mount } from "../route.js";
import { claimBody, outcomeBody, renewBody, resolutionBody } from "../schemas.js";

const PREFIX = "/v1/requests";
const PATH = `${PREFIX}/{id}/execution`;
const theRequest = { description: "the request, with its `execution`", schema: "ApprovalRequest" };

export const executionRoute = defineRoute({
  method: "post",
  path: PATH,
  summary:
    "Claim an approved request for execution, once, under a lease (its requester, admin); a second claim is a 409. Report the outcome afterwards",
  body: { schema: claimBody, component: "ExecutionClaim", required: false },
  responses: { 200: theRequest },
  problems: [400, 403, 404, 409, 413, 415, 422],
});

export const renewExecutionRoute = defineRoute({
  method: "post",
  path: `${PATH}/renewal`,
  summary: "Extend the lease of a claim whose action still runs (its requester, admin)",
  body: { schema: renewBody, component: "ExecutionRenewal", required: true },
  responses: { 200: theRequest },
  problems: [400, 403, 404, 409, 413, 415, 422],
});

export const outcomeRoute = defineRoute({
  method: "post",
  path: `${PATH}/outcome`,
  summary:
    "Report what the claimed action did, after it ran: `executed` (with a digest of its result) or `execution_failed` (with its error) in the audit log (its requester, admin)",
  body: { schema: outcomeBody, component: "ExecutionOutcome", required: true },
  responses: { 200: theRequest },
  problems: [400, 403, 404, 409, 413, 415, 422],
});

export const resolutionRoute = defineRoute({
  method: "post",
  path: `${PATH}/resolution`,
  summary:
    "Settle an execution that is not known to have run, or that failed (reviewer, admin: those who may decide the request): `retry` lets the next claim run it, `done` records that it happened, `abandon` gives it up",
  roles: ["reviewer", "admin"],
  body: { schema: resolutionBody, component: "ExecutionResolution", required: true },
  responses: { 200: theRequest },
  problems: [400, 403, 404, 409, 413, 415, 422],
});

export const EXECUTION_ROUTES = [
  executionRoute,
  renewExecutionRoute,
  outcomeRoute,
  resolutionRoute,
];

export function executionRoutes(deps: RouteDeps): Hono<ServerEnv> {
  const { airlock } = deps;
  const app = new Hono<ServerEnv>();
  const id = (c: Context<ServerEnv>) => c.req.param("id") ?? "";

  /** The runner's side (claim, renew, outcome): the request's requester or an admin. */
  async function asRunner(c: Context<ServerEnv>): Promise<{ p: Principal; r: ApprovalRequest }> {
    const p = c.var.principal;
    const r = await loadVisible(airlock, p, id(c));
    if (!hasRole(p, "admin") && !sameIdentity(r.requester, p.name)) {
      throw new HttpProblem(
        403,
        "forbidden",
        `${p.name} did not create ${r.id} and may not execute it`,
      );
    }
    return { p, r };
  }

  mount(app, PREFIX, executionRoute, async (c, { body }) => {
    const { p, r } = await asRunner(c);
    return c.json(
      await airlock.claimExecution(r.id, {
        by: p.name,
        ...(body?.leaseMs === undefined ? {} : { leaseMs: body.leaseMs }),
      }),
    );
  });

  mount(app, PREFIX, renewExecutionRoute, async (c, { body }) => {
    const { r } = await asRunner(c);
    return c.json(await airlock.renewExecution(r.id, body));
  });

  mount(app, PREFIX, outcomeRoute, async (c, { body }) => {
    const { p, r } = await asRunner(c);
    return c.json(await airlock.finishExecution(r.id, body, { by: p.name }));
  });

  mount(app, PREFIX, resolutionRoute, async (c, { body }) => {
    const p = c.var.principal;
    const r = await loadVisible(airlock, p, id(c));
    const actor = actorFor(p, "api_token", "api");
    return c.json(await airlock.resolveExecution(actor, r.id, body));
  });

  return app;
}
