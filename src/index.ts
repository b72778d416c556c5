// The public API of `airlock-hitl`: what most programs need, at most 40 names (test/house/
// public-api.test.ts counts them). Named exports only, listed one by one; each name lives in one
// entry. The rest is in subpaths (package.json "exports"): `/core` (schemas, the store port, the
// state rules), `/policy`, `/audit`, `/tools`, `/channels`, `/console`, `/server`, the stores and the
// adapters. Everything else is internal.

// The HTTP client, with the engine's verbs.
export { type AirlockClient, createClient } from "./client/index.js";
// Binding: the args a decision approved, checked before running.
export { verifyApproval } from "./core/binding.js";
// Its errors.
export {
  AirlockError,
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  isAirlockError,
  NotFoundError,
  QuotaExceededError,
  TimeoutError,
} from "./core/errors.js";
export { hashArgs } from "./core/hash.js";
export type { Policy, PolicyVerdict } from "./core/policy.js";
// What a program writes against.
export type {
  ApprovalRequest,
  Decision,
  DecisionInput,
  RequestInput,
  Status,
} from "./core/schemas.js";
// The engine.
export type { AirlockApi } from "./engine/api.js";
export { type Airlock, type AirlockOptions, createAirlock } from "./engine/engine.js";
export { runApproved } from "./engine/run-approved.js";
// Policies.
export { firstVerdict } from "./policy/compose.js";
export { confidencePolicy } from "./policy/confidence-policy.js";
export { createLearnedTrust } from "./policy/learned-trust.js";
export { smallFileWrites, when } from "./policy/rules.js";
// Replies and messages.
export { formatRequest } from "./reply/format.js";
export { parseReply, replyToDecision } from "./reply/parse.js";
export { memoryStore } from "./store/memory.js";
// Tools wrapped with a gate.
export type { HitlConfig } from "./tools/config.js";
export { getHitlConfig, hitlTool, isHitlTool } from "./tools/hitl-tool.js";
export { isHitlPending, isHitlRejection } from "./tools/results.js";
