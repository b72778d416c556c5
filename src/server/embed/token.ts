// Embed tokens: short-lived, signed credentials for an approval card in someone else's page. One token
// opens one request for one named reviewer: read it, long-poll it, decide it (src/server/routes/
// embed.ts), nothing else (the scope check below runs in authentication for every other route).
//
// Self-contained and signed (HMAC-SHA256 with the server's `embedSecret`) rather than stored: minting
// writes nothing, every server sharing the secret accepts the token, and a token lives at most an
// hour, so there is nothing to revoke one by one. To end every outstanding token at once, change the
// secret. Without a configured secret each process draws a random one: tokens die with the process
// and are not accepted by its siblings behind a load balancer.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { invalidOption } from "../../core/validate.js";
import type { Principal } from "../env.js";
import { HttpProblem } from "../problem.js";
import { ROLES, type Role } from "../tokens.js";

/** Every embed token starts with this, so authentication tells it from an API token (`alk_`). */
export const EMBED_TOKEN_PREFIX = "ale_";
/** Bound into every signature, so a MAC made for something else can never pass as a token. */
const CONTEXT = "airlock-embed-v1.";

/** What a token says: the request, the reviewer and their groups, and when it ends. */
export interface EmbedClaims {
  /** The one request it opens. */
  requestId: string;
  /** Who decides through it (normal form), recorded as the decision's reviewer. */
  reviewer: string;
  /** The reviewer's groups, matched against the request's approvers. */
  groups: string[];
  /** Epoch ms after which it is refused. */
  expiresAt: number;
  /** Who minted it (an app backend or an admin): kept for the logs. */
  mintedBy: string;
  /** The id of the token it was minted with: the card stands only while that token is live. */
  minterTokenId: string;
  /** That token's roles: anything minted with an agent's credential stays an agent's. */
  minterRoles: Role[];
}

const payloadSchema = z.object({
  rid: z.string().min(1),
  sub: z.string().min(1),
  grp: z.array(z.string()),
  exp: z.number().int(),
  by: z.string(),
  mid: z.string().min(1),
  mr: z.array(z.enum(ROLES)),
  jti: z.string(),
});

export interface EmbedTokens {
  mint(claims: EmbedClaims): string;
  /** The claims of a well-signed token, whatever its expiry (see `checkEmbedToken`); undefined for
   * anything else. */
  read(token: string): EmbedClaims | undefined;
}

/** Signs and reads embed tokens with `secret` (at least 32 characters), or a random per-process one. */
export function createEmbedTokens(secret?: string): EmbedTokens {
  if (secret !== undefined && (typeof secret !== "string" || secret.length < 32)) {
    // The length only: a secret never appears in a message.
    throw invalidOption(
      "embedSecret",
      "a secret of 32 characters or more",
      typeof secret === "string" ? `${secret.length} characters` : typeof secret,
    );
  }
  const key = secret === undefined ? randomBytes(32) : Buffer.from(secret, "utf8");
  const sign = (payload: string) =>
    createHmac("sha256", key).update(CONTEXT).update(payload).digest();
  return {
    mint(claims) {
      const payload = Buffer.from(
        JSON.stringify({
          rid: claims.requestId,
          sub: claims.reviewer,
          grp: claims.groups,
          exp: claims.expiresAt,
          by: claims.mintedBy,
          mid: claims.minterTokenId,
          mr: claims.minterRoles,
          // Two tokens minted in the same millisecond still differ (and so do their rate buckets).
          jti: randomBytes(9).toString("base64url"),
        }),
        "utf8",
      ).toString("base64url");
      return `${EMBED_TOKEN_PREFIX}${payload}.${sign(payload).toString("base64url")}`;
    },
    read(token) {
      if (!token.startsWith(EMBED_TOKEN_PREFIX)) return undefined;
      const [payload, mac, extra] = token.slice(EMBED_TOKEN_PREFIX.length).split(".");
      if (!payload || !mac || extra !== undefined) return undefined;
      const given = Buffer.from(mac, "base64url");
      const expected = sign(payload);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      let decoded: unknown;
      try {
        decoded = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
      } catch {
        return undefined;
      }
      const parsed = payloadSchema.safeParse(decoded);
      if (!parsed.success) return undefined;
      const p = parsed.data;
      return {
        requestId: p.rid,
        reviewer: p.sub,
        groups: p.grp,
        expiresAt: p.exp,
        mintedBy: p.by,
        minterTokenId: p.mid,
        minterRoles: p.mr,
      };
    },
  };
}

export function isEmbedToken(secret: string): boolean {
  return secret.startsWith(EMBED_TOKEN_PREFIX);
}

/** The id a token's rate bucket and logs go by: never the secret itself. */
export function embedTokenId(token: string): string {
  const mac = token.slice(token.lastIndexOf(".") + 1);
  return `embed_${mac.slice(0, 16)}`;
}

/** The routes an embed token opens, for its own request only (see routes/embed.ts). */
const EMBED_PATH = /^\/v1\/embed\/requests\/([^/]+)(\/wait|\/decisions)?$/;

/** Refuses (403) a valid embed token on any route but the three it opens, for its own request. */
export function assertEmbedScope(claims: EmbedClaims, method: string, path: string): void {
  const m = EMBED_PATH.exec(path);
  const id = m?.[1] === undefined ? undefined : safeDecode(m[1]);
  const sub = m?.[2];
  const allowed =
    id === claims.requestId &&
    ((method === "GET" && (sub === undefined || sub === "/wait")) ||
      (method === "POST" && sub === "/decisions"));
  if (allowed) return;
  throw new HttpProblem(
    403,
    "forbidden",
    `an embed token opens only GET /v1/embed/requests/${claims.requestId}, its /wait and POST its /decisions; use an API token for anything else`,
  );
}

function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The caller an embed token stands for, once its signature, expiry and scope are checked: the named
 * reviewer with no role at all (so no role-guarded route opens to it). `undefined` when the token is
 * not one this server signed (counted as a refused token, like an unknown API token). */
export function embedPrincipal(
  tokens: EmbedTokens,
  token: string,
  method: string,
  path: string,
  now = Date.now(),
): Principal | undefined {
  const claims = tokens.read(token);
  if (!claims) return undefined;
  if (claims.expiresAt <= now) {
    throw new HttpProblem(
      401,
      "unauthorized",
      `the embed token expired at ${new Date(claims.expiresAt).toISOString()}; ask the app for a new one`,
      { headers: { "www-authenticate": 'Bearer realm="airlock", error="invalid_token"' } },
    );
  }
  assertEmbedScope(claims, method, path);
  return {
    tokenId: embedTokenId(token),
    name: claims.reviewer,
    roles: [],
    groups: claims.groups,
    mintedWithRoles: claims.minterRoles,
  };
}
