// Inbox sessions: signing in with a reviewer token sets an HttpOnly, SameSite=Strict cookie holding a
// random session id. The server keeps only the id's hash and the token's hash, and looks the token
// up again on every page, so revoking a token signs its sessions out. Every form carries the
// session's CSRF token. Sessions live in this process: a restart asks people to sign in again.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { Principal } from "../env.js";
import type { TokenStore } from "../tokens.js";

export const SESSION_COOKIE = "airlock_session";
const MAX_SESSIONS = 10_000;

export interface Session {
  csrf: string;
  tokenHash: string;
  expiresAt: number;
  /** Requests this session already recorded as viewed, so reloading a page logs it once. */
  viewed: Set<string>;
}

export interface SessionUser {
  session: Session;
  principal: Principal;
}

const sha = (s: string) => createHash("sha256").update(s).digest("hex");

export function createSessions(tokens: TokenStore, ttlMs = 12 * 3600 * 1000) {
  const sessions = new Map<string, Session>();

  function prune(now: number) {
    for (const [k, s] of sessions) if (s.expiresAt <= now) sessions.delete(k);
    // Still full: drop the oldest (Map keeps insertion order).
    while (sessions.size >= MAX_SESSIONS) {
      const first = sessions.keys().next().value;
      if (first === undefined) break;
      sessions.delete(first);
    }
  }

  return {
    /** Starts a session for a token that was just checked; sets the cookie. */
    start(c: Context, tokenHash: string): Session {
      const now = Date.now();
      prune(now);
      const id = randomBytes(32).toString("base64url");
      const session: Session = {
        csrf: randomBytes(24).toString("base64url"),
        tokenHash,
        expiresAt: now + ttlMs,
        viewed: new Set(),
      };
      sessions.set(sha(id), session);
      setCookie(c, SESSION_COOKIE, id, {
        httpOnly: true,
        sameSite: "Strict",
        path: "/",
        secure: new URL(c.req.url).protocol === "https:",
        maxAge: Math.floor(ttlMs / 1000),
      });
      return session;
    },

    /** The signed-in user, if the cookie names a live session whose token is still valid. */
    async current(c: Context): Promise<SessionUser | undefined> {
      const id = getCookie(c, SESSION_COOKIE);
      if (!id) return undefined;
      const key = sha(id);
      const session = sessions.get(key);
      if (!session || session.expiresAt <= Date.now()) {
        sessions.delete(key);
        return undefined;
      }
      const record = await tokens.findByHash(session.tokenHash);
      if (!record) {
        sessions.delete(key);
        return undefined;
      }
      return {
        session,
        principal: {
          tokenId: record.id,
          name: record.name,
          roles: record.roles,
          groups: record.groups,
        },
      };
    },

    end(c: Context): void {
      const id = getCookie(c, SESSION_COOKIE);
      if (id) sessions.delete(sha(id));
      deleteCookie(c, SESSION_COOKIE, { path: "/" });
    },
  };
}

export type Sessions = ReturnType<typeof createSessions>;

/** Constant-time comparison of the CSRF token a form sent with the session's. */
export function csrfMatches(session: Session, sent: unknown): boolean {
  return sameSecret(session.csrf, sent);
}

/** Constant-time equality of two secrets; false when either is missing. */
export function sameSecret(expected: string | undefined, sent: unknown): boolean {
  if (!expected || typeof sent !== "string") return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(sent);
  return a.length === b.length && timingSafeEqual(a, b);
}
