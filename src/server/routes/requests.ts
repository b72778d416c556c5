// /v1/requests: create (idempotent by key), list, read, long-poll wait, decide, cancel. What became
// of an approved action (claim, outcome, a person's resolution) is in execution.ts.
import { type Context, Hono } from "hono";
import { withoutIdentity } from "../../core/authority.js";
import { ConflictError, isAirlockError, type QuotaExceededError } from "../../core/errors.js";
import { sameIdentity } from "../../core/identity.js";
import type { ApprovalRequest, OnTimeout } from "../../core/schemas.js";
import type { ListFilter } from "../../core/store.js";
import { actorFor, assertMayCancel, canSee, loadVisible, scopeList } from "../access.js";
import { hasRole, type Principal, type RouteDeps, type ServerEnv } from "../env.js";
import {
  checkDocumentSizes,
  checkEditedArgsSize,
  pendingQuotaOf,
  quotaProblem,
} from "../limits.js";
import { HttpProblem } from "../problem.js";
import { defineRoute, mount } from "../route.js";
import { cancelBody, createRequestBody, decisionBody, listQuery, waitQuery } from "../schemas.js";

/** Seconds a long-poll waits when the caller names no timeout. */
const DEFAULT_WAIT_SECONDS = 30;
/** The most requests one page of `GET /v1/requests` holds (a larger `limit` is lowered to it). */
export const MAX_LIST_LIMIT = 100;

const PREFIX = "/v1/requests";
const idParam = "{id}";

export const createRequestRoute = defineRoute({
  method: "post",
  path: PREFIX,
  summary: "Open a gate (agent, admin). Idempotent by `key` or the Idempotency-Key header",
  roles: ["agent", "admin"],
  headers: [{ name: "Idempotency-Key", description: "the same as the body's `key`" }],
  body: { schema: createRequestBody, component: "RequestInput", required: true },
  responses: {
    201: { description: "created, or the first request with this key", schema: "ApprovalRequest" },
  },
  problems: [400, 403, 409, 413, 415, 422],
});

export const listRequestsRoute = defineRoute({
  method: "get",
  path: PREFIX,
  summary:
    "List the requests the caller may see (newest first unless `order` says otherwise), at most 100 per page; with `view=summary` each item is a summary read from columns (no args, preview or items); with `key`, the one request created with that idempotency key (by `requester`, by default the caller), or none",
  query: listQuery,
  lists: ["status", "approver", "execution"],
  responses: { 200: { description: "a page", schema: "RequestPage" } },
  problems: [400, 403],
});

export const getRequestRoute = defineRoute({
  method: "get",
  path: `${PREFIX}/${idParam}`,
  summary: "One request",
  responses: { 200: { description: "the request", schema: "ApprovalRequest" } },
  problems: [404],
});

export const waitRequestRoute = defineRoute({
  method: "get",
  path: `${PREFIX}/${idParam}/wait`,
  summary:
    "Long-poll: answers when the request is decided or after `timeout` seconds (at most 60), with the request as it is then",
  query: waitQuery,
  responses: {
    200: {
      description: "the request; still `pending` if the time ran out",
      schema: "ApprovalRequest",
    },
  },
  problems: [400, 404],
});

export const decideRoute = defineRoute({
  method: "post",
  path: `${PREFIX}/${idParam}/decisions`,
  summary:
    "Decide (reviewer, admin). The reviewer is the token's principal; the channel is recorded as `api` (a body's `channel` is ignored)",
  roles: ["reviewer", "admin"],
  body: { schema: decisionBody, component: "DecisionInput", required: true },
  responses: { 200: { description: "the request after the decision", schema: "ApprovalRequest" } },
  problems: [400, 403, 404, 409, 413, 415, 422],
});

export const cancelRoute = defineRoute({
  method: "post",
  path: `${PREFIX}/${idParam}/cancel`,
  summary:
    "Cancel (its requester, admin, or a reviewer who may decide it, who must give a `reason`)",
  body: { schema: cancelBody, component: "CancelInput", required: false },
  responses: { 200: { description: "the cancelled request", schema: "ApprovalRequest" } },
  problems: [400, 403, 404, 409, 413, 415, 422],
});

export const REQUEST_ROUTES = [
  createRequestRoute,
  listRequestsRoute,
  getRequestRoute,
  waitRequestRoute,
  decideRoute,
  cancelRoute,
];

export function requestRoutes(deps: RouteDeps): Hono<ServerEnv> {
  const { airlock } = deps;
  const app = new Hono<ServerEnv>();
  const id = (c: Context<ServerEnv>) => c.req.param("id") ?? "";

  mount(app, PREFIX, createRequestRoute, async (c, { body: data, raw }) => {
    const p = c.var.principal;
    if ("requester" in raw) assertSelf(p, data.requester, "requester");
    // An agent may not wave its own request through: skipping the human is for admins (and for the
    // server's policy, which decides levels itself).
    if (!hasRole(p, "admin") && (data.requireApproval === false || data.level === "auto")) {
      throw new HttpProblem(
        403,
        "forbidden",
        "only an admin token may create a request that needs no approval (requireApproval: false or level: auto); let a policy on the server auto-approve instead",
        { field: data.requireApproval === false ? "requireApproval" : "level" },
      );
    }
    // Approving when nobody answers is the same skip with a delay (timeoutMs: 1): admins only.
    if (!hasRole(p, "admin") && approvesOnTimeout(data.onTimeout)) {
      throw new HttpProblem(
        403,
        "forbidden",
        "only an admin token may create a request that approves itself when its deadline passes (onTimeout: approve, also inside an escalation); use reject or an escalation to other approvers",
        { field: "onTimeout" },
      );
    }
    const key = idempotencyKey(data.key, c.req.header("idempotency-key"));
    checkDocumentSizes(data, deps.limits);
    const input = { ...data, requester: p.name, ...(key === undefined ? {} : { key }) };
    let created: ApprovalRequest;
    try {
      // The store checks the quota in the insert's own transaction, after a replay of an existing
      // key has been answered: one check that parallel creates and other servers cannot slip past.
      created = await airlock.request(input, { quota: pendingQuotaOf(deps.limits) });
    } catch (err) {
      if (isAirlockError(err, "quota_exceeded")) {
        throw quotaProblem(err as QuotaExceededError, deps.limits);
      }
      // A clash on a key of someone else's request must not reveal that request.
      if (isAirlockError(err, "conflict")) {
        const other = (err as ConflictError).request;
        if (other && !canSee(p, other)) {
          throw new ConflictError(
            `the idempotency key \`${key}\` is already used by another request`,
          );
        }
      }
      throw err;
    }
    // A replay (same key, same input) answers like the first call did: 201 with the request.
    c.header("location", `/v1/requests/${created.id}`);
    return c.json(created, 201);
  });

  mount(app, PREFIX, listRequestsRoute, async (c, { query: q }) => {
    const p = c.var.principal;
    if (q.key !== undefined) {
      // Keys are scoped per requester: the caller's own, or (for those who may see them) another's.
      const requester = q.requester ?? p.name;
      const found = await airlock.getByKey(q.key, { requester });
      return c.json({ items: found && canSee(p, found) ? [found] : [] });
    }
    const filter: ListFilter = {};
    if (q.status !== undefined) filter.status = q.status;
    if (q.action !== undefined) filter.action = q.action;
    if (q.approver !== undefined) filter.approver = q.approver;
    if (q.requester !== undefined) filter.requester = q.requester;
    if (q.execution !== undefined) filter.execution = q.execution;
    if (q.q !== undefined) filter.q = q.q;
    if (q.cursor !== undefined) filter.cursor = q.cursor;
    // Bounded work per page whatever is stored: at most MAX_LIST_LIMIT full requests.
    filter.limit = Math.min(q.limit ?? 50, MAX_LIST_LIMIT);
    if (q.order !== undefined) filter.order = q.order;
    const scoped = scopeList(p, filter);
    if (!scoped) return c.json({ items: [] });
    // Summaries are read from the store's columns: no stored document is parsed.
    return c.json(
      q.view === "summary" ? await airlock.listSummaries(scoped) : await airlock.list(scoped),
    );
  });

  mount(app, PREFIX, getRequestRoute, async (c) =>
    c.json(await loadVisible(airlock, c.var.principal, id(c))),
  );

  mount(app, PREFIX, waitRequestRoute, async (c, { query: q }) => {
    const p = c.var.principal;
    const requestId = id(c);
    const timeoutMs = Math.min(
      Math.round((q.timeout ?? DEFAULT_WAIT_SECONDS) * 1000),
      deps.maxWaitMs,
    );
    const first = await loadVisible(airlock, p, requestId);
    if (first.status !== "pending" || timeoutMs === 0 || deps.shutdown.aborted) {
      return c.json(first);
    }
    // Ends when the client hangs up, the server shuts down or the token is revoked. (Not
    // AbortSignal.any: the shutdown signal lives as long as the server, and listeners are removed
    // here once the wait is over.)
    const stop = new AbortController();
    const abort = () => stop.abort();
    const credential = deps.credentials.watch(c.var.tokenHash);
    c.req.raw.signal.addEventListener("abort", abort, { once: true });
    deps.shutdown.addEventListener("abort", abort, { once: true });
    credential.signal.addEventListener("abort", abort, { once: true });
    try {
      const settled = await airlock.waitFor(requestId, { timeoutMs, signal: stop.signal });
      await assertStillValid(deps, c.var.tokenHash);
      return c.json(settled);
    } catch (err) {
      await assertStillValid(deps, c.var.tokenHash);
      // Out of time, or the server is shutting down: answer with the request as it is now.
      if (isAirlockError(err, "timeout") || isAirlockError(err, "aborted")) {
        return c.json(await loadVisible(airlock, p, requestId));
      }
      throw err;
    } finally {
      c.req.raw.signal.removeEventListener("abort", abort);
      deps.shutdown.removeEventListener("abort", abort);
      credential.signal.removeEventListener("abort", abort);
      credential.release();
    }
  });

  mount(app, PREFIX, decideRoute, async (c, { body: data }) => {
    const p = c.var.principal;
    assertSelf(p, data.reviewer, "reviewer");
    const foreign = data.groups.filter((g) => !p.groups.some((mine) => sameIdentity(mine, g)));
    if (foreign.length) {
      throw new HttpProblem(
        403,
        "forbidden",
        `the token of ${p.name} is not in the group(s) ${foreign.join(", ")}`,
        { field: "groups" },
      );
    }
    if (data.editedArgs !== undefined) checkEditedArgsSize(data.editedArgs, deps.limits);
    const requestId = id(c);
    // Who decides, with which groups and through which channel comes from the token alone (a body's
    // `reviewer`, `groups` and `channel` were checked against it above, or are ignored): the engine
    // asks core/authority.ts whether that actor may decide, inside the decision's compare-and-set.
    try {
      const actor = actorFor(p, "api_token", "api");
      return c.json(await airlock.decideAs(actor, requestId, withoutIdentity(data)));
    } catch (err) {
      // A refusal of a request the caller may not see reads like a missing one.
      await loadVisible(airlock, p, requestId);
      throw err;
    }
  });

  mount(app, PREFIX, cancelRoute, async (c, { body: data }) => {
    const p = c.var.principal;
    assertSelf(p, data.by, "by");
    const request = await loadVisible(airlock, p, id(c));
    assertMayCancel(p, request, data.reason);
    // A reviewer (neither the requester nor an admin) cancels as one who may decide it: the engine
    // checks that again and requires the reason.
    const asReviewer = !hasRole(p, "admin") && !sameIdentity(request.requester, p.name);
    const cancelled = await airlock.cancel(request.id, {
      by: p.name,
      channel: "api",
      ...(data.reason === undefined ? {} : { reason: data.reason }),
      ...(asReviewer ? { asReviewer: { groups: [...p.groups] } } : {}),
    });
    return c.json(cancelled);
  });

  return app;
}

/** A long-poll whose token was revoked while it waited answers 401, not the request. */
async function assertStillValid(deps: RouteDeps, tokenHash: string): Promise<void> {
  if (await deps.credentials.stillValid(tokenHash)) return;
  throw new HttpProblem(401, "unauthorized", "the API token was revoked while this call waited", {
    headers: { "www-authenticate": 'Bearer realm="airlock", error="invalid_token"' },
  });
}

function approvesOnTimeout(rule: OnTimeout): boolean {
  if (rule === "approve") return true;
  return typeof rule === "object" && rule.escalate.onTimeout !== undefined
    ? approvesOnTimeout(rule.escalate.onTimeout)
    : false;
}

/** Identity fields come from the token. A body may repeat the caller's own name, nobody else's. */
function assertSelf(p: Principal, value: string | undefined, field: string): void {
  if (value === undefined || sameIdentity(value, p.name)) return;
  throw new HttpProblem(
    403,
    "forbidden",
    `\`${field}\` is set from your token (${p.name}); it cannot name \`${value}\``,
    { field },
  );
}

function idempotencyKey(bodyKey: string | undefined, header: string | undefined) {
  if (header === undefined) return bodyKey;
  const key = header.trim();
  if (key === "" || key.length > 200) {
    throw new HttpProblem(
      400,
      "invalid_input",
      "the Idempotency-Key header must hold 1 to 200 characters",
      { field: "key" },
    );
  }
  if (bodyKey !== undefined && bodyKey !== key) {
    throw new HttpProblem(
      400,
      "invalid_input",
      `the Idempotency-Key header (\`${key}\`) and the body's \`key\` (\`${bodyKey}\`) differ`,
      { field: "key" },
    );
  }
  return key;
}
