// What every route handler can reach: the caller (set by the auth middleware) and the server's
// shared parts. Kept apart so routes depend on this small file, not on the server's assembly.
import type { IncomingMessage } from "node:http";
import type { Logger } from "pino";
import type { Airlock } from "../engine/engine.js";
import type { CredentialWatch } from "./credentials.js";
import type { EventHub } from "./event-hub.js";
import type { ServerLimits } from "./limits.js";
import type { StorageHealth } from "./storage-health.js";
import type { Role } from "./tokens.js";

/** The authenticated caller, from its token. */
export interface Principal {
  /** The token's id (never its secret). */
  tokenId: string;
  /** The principal's name: requester of what it creates, reviewer of what it decides. */
  name: string;
  roles: readonly Role[];
  groups: readonly string[];
  /** For a credential minted with another (an embed card token): the minter's roles, so that
   * anything minted with an agent's credential stays an agent's (core/authority.ts). */
  mintedWithRoles?: readonly Role[];
}

export interface ServerEnv {
  /** Set by @hono/node-server; absent when the app is called in-process (`app.request()`). */
  Bindings: { incoming?: IncomingMessage };
  Variables: {
    principal: Principal;
    /** The SHA-256 of the caller's token, to notice its revocation while a stream is open. */
    tokenHash: string;
  };
}

/** The parts routes share. `shutdown` is aborted when the server starts closing, so long-polls
 * answer at once and event streams end. */
export interface RouteDeps {
  airlock: Airlock;
  logger: Logger;
  shutdown: AbortSignal;
  /** The longest a long-poll may wait, in ms. */
  maxWaitMs: number;
  /** How often an idle event stream sends a comment line to keep proxies from closing it. */
  heartbeatMs: number;
  /** Signals that end streams and long-polls once their token is revoked. */
  credentials: CredentialWatch;
  /** The server's one live tail of the audit log, shared by every event stream. */
  events: EventHub;
  /** Storage faults seen by requests (a 503 episode), shown on /healthz. */
  storage: StorageHealth;
  limits: ServerLimits;
  /** Event streams one token may hold open at once. */
  maxStreamsPerToken: number;
}

export function hasRole(p: Principal, role: Role): boolean {
  return p.roles.includes(role);
}
