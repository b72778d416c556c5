// `airlock-hitl/server`: the HTTP API (JSON, problem+json errors, SSE, long-poll, Prometheus metrics,
// OpenAPI) with token authentication. Named exports only; everything else in this folder is internal.
//
// Visibility rule: a request the caller may not see is answered like one that does not exist
// (404), on every route; see access.ts.

// The channels themselves are `airlock-hitl/channels`; this is how the server mounts them.
export { inboundDeps, type ServerChannels } from "./channels.js";
export type { Principal } from "./env.js";
export type { Listening, ListenOptions } from "./lifecycle.js";
export { DEFAULT_LIMITS, type ServerLimits } from "./limits.js";
export { parseRateLimit, type RateLimitOptions, type RateLimitStore } from "./rate-limit.js";
export { type AirlockServer, createServer, type ServerOptions } from "./server.js";
export {
  type CreatedToken,
  createToken,
  hashToken,
  memoryTokenStore,
  ROLES,
  type Role,
  revokeToken,
  type TokenInput,
  type TokenRecord,
  type TokenStore,
} from "./tokens.js";
export { sqliteTokenStore } from "./tokens-sqlite.js";
