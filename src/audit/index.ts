// `airlock-hitl/audit`: verifying the audit log's hash chain, and the redaction that guards it (an
// engine's own key names: `createAirlock({ redaction: { keys } })`). Named exports only.
export type { AuditKey, VerifyResult } from "./chain.js";
export {
  createRedactor,
  isSensitiveKey,
  REDACTED,
  type RedactionOptions,
  type RedactOptions,
  type Redactor,
  redact,
  redactString,
} from "./redact.js";
export { type VerifyOptions, verifyAuditLog } from "./verify.js";
