// /v1/trust: learned trust (src/policy/learned-trust.ts). Admins see the calls people keep approving
// (suggestions, with the requests each would have covered), accept one as a rule, and revoke rules;
// reviewers and admins list the rules. Accepting takes only a current suggestion: a rule cannot be
// made up for a call people have not approved many times in a row, and it approves no more than
// those approvals earned (its scope) unless the admin widens it explicitly in the same request.
import { Hono } from "hono";
import { z } from "zod";
import { ConflictError, NotFoundError } from "../../core/errors.js";
import { trustScopeSchema } from "../../core/trust-rule.js";
import type { LearnedTrust } from "../../policy/learned-trust.js";
import type { RouteDeps, ServerEnv } from "../env.js";
import { defineRoute, mount } from "../route.js";

const PREFIX = "/v1/trust";

const trustRule = z.object({
  id: z.string(),
  action: z.string(),
  shapeHash: z.string(),
  shape: z.string(),
  approvals: z.number().int(),
  /** What it approves: the requesters, reviewers, risk, quorum, approvers and values that earned
   * it (absent on a rule accepted before scopes existed, which approves nothing). */
  scope: trustScopeSchema.optional(),
  createdBy: z.string(),
  createdAt: z.number(),
  revokedBy: z.string().optional(),
  revokedAt: z.number().optional(),
});

export const trustRuleList = z.object({ items: z.array(trustRule) });
export const trustRuleSchema = trustRule;

export const trustSuggestionList = z.object({
  /** Approvals in a row a suggestion needs on this server (0: suggestions are off). */
  threshold: z.number().int(),
  items: z.array(
    z.object({
      action: z.string(),
      shape: z.string(),
      shapeHash: z.string(),
      streak: z.number().int(),
      /** What the approvals earned; `reviewers` are the distinct people behind the run. */
      scope: trustScopeSchema,
      examples: z.array(
        z.object({
          id: z.string(),
          title: z.string(),
          reviewer: z.string(),
          decidedAt: z.number(),
        }),
      ),
    }),
  ),
});

export const trustAcceptBody = z
  .object({
    action: z.string().min(1).max(200),
    shapeHash: z.string().regex(/^[0-9a-f]{64}$/, "a SHA-256 in lower-case hex (64 characters)"),
    /** Beyond what the approvals earned, audited with the acceptance: every requester's calls
     * (`anyRequester`), and fields approved whatever their value (`anyValue`: paths of the
     * suggestion's `scope.values`). */
    widen: z
      .object({
        anyRequester: z.boolean().optional(),
        anyValue: z.array(z.string().min(1).max(2000)).max(1000).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

const rulesQuery = z.object({
  /** `true`: revoked rules too. */
  includeRevoked: z.enum(["true", "false"]).optional(),
});

export const trustSuggestionsRoute = defineRoute({
  method: "get",
  path: `${PREFIX}/suggestions`,
  summary:
    "Calls (action and args shape) people approved many times in a row, each a rule an admin may accept, with the requests it would have covered (admin)",
  roles: ["admin"],
  responses: { 200: { description: "the suggestions", schema: "TrustSuggestionList" } },
  problems: [403],
});

export const listTrustRulesRoute = defineRoute({
  method: "get",
  path: `${PREFIX}/rules`,
  summary: "Learned trust rules: the calls approved without asking (reviewer or admin)",
  roles: ["reviewer", "admin"],
  query: rulesQuery,
  responses: { 200: { description: "the rules, oldest first", schema: "TrustRuleList" } },
  problems: [400, 403],
});

export const acceptTrustRuleRoute = defineRoute({
  method: "post",
  path: `${PREFIX}/rules`,
  summary:
    "Accept a current suggestion as a rule (admin): calls of that action with that args shape, within the scope its approvals earned (requesters, risk, quorum, approvers, values) or as `widen` widens it, are approved without asking, each naming the rule; 409 when it is not a current suggestion, 422 when a field varies too much and is not widened",
  roles: ["admin"],
  body: { schema: trustAcceptBody, component: "TrustRuleInput", required: true },
  responses: { 201: { description: "the rule", schema: "TrustRule" } },
  problems: [400, 403, 409, 413, 415, 422],
});

export const revokeTrustRuleRoute = defineRoute({
  method: "delete",
  path: `${PREFIX}/rules/{id}`,
  summary: "Revoke a learned trust rule (admin): its calls wait for a person again",
  roles: ["admin"],
  responses: { 200: { description: "the revoked rule", schema: "TrustRule" } },
  problems: [403, 404, 409],
});

export const TRUST_ROUTES = [
  trustSuggestionsRoute,
  listTrustRulesRoute,
  acceptTrustRuleRoute,
  revokeTrustRuleRoute,
];

/** The routes; without `trust` (a server not given one) there are no suggestions nor rules, and
 * accepting is refused. */
export function trustRoutes(deps: RouteDeps, trust: LearnedTrust | undefined): Hono<ServerEnv> {
  const app = new Hono<ServerEnv>();

  mount(app, PREFIX, trustSuggestionsRoute, async (c) => {
    const items = trust ? await trust.suggestions() : [];
    return c.json({ threshold: trust?.threshold ?? 0, items });
  });

  mount(app, PREFIX, listTrustRulesRoute, async (c, { query }) => {
    const includeRevoked = query.includeRevoked === "true";
    return c.json({ items: trust ? await trust.rules({ includeRevoked }) : [] });
  });

  mount(app, PREFIX, acceptTrustRuleRoute, async (c, { body }) => {
    if (!trust) {
      throw new ConflictError("learned trust is not enabled on this server");
    }
    const by = c.var.principal.name;
    const rule = await trust.accept(body, by);
    deps.logger.info(
      {
        rule_id: rule.id,
        action: rule.action,
        approvals: rule.approvals,
        by,
        ...(body.widen ? { widened: body.widen } : {}),
      },
      "learned trust rule accepted",
    );
    return c.json(rule, 201);
  });

  mount(app, PREFIX, revokeTrustRuleRoute, async (c) => {
    const id = c.req.param("id") ?? "";
    if (!trust) throw new NotFoundError("trust rule", id);
    const by = c.var.principal.name;
    const rule = await trust.revoke(id, by);
    deps.logger.info({ rule_id: rule.id, action: rule.action, by }, "learned trust rule revoked");
    return c.json(rule);
  });

  return app;
}
