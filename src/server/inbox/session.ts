// Inbox sessions: signing in with a reviewer token sets an HttpOnly, SameSite=Strict cookie holding a
// random session id. The server keeps only the id's hash and the token's hash, and looks the token
// up again on every page, so revoking a token signs its sessions out. Every form carries the
// session's CSRF token. Sessions live in this process: a restart asks people to sign in again.
//
// Each token holds at most `perToken` sessions (its oldest goes first), so one reviewer signing in
// again and again only ever signs themself out; when the process holds `max` sessions in all, new
// sign-ins are refused rather than evicting other people. Signing out or an ended session also ends
// the live streams it opened.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { Principal } from "../env.js";
import { effectiveRoles, type TokenStore } from "../tokens.js";

export const SESSION_COOKIE = "airlock_session";

export interface SessionOptions {
  /** How long a session lasts. @default 12 hours */
  ttlMs?: number;
  /** Sessions one token may hold; signing in once more ends its oldest. @default 20 */
  perToken?: number;
  /** Sessions this process holds in all; past it, sign-ins are refused. @default 10000 */
  max?: number;
  /** Whether cookies carry the Secure flag. @default "auto" (when the request came over https) */
  secure?: (c: Context) => boolean;
}

export interface Session {
  csrf: string;
  tokenHash: string;
  expiresAt: number;
  /** Aborted when the session ends (sign-out, expiry, eviction): live streams stop with it. */
  ended: AbortController;
}

export interface SessionUser {
  session: Session;
  principal: Principal;
}

export class SessionsFull extends Error {
  constructor() {
    super("too many inbox sessions in this process; try again later");
  }
}

const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const isHttps = (c: Context) => new URL(c.req.url).protocol === "https:";

export function createSessions(tokens: TokenStore, options: SessionOptions = {}) {
  const ttlMs = options.ttlMs ?? 12 * 3600 * 1000;
  const perToken = options.perToken ?? 20;
  const max = options.max ?? 10_000;
  const secure = options.secure ?? isHttps;
  const sessions = new Map<string, Session>();
  /** Session keys per token hash, oldest first. */
  const byToken = new Map<string, Set<string>>();

  function drop(key: string) {
    const s = sessions.get(key);
    if (!s) return;
    sessions.delete(key);
    const mine = byToken.get(s.tokenHash);
    mine?.delete(key);
    if (mine && mine.size === 0) byToken.delete(s.tokenHash);
    s.ended.abort();
  }

  function prune(now: number) {
    for (const [k, s] of sessions) if (s.expiresAt <= now) drop(k);
  }

  return {
    /** Starts a session for a token that was just checked; sets the cookie. Throws `SessionsFull`
     * when the process holds `max` sessions of other tokens. */
    start(c: Context, tokenHash: string): Session {
      const now = Date.now();
      const mine = byToken.get(tokenHash) ?? new Set<string>();
      if (sessions.size >= max) prune(now);
      if (sessions.size >= max && mine.size === 0) throw new SessionsFull();
      // This token's oldest sessions make room, never another token's.
      while (mine.size >= perToken || (sessions.size >= max && mine.size > 0)) {
        const oldest = mine.values().next().value;
        if (oldest === undefined) break;
        drop(oldest);
      }
      const id = randomBytes(32).toString("base64url");
      const session: Session = {
        csrf: randomBytes(24).toString("base64url"),
        tokenHash,
        expiresAt: now + ttlMs,
        ended: new AbortController(),
      };
      const key = sha(id);
      sessions.set(key, session);
      mine.add(key);
      byToken.set(tokenHash, mine);
      setCookie(c, SESSION_COOKIE, id, {
        httpOnly: true,
        sameSite: "Strict",
        path: "/",
        secure: secure(c),
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
        drop(key);
        return undefined;
      }
      const principal = await this.check(session);
      if (!principal) {
        drop(key);
        return undefined;
      }
      return { session, principal };
    },

    /** Who the session's token belongs to now; `undefined` (and the session ended) once the token
     * is revoked or the session expired. Live streams call it as they go. */
    async check(session: Session): Promise<Principal | undefined> {
      if (session.ended.signal.aborted) return undefined;
      const record =
        session.expiresAt > Date.now() ? await tokens.findByHash(session.tokenHash) : undefined;
      if (!record) {
        for (const [k, s] of sessions) if (s === session) drop(k);
        session.ended.abort();
        return undefined;
      }
      return {
        tokenId: record.id,
        name: record.name,
        roles: effectiveRoles(record),
        groups: record.groups,
      };
    },

    end(c: Context): void {
      const id = getCookie(c, SESSION_COOKIE);
      if (id) drop(sha(id));
      deleteCookie(c, SESSION_COOKIE, { path: "/", secure: secure(c) });
    },

    /** How many sessions are live, in all or for one token (for tests and health). */
    count(tokenHash?: string): number {
      return tokenHash === undefined ? sessions.size : (byToken.get(tokenHash)?.size ?? 0);
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
