// The public API of `airlock`. Named exports only, listed one by one: everything else is internal.
export type { AuditKey, VerifyResult } from "./audit/chain.js";
export {
  isSensitiveKey,
  REDACTED,
  type RedactOptions,
  redact,
  redactString,
} from "./audit/redact.js";
export { type VerifyOptions, verifyAuditLog } from "./audit/verify.js";
export {
  type ConsoleDecision,
  operatorDecision,
  type PromptOptions,
  promptOperator,
  reviewTimeoutMs,
} from "./channels/console.js";
export { type ReviewOptions, type ReviewResult, runReview } from "./channels/review.js";
// For the receivers of Airlock's outgoing webhooks (Standard Webhooks signatures).
export {
  generateWebhookSecret,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from "./channels/webhook.js";
export { type AirlockClient, type ClientOptions, createClient } from "./client/index.js";
export { type ExecutionCheck, verifyApproval } from "./core/binding.js";
export type { Clock } from "./core/clock.js";
export {
  AirlockError,
  ConflictError,
  ERROR_CODES,
  type ErrorCode,
  ForbiddenError,
  InvalidInputError,
  isAirlockError,
  NotFoundError,
  QuotaExceededError,
  TimeoutError,
} from "./core/errors.js";
export { canonicalJson, hashArgs } from "./core/hash.js";
export { normalizeIdentity, sameIdentity } from "./core/identity.js";
export { jsonDepthExceeds, MAX_ESCALATION_DEPTH, MAX_JSON_DEPTH } from "./core/limits.js";
export type { Metrics, MetricsBucket } from "./core/metrics.js";
export type {
  OutboxDraft,
  OutboxMessage,
  OutboxSettlement,
  OutboxStatus,
  OutboxTopic,
} from "./core/outbox.js";
export type { Policy, PolicyContext, PolicyVerdict } from "./core/policy.js";
export { presentationOf, type RequestPresentation } from "./core/presentation.js";
export type {
  ApprovalRequest,
  AuditEvent,
  Channel,
  Critique,
  Decision,
  DecisionInput,
  Estimate,
  EventType,
  HitlInfo,
  Item,
  Labels,
  Level,
  Method,
  OnTimeout,
  Outcome,
  Progress,
  RecordInput,
  RequestInput,
  Risk,
  Status,
} from "./core/schemas.js";
export {
  approvalRequestSchema,
  auditEventSchema,
  decisionInputSchema,
  decisionSchema,
  RECORDABLE_EVENT_TYPES,
  recordInputSchema,
  requestInputSchema,
} from "./core/schemas.js";
export { canDecide, isOverdue, mayDecide } from "./core/state.js";
export type {
  CountOptions,
  InsertOptions,
  ListFilter,
  ListOrder,
  Page,
  PendingQuota,
  RequestSummary,
  Store,
} from "./core/store.js";
export type {
  TrustRule,
  TrustRuleInsert,
  TrustRuleRevoke,
  TrustScope,
  TrustWidening,
  ValueConstraint,
} from "./core/trust-rule.js";
export type { AirlockApi } from "./engine/api.js";
export {
  type Airlock,
  type AirlockOptions,
  type CancelOptions,
  createAirlock,
  type EventsOptions,
  type RequestOptions,
  type WaitOptions,
} from "./engine/engine.js";
export {
  type NotRunReason,
  type RunApprovedOptions,
  type RunApprovedResult,
  runApproved,
} from "./engine/run-approved.js";
export { argsShape, argsShapeHash } from "./policy/args-shape.js";
export { firstVerdict, strictestVerdict } from "./policy/compose.js";
export {
  type ApprovalThresholds,
  BASE_SCORES,
  type ConfidenceContext,
  calculateConfidence,
  DEFAULT_THRESHOLDS,
  determineApprovalLevel,
} from "./policy/confidence.js";
export { type ConfidencePolicyOptions, confidencePolicy } from "./policy/confidence-policy.js";
export {
  createLearnedTrust,
  DEFAULT_TRUST_THRESHOLD,
  type LearnedTrust,
  type LearnedTrustOptions,
  learnedTrustPolicy,
  suggestTrustRules,
  type TrustSuggestion,
} from "./policy/learned-trust.js";
export {
  forActions,
  isSmallFileWrite,
  type RulePredicate,
  smallFileWrites,
  when,
} from "./policy/rules.js";
export { type FormatOptions, formatRequest, type MessageStyle } from "./reply/format.js";
export { type ParsedReply, parseReply, type ReplyItem, replyToDecision } from "./reply/parse.js";
export { memoryStore } from "./store/memory.js";
export type { HitlConfig, HitlGate, PublicHitlConfig, ResolvedHitlConfig } from "./tools/config.js";
export { createExampleTools, getHitlTools } from "./tools/examples.js";
export {
  getHitlConfig,
  type HitlCall,
  type HitlContext,
  type HitlTool,
  hitlTool,
  isHitlTool,
} from "./tools/hitl-tool.js";
export {
  type HitlPending,
  type HitlRejection,
  type HitlResult,
  isHitlPending,
  isHitlRejection,
} from "./tools/results.js";
