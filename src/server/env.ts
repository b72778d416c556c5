// What every route handler can reach: the caller (set by the auth middleware) and the server's
// shared parts. Kept apart so routes depend on this small file, not on the server's assembly.
import type { IncomingMessage } from "node:http";
import type { Logger } from "pino";
import type { Airlock } from "../core/engine.js";
import type { Role } from "./tokens.js";

/** The authenticated caller, from its token. */
export interface Principal {
  /** The token's id (never its secret). */
  tokenId: string;
  /** The principal's name: requester of what it creates, reviewer of what it decides. */
  name: string;
  roles: readonly Role[];
  groups: readonly string[];
}

export interface ServerEnv {
  /** Set by @hono/node-server; absent when the app is called in-process (`app.request()`). */
  Bindings: { incoming?: IncomingMessage };
  Variables: {
    principal: Principal;
  };
}

/** The parts routes share. `shutdown` is aborted when the server starts closing, so long-polls
 * answer at once and event streams end. */
export interface RouteDeps {
  airlock: Airlock;
  logger: Logger;
  shutdown: AbortSignal;
  /** The longest a long-poll may wait, in seconds. */
  maxWaitSeconds: number;
  /** How often an idle event stream sends a comment line to keep proxies from closing it. */
  heartbeatMs: number;
}

export function hasRole(p: Principal, role: Role): boolean {
  return p.roles.includes(role);
}
