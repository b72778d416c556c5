// The public API of `airlock`. Named exports only, listed one by one: everything else is internal.
export type { VerifyResult } from "./audit/chain.js";
export { isSensitiveKey, REDACTED, redact } from "./audit/redact.js";
export type { AirlockApi } from "./core/api.js";
export { type ExecutionCheck, verifyApproval } from "./core/binding.js";
export type { Clock } from "./core/clock.js";
export {
  type Airlock,
  type AirlockOptions,
  type CancelOptions,
  createAirlock,
  type EventsOptions,
  type WaitOptions,
} from "./core/engine.js";
export {
  AirlockError,
  ConflictError,
  type ErrorCode,
  ForbiddenError,
  InvalidInputError,
  isAirlockError,
  NotFoundError,
  TimeoutError,
} from "./core/errors.js";
export { canonicalJson, hashArgs } from "./core/hash.js";
export type { Metrics, MetricsBucket } from "./core/metrics.js";
export type {
  ApprovalRequest,
  AuditEvent,
  Channel,
  Decision,
  DecisionInput,
  EventType,
  Item,
  Level,
  Method,
  OnTimeout,
  Outcome,
  RequestInput,
  Risk,
  Status,
} from "./core/schemas.js";
export {
  approvalRequestSchema,
  auditEventSchema,
  decisionInputSchema,
  decisionSchema,
  requestInputSchema,
} from "./core/schemas.js";
export type { Policy, PolicyContext, PolicyVerdict } from "./policy/policy.js";
export { memoryStore } from "./store/memory.js";
export type { ListFilter, Page, Store } from "./store/store.js";
