// What the three stores share about learned trust rules (src/core/trust-rule.ts): the checks before
// a write, and the SQL row of a rule, so they accept, refuse and read back alike.
import { AirlockError, InvalidInputError } from "../core/errors.js";
import { type TrustRule, trustScopeSchema } from "../core/trust-rule.js";
import { columnText } from "./storable.js";

/** Refuses a rule the stores could not keep as written, or that is not a new active rule. */
export function checkTrustRule(rule: TrustRule): void {
  columnText(rule.id, "id");
  columnText(rule.action, "action");
  columnText(rule.shapeHash, "shapeHash");
  columnText(rule.shape, "shape");
  columnText(rule.createdBy, "createdBy");
  if (!Number.isSafeInteger(rule.approvals) || rule.approvals < 0) {
    throw new InvalidInputError("`approvals` must be a non-negative integer", "approvals");
  }
  if (rule.revokedAt !== undefined || rule.revokedBy !== undefined) {
    throw new InvalidInputError("a new trust rule cannot be revoked already", "revokedAt");
  }
  if (rule.scope !== undefined) {
    const parsed = trustScopeSchema.safeParse(rule.scope);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InvalidInputError(
        `\`scope\` is not a trust rule's scope: ${issue?.path.join(".") || "scope"}: ${issue?.message ?? "invalid"}`,
        "scope",
      );
    }
    columnText(scopeText(rule), "scope");
  }
}

/** The scope column of a rule: its JSON text, or null for a rule without one. */
export function scopeText(rule: TrustRule): string | null {
  return rule.scope === undefined ? null : JSON.stringify(rule.scope);
}

/** A rule as the SQL stores keep it. */
export interface TrustRuleRow {
  id: string;
  action: string;
  shape_hash: string;
  shape: string;
  approvals: number | string;
  created_by: string;
  created_at: number | string;
  revoked_by: string | null;
  revoked_at: number | string | null;
  /** JSON (migration 11); null for rules accepted before it. */
  scope: string | null;
}

/** The rule of a row (PostgreSQL returns bigint columns as strings). */
export function trustRuleOf(row: TrustRuleRow): TrustRule {
  const rule: TrustRule = {
    id: row.id,
    action: row.action,
    shapeHash: row.shape_hash,
    shape: row.shape,
    approvals: Number(row.approvals),
    createdBy: row.created_by,
    createdAt: Number(row.created_at),
  };
  const scope = scopeOf(row.scope);
  if (scope) rule.scope = scope;
  if (row.revoked_by !== null) rule.revokedBy = row.revoked_by;
  if (row.revoked_at !== null) rule.revokedAt = Number(row.revoked_at);
  return rule;
}

/** A stored scope; one that does not read as a scope is left out, so its rule approves nothing
 * (failing closed) while it can still be listed and revoked. */
function scopeOf(text: string | null): TrustRule["scope"] {
  if (text === null) return undefined;
  try {
    const parsed = trustScopeSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The conflict every store raises when a rule's id is taken. */
export function trustRuleIdTaken(id: string, cause?: unknown): AirlockError {
  const message = `trust rule id \`${id}\` already exists`;
  return cause === undefined
    ? new AirlockError("conflict", message)
    : new AirlockError("conflict", message, { cause });
}

/** The order of a listing: oldest first (as the SQL stores' ORDER BY created_at, id). */
export function byAge(a: TrustRule, b: TrustRule): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
