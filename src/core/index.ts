// `airlock-hitl/core`: the core's schemas, types and rules beyond the root's, for code that builds on
// Airlock (a store of your own, a door, a tool): the request's parts, the Store port, the audit
// event, the state rules, hashing and identities. Named exports only; the rest of src/core is
// internal.
export type { Clock } from "./clock.js";
export { ERROR_CODES, type ErrorCode } from "./errors.js";
export { canonicalJson } from "./hash.js";
export { normalizeIdentity, sameIdentity } from "./identity.js";
export { jsonDepthExceeds, MAX_ESCALATION_DEPTH, MAX_JSON_DEPTH } from "./limits.js";
export type { Metrics, MetricsBucket } from "./metrics.js";
export type {
  OutboxDraft,
  OutboxMessage,
  OutboxSettlement,
  OutboxStatus,
  OutboxTopic,
} from "./outbox.js";
export type { PolicyContext } from "./policy.js";
export { presentationOf, type RequestPresentation } from "./presentation.js";
export {
  type AuditEvent,
  approvalRequestSchema,
  auditEventSchema,
  type Channel,
  type Critique,
  decisionInputSchema,
  decisionSchema,
  type Estimate,
  type EventType,
  type HitlInfo,
  type Item,
  type Labels,
  type Level,
  type Method,
  type OnTimeout,
  type Outcome,
  type Progress,
  RECORDABLE_EVENT_TYPES,
  type RecordInput,
  type Risk,
  recordInputSchema,
  requestInputSchema,
} from "./schemas.js";
export { canDecide, isOverdue, mayDecide } from "./state.js";
export type {
  CountOptions,
  InsertOptions,
  ListFilter,
  ListOrder,
  Page,
  PendingQuota,
  RequestSummary,
  Store,
} from "./store.js";
export type {
  TrustRule,
  TrustRuleInsert,
  TrustRuleRevoke,
  TrustScope,
  TrustWidening,
  ValueConstraint,
} from "./trust-rule.js";
