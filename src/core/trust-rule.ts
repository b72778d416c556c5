// A learned trust rule: an admin's standing approval of one action called with one args shape (see
// src/policy/args-shape.ts), accepted after people approved that call many times in a row. Stores keep
// the rules (Store.insertTrustRule and friends) and write each acceptance and revocation to the audit
// log in the same transaction, as a `notified` event whose `data.kind` says which.
//
// A rule approves no more than what earned it: its scope (learned in src/policy/trust-scope.ts) holds
// the requesters whose calls were approved, the people who approved them, the highest risk and quorum
// and the approver lists those calls named, and the values each field took. Only an admin widens it,
// at acceptance, and the acceptance's audit event says how.
import { monotonicFactory } from "ulid";
import { z } from "zod";
import { type AuditDraft, type AuditEvent, riskSchema } from "./schemas.js";

/** What one field of an earning call took (`path`: a JSON Pointer into `{args, items}`, where `*`
 * stands for every element of an array and a key spelled `*` is written `~2`). A call's value there
 * must be among `oneOf` (strings, booleans, null) or within `range` (numbers); an array's length
 * within `length`. */
export const valueConstraintSchema = z.object({
  path: z.string().max(2000),
  oneOf: z
    .array(z.union([z.string(), z.boolean(), z.null()]))
    .max(100)
    .optional(),
  range: z.object({ min: z.number(), max: z.number() }).optional(),
  length: z.object({ min: z.number().int(), max: z.number().int() }).optional(),
  /** Why the values were not learned (too many distinct values, or too long): no call is approved
   * with this field unless an admin widened it (`any`). */
  varies: z.string().max(500).optional(),
  /** Widened by an admin: any value is approved here. */
  any: z.boolean().optional(),
});
export type ValueConstraint = z.infer<typeof valueConstraintSchema>;

const who = z.string().min(1).max(200);

export const trustScopeSchema = z.object({
  /** The requesters whose calls earned the rule (normal form): only their calls are approved... */
  requesters: z.array(who).max(1000),
  /** ...unless an admin widened it to every requester. */
  anyRequester: z.boolean().optional(),
  /** The distinct people whose approvals earned the rule (normal form). */
  reviewers: z.array(who).max(1000),
  /** The highest risk an earning call stated; absent when none stated one. A call stating a higher
   * risk (or any risk, when absent) goes to a person. */
  maxRisk: riskSchema.optional(),
  /** The largest quorum an earning call asked for: a call asking more goes to a person. */
  maxQuorum: z.number().int().min(1),
  /** The approver lists the earning calls named (each in normal form, sorted; `[]`: anyone): a call
   * naming another list goes to a person. */
  approverSets: z.array(z.array(who).max(100)).max(100),
  values: z.array(valueConstraintSchema).max(10_000),
});
export type TrustScope = z.infer<typeof trustScopeSchema>;

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
  /** What the rule may approve (see the top of this file). Absent on a rule accepted before scopes
   * existed: such a rule approves nothing (revoke it and accept the suggestion again). */
  scope?: TrustScope;
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

/** What an admin widened at acceptance, beyond what the approvals earned. */
export interface TrustWidening {
  /** Every requester's calls, not only those of the requesters that earned it. */
  anyRequester?: boolean;
  /** Fields (paths of the scope's `values`) approved whatever their value. */
  anyValue?: string[];
}

/** The audit event of an accepted rule: its scope as given (the caller redacts it first) and what
 * the admin widened, if anything. */
export function trustRuleAccepted(
  rule: TrustRule,
  extra: { scope?: unknown; widened?: TrustWidening } = {},
): AuditDraft {
  const data: Record<string, unknown> = {
    kind: TRUST_RULE_ACCEPTED,
    ruleId: rule.id,
    action: rule.action,
    shapeHash: rule.shapeHash,
    shape: rule.shape,
    approvals: rule.approvals,
  };
  if (rule.scope) {
    data.requesters = rule.scope.anyRequester ? "any" : rule.scope.requesters;
    data.reviewers = rule.scope.reviewers;
  }
  if (extra.scope !== undefined) data.scope = extra.scope;
  if (extra.widened) data.widened = extra.widened;
  return { type: "notified", actor: rule.createdBy, at: rule.createdAt, data };
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
