// POST /v1/decisions: many decisions in one call (bulk review). Each item is decided on its own,
// exactly as `POST /v1/requests/:id/decisions` would decide it (its own compare-and-set, its own
// audit event, the same identity checks), and answers with its own result: one failing item (decided
// by someone else first, the caller's own request, not visible) never stops the others.
import { Hono } from "hono";
import type { Logger } from "pino";
import { z } from "zod";
import { isAirlockError } from "../../core/errors.js";
import {
  type ApprovalRequest,
  approvalRequestSchema,
  type Channel,
  decisionInputSchema,
  decisionSchema,
  type Proof,
} from "../../core/schemas.js";
import type { Airlock } from "../../engine/engine.js";
import { actorFor, loadVisible } from "../access.js";
import type { Principal, RouteDeps, ServerEnv } from "../env.js";
import { checkEditedArgsSize, type ServerLimits } from "../limits.js";
import { HttpProblem, toProblem } from "../problem.js";
import { defineRoute, mount } from "../route.js";

/** The most decisions one call may carry; a longer list is refused whole (400), never cut short. */
export const MAX_DECISIONS = 200;

const PATH = "/v1/decisions";
const requestId = z.string().trim().min(1).max(200);

/** What may be decided per item: the fields of a single decision, less those the server sets from
 * the token (reviewer, groups) or itself (channel). */
const decisionFields = decisionInputSchema.pick({
  outcome: true,
  method: true,
  selected: true,
  editedArgs: true,
  response: true,
  comment: true,
  key: true,
  validForMs: true,
  viewDigest: true,
});

export const decisionItem = decisionFields.extend({ id: requestId }).strict();
export type DecisionItem = z.output<typeof decisionItem>;

/** `POST /v1/decisions`: either a list of decisions (`decisions`), or one decision shared by a list
 * of request ids (`ids` with `outcome` and an optional `comment`). */
export const decisionsBody = z
  .object({
    decisions: z
      .array(decisionItem)
      .min(1)
      .max(MAX_DECISIONS, `at most ${MAX_DECISIONS} decisions per call; send the rest in another`)
      .optional(),
    ids: z
      .array(requestId)
      .min(1)
      .max(MAX_DECISIONS, `at most ${MAX_DECISIONS} ids per call; send the rest in another`)
      .optional(),
    outcome: decisionFields.shape.outcome.optional(),
    comment: decisionFields.shape.comment,
  })
  .strict()
  .superRefine((b, ctx) => {
    const issue = (message: string, path: string) =>
      ctx.addIssue({ code: "custom", message, path: [path] });
    if ((b.decisions === undefined) === (b.ids === undefined)) {
      issue("send either `decisions` (a list) or `ids` with one `outcome`, not both", "decisions");
    } else if (b.ids !== undefined && b.outcome === undefined) {
      issue("`ids` needs an `outcome` (approved, rejected or revise) shared by all", "outcome");
    } else if (b.ids !== undefined && b.outcome === "responded") {
      issue(
        "a response answers one request: send `decisions`, each with its own `response`, not `ids`",
        "outcome",
      );
    } else if (b.decisions !== undefined && (b.outcome !== undefined || b.comment !== undefined)) {
      issue("with `decisions`, give `outcome` and `comment` inside each item", "outcome");
    }
    const ids = b.decisions?.map((d) => d.id) ?? b.ids ?? [];
    const seen = new Set<string>();
    for (const id of ids) {
      if (seen.has(id)) return issue(`\`${id}\` is listed twice; decide each request once`, "ids");
      seen.add(id);
    }
  });
export type DecisionsBody = z.output<typeof decisionsBody>;

const failure = z.object({
  id: z.string(),
  ok: z.literal(false),
  /** The status a single decision of this request would have been answered with. */
  status: z.number().int(),
  code: z.string(),
  detail: z.string(),
  field: z.string().optional(),
  /** For `conflict`: the decision that won (who decided first, and how). */
  decision: decisionSchema.optional(),
});
export const decisionResult = z.union([
  z.object({ id: z.string(), ok: z.literal(true), request: approvalRequestSchema }),
  failure,
]);
export type DecisionResult =
  | { id: string; ok: true; request: ApprovalRequest }
  | z.output<typeof failure>;

export const decisionResults = z.object({
  /** One per item, in the order sent. */
  results: z.array(decisionResult),
  /** How many items were recorded (`ok: true`), and how many were not. */
  decided: z.number().int(),
  failed: z.number().int(),
});

export const decisionsRoute = defineRoute({
  method: "post",
  path: PATH,
  summary: `Decide many requests in one call (reviewer, admin), at most ${MAX_DECISIONS}: each item is decided on its own, as by \`POST /v1/requests/{id}/decisions\` (its own compare-and-set and audit event), and gets its own result; an item someone else decided first fails with \`conflict\` and the winning \`decision\``,
  roles: ["reviewer", "admin"],
  body: { schema: decisionsBody, component: "DecisionsInput", required: true },
  responses: {
    200: { description: "a result per item, in the order sent", schema: "DecisionResults" },
  },
  problems: [400, 403, 413, 415],
});

export const DECISION_ROUTES = [decisionsRoute];

/** The items of a body, whichever form it took. */
export function itemsOf(body: DecisionsBody): DecisionItem[] {
  if (body.decisions) return body.decisions;
  const outcome = body.outcome ?? "approved"; // set: the schema requires it with `ids`
  return (body.ids ?? []).map((id) => ({
    id,
    outcome,
    ...(body.comment === undefined ? {} : { comment: body.comment }),
  }));
}

/** Decides each item in turn for `p`, with the same checks as a single decision (the engine's
 * `decideAs`); a refusal of a request it may not see reads as not found. `channel` is how the
 * decisions arrived and `proof` how the caller was authenticated. */
export async function decideEach(
  airlock: Airlock,
  p: Principal,
  items: readonly DecisionItem[],
  options: { channel: Channel; proof: Proof; logger: Logger; limits?: ServerLimits },
): Promise<DecisionResult[]> {
  const results: DecisionResult[] = [];
  for (const item of items) {
    const { id, ...fields } = item;
    try {
      if (options.limits && fields.editedArgs !== undefined) {
        checkEditedArgsSize(fields.editedArgs, options.limits);
      }
      // The engine asks core/authority.ts whether this actor may decide, per item.
      let request: ApprovalRequest;
      try {
        request = await airlock.decideAs(actorFor(p, options.proof, options.channel), id, fields);
      } catch (err) {
        await loadVisible(airlock, p, id);
        throw err;
      }
      results.push({ id, ok: true, request });
    } catch (err) {
      if (!isAirlockError(err) && !(err instanceof HttpProblem)) throw err;
      results.push(failureOf(id, err, options.logger));
    }
  }
  return results;
}

/** One item's failure as the problem a single decision would have answered, without the request
 * document (the caller asked to decide it, not to read it back). */
function failureOf(id: string, err: unknown, logger: Logger): DecisionResult {
  const { body } = toProblem(err, logger);
  return {
    id,
    ok: false,
    status: body.status,
    code: body.code,
    detail: body.detail,
    ...(body.field === undefined ? {} : { field: body.field }),
    ...(body.decision === undefined ? {} : { decision: body.decision }),
  };
}

export function decisionRoutes(deps: RouteDeps): Hono<ServerEnv> {
  const app = new Hono<ServerEnv>();
  mount(app, PATH, decisionsRoute, async (c, { body }) => {
    const results = await decideEach(deps.airlock, c.var.principal, itemsOf(body), {
      channel: "api",
      proof: "api_token",
      logger: deps.logger,
      limits: deps.limits,
    });
    const decided = results.filter((r) => r.ok).length;
    return c.json({ results, decided, failed: results.length - decided });
  });
  return app;
}
