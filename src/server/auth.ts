// Authentication (who is calling: a bearer token looked up by its SHA-256) and the coarse role
// checks of each route. Object-level rules (which requests a caller may see) live in access.ts.
import type { Context, MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { normalizeIdentity } from "../core/identity.js";
import { type EmbedTokens, embedPrincipal, isEmbedToken } from "./embed/token.js";
import type { Principal, ServerEnv } from "./env.js";
import { HttpProblem } from "./problem.js";
import type { RateLimiter } from "./rate-limit.js";
import { effectiveRoles, hashToken, type Role, type TokenStore } from "./tokens.js";

const CHALLENGE = { "www-authenticate": 'Bearer realm="airlock"' };

export interface AuthOptions {
  tokens: TokenStore;
  /** Limits failed attempts per client address; `undefined` disables that limit. */
  failures: RateLimiter | undefined;
  /** Reads embed tokens (`ale_...`, scoped to one request: see embed/token.ts); without it they are
   * refused like any unknown token. */
  embed?: EmbedTokens;
}

/** Sets `principal` from `Authorization: Bearer <token>` (hono's bearer-auth), or answers 401.
 *
 * Only a token that is sent and refused counts as a failure of the caller's address, and a valid
 * token is always served, whatever its address did (behind a proxy every client shares one): the
 * limit slows down guessing, it never locks out someone holding a credential. A request with no
 * credential at all gets its 401 without counting. */
export function authenticate(options: AuthOptions): MiddlewareHandler<ServerEnv> {
  const { tokens, failures, embed } = options;
  // Thrown from bearer-auth's message hooks: answered as our problem+json by the error handler.
  const refused = (detail: string, challenge: string): never => {
    throw new HttpProblem(401, "unauthorized", detail, {
      headers: { "www-authenticate": challenge },
    });
  };
  return bearerAuth<ServerEnv>({
    realm: "airlock",
    noAuthenticationHeader: {
      message: () =>
        refused(
          "this route needs an API token: send `Authorization: Bearer <token>`",
          CHALLENGE["www-authenticate"],
        ),
    },
    // Another scheme (Basic) or a malformed value: the same 401 as a wrong token, not a 400.
    invalidAuthenticationHeader: {
      message: () =>
        refused(
          "send the API token as `Authorization: Bearer <token>`",
          'Bearer realm="airlock", error="invalid_request"',
        ),
    },
    invalidToken: {
      message: () =>
        refused(
          "the API token is unknown or was revoked",
          'Bearer realm="airlock", error="invalid_token"',
        ),
    },
    verifyToken: async (secret, c) => {
      const hash = hashToken(secret);
      const scoped =
        embed && isEmbedToken(secret)
          ? embedPrincipal(embed, secret, c.req.method, c.req.path)
          : undefined;
      if (scoped) {
        c.set("principal", scoped);
        c.set("tokenHash", hash);
        return true;
      }
      const record = await tokens.findByHash(hash);
      if (!record) {
        if (failures) {
          const state = await failures.take(`addr:${clientAddress(c)}`);
          if (!state.ok) throw tooManyFailures(state.retryAfterSeconds);
        }
        return false;
      }
      const principal: Principal = {
        tokenId: record.id,
        name: normalizeIdentity(record.name),
        roles: effectiveRoles(record),
        groups: record.groups.map(normalizeIdentity),
      };
      c.set("principal", principal);
      c.set("tokenHash", hash);
      return true;
    },
  });
}

/** Answers 429 once a token has used up its rate. */
export function limitRate(limiter: RateLimiter): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const state = await limiter.take(`token:${c.var.principal.tokenId}`);
    c.header("ratelimit-limit", String(state.limit));
    c.header("ratelimit-remaining", String(state.remaining));
    if (!state.ok) {
      throw new HttpProblem(
        429,
        "rate_limited",
        `too many requests from this token; retry in ${state.retryAfterSeconds} s`,
        {
          headers: {
            "retry-after": String(state.retryAfterSeconds),
            "ratelimit-limit": String(state.limit),
            "ratelimit-remaining": "0",
          },
          extra: { retryAfterSeconds: state.retryAfterSeconds },
        },
      );
    }
    await next();
  };
}

/** Lets the route run only for a caller with one of `roles`. */
export function requireRole(...roles: Role[]): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const p = c.var.principal;
    if (!roles.some((r) => p.roles.includes(r))) {
      throw new HttpProblem(
        403,
        "forbidden",
        `this route needs the role ${roles.join(" or ")}; the token of ${p.name} has ${p.roles.join(", ")}`,
      );
    }
    await next();
  };
}

/** The peer's address; "unknown" when not served by @hono/node-server (e.g. `app.request()`). */
function clientAddress(c: Context<ServerEnv>): string {
  return c.env?.incoming?.socket?.remoteAddress ?? "unknown";
}

function tooManyFailures(retryAfterSeconds: number): HttpProblem {
  return new HttpProblem(
    429,
    "rate_limited",
    `too many failed authentications from this address; retry in ${retryAfterSeconds} s`,
    {
      headers: { "retry-after": String(retryAfterSeconds) },
      extra: { retryAfterSeconds },
    },
  );
}
