// The memory store's learned trust rules: the same rules as the SQL stores' statements (one active
// rule per action and shape; revoking is once), each write appending its audit events with it.
import type { AuditDraft, AuditEvent } from "../core/schemas.js";
import type { Store } from "../core/store.js";
import type { TrustRule } from "../core/trust-rule.js";
import { checkDrafts } from "./storable.js";
import { byAge, checkTrustRule, trustRuleIdTaken } from "./trust-rows.js";

type TrustMethods = Required<Pick<Store, "insertTrustRule" | "listTrustRules" | "revokeTrustRule">>;

export function memoryTrustRules(deps: {
  guard(): void;
  append(drafts: AuditDraft[]): AuditEvent[];
}): TrustMethods {
  const rules: TrustRule[] = [];
  const copy = (r: TrustRule): TrustRule => structuredClone(r);
  return {
    async insertTrustRule(rule, events) {
      deps.guard();
      checkTrustRule(rule);
      checkDrafts(events);
      const active = rules.find(
        (r) =>
          r.revokedAt === undefined && r.action === rule.action && r.shapeHash === rule.shapeHash,
      );
      if (active) return { rule: copy(active), created: false, events: [] };
      if (rules.some((r) => r.id === rule.id)) throw trustRuleIdTaken(rule.id);
      rules.push(copy(rule));
      return { rule: copy(rule), created: true, events: deps.append(events) };
    },
    async listTrustRules(options = {}) {
      deps.guard();
      return rules
        .filter((r) => options.includeRevoked || r.revokedAt === undefined)
        .sort(byAge)
        .map(copy);
    },
    async revokeTrustRule(id, by, at, events) {
      deps.guard();
      checkDrafts(events);
      const rule = rules.find((r) => r.id === id);
      if (!rule || rule.revokedAt !== undefined) {
        return { rule: rule && copy(rule), revoked: false, events: [] };
      }
      rule.revokedBy = by;
      rule.revokedAt = at;
      return { rule: copy(rule), revoked: true, events: deps.append(events) };
    },
  };
}
