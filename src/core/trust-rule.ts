// A learned trust rule: an admin's standing approval of one action called with one args shape (see
// src/policy/args-shape.ts), accepted after people approved that call many times in a row. Stores keep
// the rules (Store.insertTrustRule and friends) and write each acceptance and revocation to the audit
// log in the same transaction, as a `notified` event whose `data.kind` says which.
import { monotonicFactory } from "ulid";
import type { AuditDraft, AuditEvent } from "./schemas.js";

export interface TrustRule {
  /** `trust_<ulid>`: sorts by creation time. */
  id: string;
  action: string;
  /** SHA-256 of the canonical args shape: what a new call's args must hash to. */
  shapeHash: string;
  /** The canonical args shape itself, for people to read. */
  shape: string;
  /** How many people's approvals in a row stood behind the rule when it was accepted. */
  approvals: number;
  /** The admin who accepted it, and when (epoch ms). */
  createdBy: string;
  createdAt: number;
  /** Set once revoked: the rule no longer applies. */
  revokedBy?: string;
  revokedAt?: number;
}

export interface TrustRuleInsert {
  /** The stored rule: the new one, or the active rule that already covered the same action and
   * shape (then nothing was written). */
  rule: TrustRule;
  created: boolean;
  events: AuditEvent[];
}

export interface TrustRuleRevoke {
  /** The rule as stored after the call; undefined when no rule has this id. */
  rule: TrustRule | undefined;
  /** False when the rule was unknown or already revoked (then nothing was written). */
  revoked: boolean;
  events: AuditEvent[];
}

/** `data.kind` of the audit events of trust rules. */
export const TRUST_RULE_ACCEPTED = "trust_rule_accepted";
export const TRUST_RULE_REVOKED = "trust_rule_revoked";

const next = monotonicFactory();

export function newTrustRuleId(now: number): string {
  return `trust_${next(now).toLowerCase()}`;
}

/** The audit event of an accepted rule. */
export function trustRuleAccepted(rule: TrustRule): AuditDraft {
  return {
    type: "notified",
    actor: rule.createdBy,
    at: rule.createdAt,
    data: {
      kind: TRUST_RULE_ACCEPTED,
      ruleId: rule.id,
      action: rule.action,
      shapeHash: rule.shapeHash,
      shape: rule.shape,
      approvals: rule.approvals,
    },
  };
}

/** The audit event of a revoked rule. */
export function trustRuleRevoked(rule: TrustRule, by: string, at: number): AuditDraft {
  return {
    type: "notified",
    actor: by,
    at,
    data: {
      kind: TRUST_RULE_REVOKED,
      ruleId: rule.id,
      action: rule.action,
      shapeHash: rule.shapeHash,
    },
  };
}
