// GET /v1/requests/{id}/view: the review view of a request (core/review-view.ts) and its digest. A
// surface shows the view and sends the digest back with the decision (`viewDigest`); a decision on a
// view that changed since is refused with 409 `view_changed`.
import { Hono } from "hono";
import { z } from "zod";
import { reviewViewOf, viewDigestOf } from "../../core/review-view.js";
import { loadVisible } from "../access.js";
import type { RouteDeps, ServerEnv } from "../env.js";
import { defineRoute, mount } from "../route.js";

const PREFIX = "/v1/requests";

/** The view, as the API documents it (the core's type, loosely: its fields are the request's). */
export const reviewViewBody = z.object({
  view: z.object({
    id: z.string(),
    title: z.string(),
    action: z.string(),
    risk: z.string().optional(),
    confidence: z.number().optional(),
    level: z.string(),
    requester: z.string(),
    approvers: z.array(z.string()),
    quorum: z.number(),
    agentSummary: z.string().optional(),
    args: z.record(z.string(), z.unknown()),
    argsHash: z.string(),
    preview: z.string().optional(),
    items: z.array(z.object({ id: z.string(), label: z.string(), detail: z.string().optional() })),
    allowed: z.array(z.string()),
    /** The JSON Schema of a response, when the request allows `respond` and describes one. */
    responseSchema: z.record(z.string(), z.unknown()).optional(),
    revisionOf: z.string().optional(),
    question: z.string().optional(),
    command: z.string().optional(),
  }),
  viewDigest: z.string(),
});

export const viewRoute = defineRoute({
  method: "get",
  path: `${PREFIX}/{id}/view`,
  summary:
    "The review view of a request (what a reviewer is shown: the agent's summary labelled as its words, the exact args, preview, items) and its `viewDigest`; send the digest with a decision to bind it to what was shown",
  responses: { 200: { description: "the view and its digest", schema: "ReviewView" } },
  problems: [404],
});

export const VIEW_ROUTES = [viewRoute];

export function viewRoutes(deps: RouteDeps): Hono<ServerEnv> {
  const app = new Hono<ServerEnv>();
  mount(app, PREFIX, viewRoute, async (c) => {
    const r = await loadVisible(deps.airlock, c.var.principal, c.req.param("id") ?? "");
    return c.json({ view: reviewViewOf(r), viewDigest: viewDigestOf(r) });
  });
  return app;
}
