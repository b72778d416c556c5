// The embeddable approval card's routes.
//
//   POST /v1/requests/{id}/embed-token     an app backend (role app) or an admin mints a short-lived
//                                           token for one reviewer of one request (embed/mint.ts)
//   GET  /v1/embed/requests/{id}           the request           } with that embed token only,
//   GET  /v1/embed/requests/{id}/wait      long-poll             } for that request only (the
//   POST /v1/embed/requests/{id}/decisions decide, channel "chat"} scope is checked in auth.ts too)
//   GET  /embed/airlock-approval.js        the <airlock-approval> element: a static public asset,
//                                           like the inbox's /assets/* (no data in it)
//
// The card runs on the chat app's origin: the /v1/embed/* routes answer CORS for the configured
// `embedOrigins` only (none by default: same origin only). No other route answers CORS, and an embed
// token opens no other route, so a page holding one can do nothing else with it.
import { type Context, Hono } from "hono";
import { cors } from "hono/cors";
import { z } from "zod";
import { actorOf } from "../../core/authority.js";
import { isAirlockError } from "../../core/errors.js";
import { type ApprovalRequest, decisionInputSchema } from "../../core/schemas.js";
import { invalidOption } from "../../core/validate.js";
import { loadVisible } from "../access.js";
import { APPROVAL_CARD_JS, type CardRequest, cardRequest } from "../embed/card.js";
import {
  checkCardStands,
  checkMint,
  MAX_MINTS_PER_REQUEST,
  MINT_REFUSED,
  mayMint,
} from "../embed/mint.js";
import type { EmbedClaims, EmbedTokens } from "../embed/token.js";
import { hasRole, type RouteDeps, type ServerEnv } from "../env.js";
import { readProgress } from "../inbox/progress.js";
import { HttpProblem } from "../problem.js";
import { createRateLimiter, type RateLimiter } from "../rate-limit.js";
import { defineRoute, mount } from "../route.js";
import { waitQuery } from "../schemas.js";
import type { TokenStore } from "../tokens.js";

/** Seconds an embed token lives when the minter names none, and the most it may ask for. */
export const EMBED_TTL_DEFAULT_SECONDS = 600;
export const EMBED_TTL_MAX_SECONDS = 3600;
/** Seconds the card's long-poll waits when it names no timeout. */
const DEFAULT_WAIT_SECONDS = 30;

const identity = z.string().trim().min(1).max(200);

export const embedTokenBody = z
  .object({
    /** Who will decide through the card: recorded as the decision's reviewer. */
    reviewer: identity,
    /** Groups through which the reviewer approves (an admin's word, or held by a reviewer token). */
    groups: z.array(identity).max(20).default([]),
    /** @default 600 */
    ttlSeconds: z
      .number()
      .int()
      .min(1)
      .max(EMBED_TTL_MAX_SECONDS)
      .default(EMBED_TTL_DEFAULT_SECONDS),
  })
  .strict();

export const embedToken = z.object({
  /** `ale_...`: send as `Authorization: Bearer` to the /v1/embed/requests/{id} routes only. */
  token: z.string(),
  /** Epoch ms after which it is refused. */
  expiresAt: z.number(),
});

/** What the card may send: the reviewer, groups and channel come from the token. An edit's
 * arguments and an answer are checked by the engine (the request's argsSchema, responseSchema). */
export const embedDecisionBody = decisionInputSchema.pick({
  outcome: true,
  selected: true,
  editedArgs: true,
  response: true,
  comment: true,
  key: true,
  viewDigest: true,
});

export const mintEmbedTokenRoute = defineRoute({
  method: "post",
  path: "/v1/requests/{id}/embed-token",
  summary:
    "Mint a short-lived token for an approval card (an app backend's `app` token, or an admin; never an agent): it opens only this request's /v1/embed routes, for the named reviewer, who must hold a live reviewer token, be allowed to decide it and never be its requester; the card dies with the reviewer's and the minter's tokens. Rate limited per minter and capped per request; every refusal answers the same sentence",
  // No role guard here: `mayMint` refuses with the one sentence every refused mint gets.
  body: { schema: embedTokenBody, component: "EmbedTokenInput", required: true },
  responses: { 201: { description: "the token, shown once", schema: "EmbedToken" } },
  problems: [400, 403, 404, 413, 415, 422, 429],
});

export const embedGetRoute = defineRoute({
  method: "get",
  path: "/v1/embed/requests/{id}",
  summary: "The request, for an approval card (embed token of this request only)",
  responses: { 200: { description: "the request", schema: "ApprovalRequest" } },
  problems: [403, 404],
});

export const embedWaitRoute = defineRoute({
  method: "get",
  path: "/v1/embed/requests/{id}/wait",
  summary:
    "Long-poll for an approval card (embed token of this request only): answers when the request is decided, after `timeout` seconds, or when the token is about to expire",
  query: waitQuery,
  responses: {
    200: {
      description: "the request; still `pending` if the time ran out",
      schema: "ApprovalRequest",
    },
  },
  problems: [400, 403, 404],
});

export const embedDecideRoute = defineRoute({
  method: "post",
  path: "/v1/embed/requests/{id}/decisions",
  summary:
    "Decide from an approval card (embed token of this request only): recorded as the token's reviewer, channel `chat`, through the same state machine as every decision",
  body: { schema: embedDecisionBody, component: "EmbedDecisionInput", required: true },
  responses: { 200: { description: "the request after the decision", schema: "ApprovalRequest" } },
  problems: [400, 403, 404, 409, 413, 415, 422],
});

export const EMBED_ROUTES = [mintEmbedTokenRoute, embedGetRoute, embedWaitRoute, embedDecideRoute];

/** The embed routes behind authentication: mount with `app.route("/", embedRoutes(...))` after the
 * API's bearer authentication (which reads embed tokens when given the same `EmbedTokens`). */
export function embedRoutes(
  deps: RouteDeps,
  tokens: TokenStore,
  embed: EmbedTokens,
  /** Mints per minter token: 30 a minute unless told otherwise. */
  mints: RateLimiter = createRateLimiter({ max: 30, windowMs: 60_000 }, "embed_mints"),
): Hono<ServerEnv> {
  const { airlock } = deps;
  const app = new Hono<ServerEnv>();
  const id = (c: Context<ServerEnv>) => c.req.param("id") ?? "";
  /** The request as the card shows it, with the agent's progress (its live report). */
  const card = async (r: ApprovalRequest): Promise<CardRequest> =>
    cardRequest(r, { progress: await readProgress(airlock, r.id) });

  mount(app, "", mintEmbedTokenRoute, async (c, { body }) => {
    const caller = c.var.principal;
    if (!mayMint(caller)) throw new HttpProblem(403, "forbidden", MINT_REFUSED);
    const limited = await mints.take(`minter:${caller.tokenId}`);
    if (!limited.ok) {
      throw new HttpProblem(
        429,
        "rate_limited",
        `too many card tokens minted with this token; try again in ${limited.retryAfterSeconds} s`,
        { headers: { "retry-after": String(limited.retryAfterSeconds) } },
      );
    }
    // An app backend reads no requests otherwise: a request it names that does not exist gets the
    // same sentence as every other refusal, so minting tells it nothing about which ids exist.
    const request = hasRole(caller, "admin")
      ? await loadVisible(airlock, caller, id(c))
      : await airlock.get(id(c)).catch((err: unknown) => {
          if (isAirlockError(err, "not_found"))
            throw new HttpProblem(403, "forbidden", MINT_REFUSED);
          throw err;
        });
    const who = await checkMint(caller, request, body, tokens);
    // Counted from the audit log, so every server sees the same count; mints made at the same
    // moment may each see the count below the cap (a few past it at most, each still audited).
    const issued = (await airlock.audit({ requestId: request.id, limit: 10_000 })).filter(
      (e) => e.data.event === "embed token issued",
    ).length;
    if (issued >= MAX_MINTS_PER_REQUEST) {
      throw new HttpProblem(
        429,
        "rate_limited",
        `${MAX_MINTS_PER_REQUEST} card tokens were minted for ${request.id} already, the most one request gets`,
      );
    }
    const expiresAt = Date.now() + body.ttlSeconds * 1000;
    // Audited before the token exists: who let whom decide through a chat, until when.
    await airlock.record({
      type: "notified",
      actor: caller.name,
      requestId: request.id,
      data: { event: "embed token issued", channel: "chat", reviewer: who.reviewer, expiresAt },
    });
    const token = embed.mint({
      requestId: request.id,
      reviewer: who.reviewer,
      groups: who.groups,
      expiresAt,
      mintedBy: caller.name,
      minterTokenId: caller.tokenId,
      minterRoles: [...caller.roles],
    });
    deps.logger.info(
      { requestId: request.id, reviewer: who.reviewer, mintedBy: caller.name, expiresAt },
      "embed token minted",
    );
    return c.json({ token, expiresAt }, 201);
  });

  /** The token's claims, for this route's request only (auth.ts checked it already; this is the
   * same check where it is used, so a change of the mounting cannot open the route to other tokens),
   * once the card still stands (its minter's and reviewer's tokens live). */
  const claimsFor = async (c: Context<ServerEnv>): Promise<EmbedClaims> => {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "")?.[1];
    const claims = bearer === undefined ? undefined : embed.read(bearer);
    if (!claims) {
      throw new HttpProblem(
        403,
        "forbidden",
        "this route takes an embed token (POST /v1/requests/{id}/embed-token), not an API token; use /v1/requests/{id} with an API token",
      );
    }
    if (claims.requestId !== id(c)) {
      throw new HttpProblem(403, "forbidden", `this embed token opens only ${claims.requestId}`);
    }
    await checkCardStands(claims, tokens);
    return claims;
  };

  mount(app, "", embedGetRoute, async (c) => {
    const claims = await claimsFor(c);
    return c.json(await card(await airlock.get(claims.requestId)));
  });

  mount(app, "", embedWaitRoute, async (c, { query: q }) => {
    const claims = await claimsFor(c);
    const requested = Math.round((q.timeout ?? DEFAULT_WAIT_SECONDS) * 1000);
    // Never past the token's own end: the next call would be refused anyway.
    const timeoutMs = Math.max(
      0,
      Math.min(requested, deps.maxWaitMs, claims.expiresAt - Date.now()),
    );
    const first = await airlock.get(claims.requestId);
    if (first.status !== "pending" || timeoutMs === 0 || deps.shutdown.aborted) {
      return c.json(await card(first));
    }
    const stop = new AbortController();
    const abort = () => stop.abort();
    c.req.raw.signal.addEventListener("abort", abort, { once: true });
    deps.shutdown.addEventListener("abort", abort, { once: true });
    try {
      return c.json(
        await card(await airlock.waitFor(first.id, { timeoutMs, signal: stop.signal })),
      );
    } catch (err) {
      if (isAirlockError(err, "timeout") || isAirlockError(err, "aborted")) {
        return c.json(await card(await airlock.get(first.id)));
      }
      throw err;
    } finally {
      c.req.raw.signal.removeEventListener("abort", abort);
      deps.shutdown.removeEventListener("abort", abort);
    }
  });

  mount(app, "", embedDecideRoute, async (c, { body }) => {
    const claims = await claimsFor(c);
    // The token says who is deciding and with what it was minted; the engine asks authority, at
    // this moment, whether that actor may decide (never an agent's card, never the requester).
    const actor = actorOf({
      name: claims.reviewer,
      groups: claims.groups,
      proof: "card_token",
      channel: "chat",
      mintedWithRoles: claims.minterRoles,
    });
    return c.json(await card(await airlock.decideAs(actor, claims.requestId, body)));
  });

  return app;
}

/** The routes before authentication: the card's script, and CORS for the /v1/embed routes when
 * `origins` lists any (a preflight carries no token, so it is answered here). */
export function embedPublicRoutes(origins: readonly string[] = []): Hono<ServerEnv> {
  const app = new Hono<ServerEnv>();
  const allowed = new Set(origins.map(checkOrigin));
  if (allowed.size > 0) {
    app.use(
      "/v1/embed/*",
      cors({
        origin: (origin) => (allowed.has(origin) ? origin : null),
        allowMethods: ["GET", "POST"],
        allowHeaders: ["authorization", "content-type"],
        maxAge: 600,
      }),
    );
  }
  app.get("/embed/airlock-approval.js", (c) =>
    c.body(APPROVAL_CARD_JS, 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=300",
      // Loaded by <script src> from the chat app's page, another origin.
      "cross-origin-resource-policy": "cross-origin",
    }),
  );
  return app;
}

/** An origin as browsers send it: scheme, host and port, nothing else. */
function checkOrigin(origin: string): string {
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  if (!url || url.origin !== origin || origin === "null") {
    throw invalidOption(
      "embedOrigins",
      'origins like "https://chat.example.com" (scheme, host and port; no path, no trailing slash)',
      origin,
    );
  }
  return origin;
}
