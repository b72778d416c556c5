// The SQLite store's learned trust rules (src/core/trust-rule.ts): the table's migration and the
// statements. Each write runs in one IMMEDIATE transaction with its audit events, so a rule is never
// stored (or revoked) without its record in the chain, and two admins accepting the same suggestion
// at once store one rule.
import type Database from "better-sqlite3";
import type { AuditDraft, AuditEvent } from "../core/schemas.js";
import type { Store } from "../core/store.js";
import type { TrustRule, TrustRuleInsert, TrustRuleRevoke } from "../core/trust-rule.js";
import { checkDrafts } from "./storable.js";
import {
  checkTrustRule,
  scopeText,
  type TrustRuleRow,
  trustRuleIdTaken,
  trustRuleOf,
} from "./trust-rows.js";

/** The migration that creates the table: at most one active rule per action and shape. */
export const SQLITE_TRUST_RULES_SQL = `
  CREATE TABLE trust_rules (
    id TEXT PRIMARY KEY,
    action TEXT NOT NULL,
    shape_hash TEXT NOT NULL,
    shape TEXT NOT NULL,
    approvals INTEGER NOT NULL,
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_by TEXT,
    revoked_at INTEGER
  );
  CREATE UNIQUE INDEX trust_rules_active ON trust_rules (action, shape_hash) WHERE revoked_at IS NULL;
`;

/** Migration 11: each rule's scope (core/trust-rule.ts), as JSON; rules accepted before it have
 * none and approve nothing. */
export const SQLITE_TRUST_SCOPE_SQL = "ALTER TABLE trust_rules ADD COLUMN scope TEXT;";

type TrustMethods = Required<Pick<Store, "insertTrustRule" | "listTrustRules" | "revokeTrustRule">>;

export interface SqliteTrustDeps {
  db: Database.Database;
  /** Appends events to the chain inside the caller's transaction. */
  appendChain(drafts: AuditDraft[]): AuditEvent[];
  /** Runs a statement, waiting while another process holds the lock (the store's own). */
  attempt<T>(what: string, fn: () => T): Promise<T>;
  /** Passes the appended events to the checkpoint writer. */
  noted<T extends { events: AuditEvent[] }>(result: T): T;
}

export function sqliteTrustRules(deps: SqliteTrustDeps): TrustMethods {
  const { db } = deps;
  const stmt = {
    active: db.prepare<[string, string], TrustRuleRow>(
      "SELECT * FROM trust_rules WHERE action = ? AND shape_hash = ? AND revoked_at IS NULL",
    ),
    insert: db.prepare(
      `INSERT INTO trust_rules (id, action, shape_hash, shape, approvals, created_by, created_at, scope)
       VALUES (@id, @action, @shape_hash, @shape, @approvals, @created_by, @created_at, @scope)`,
    ),
    byId: db.prepare<[string], TrustRuleRow>("SELECT * FROM trust_rules WHERE id = ?"),
    revoke: db.prepare(
      "UPDATE trust_rules SET revoked_by = ?, revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
    ),
    listActive: db.prepare<[], TrustRuleRow>(
      "SELECT * FROM trust_rules WHERE revoked_at IS NULL ORDER BY created_at, id",
    ),
    listAll: db.prepare<[], TrustRuleRow>("SELECT * FROM trust_rules ORDER BY created_at, id"),
  };

  const insertTx = db.transaction((rule: TrustRule, drafts: AuditDraft[]): TrustRuleInsert => {
    const active = stmt.active.get(rule.action, rule.shapeHash);
    if (active) return { rule: trustRuleOf(active), created: false, events: [] };
    try {
      stmt.insert.run({
        id: rule.id,
        action: rule.action,
        shape_hash: rule.shapeHash,
        shape: rule.shape,
        approvals: rule.approvals,
        created_by: rule.createdBy,
        created_at: rule.createdAt,
        scope: scopeText(rule),
      });
    } catch (err) {
      if ((err as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
        throw trustRuleIdTaken(rule.id, err);
      }
      throw err;
    }
    return { rule: { ...rule }, created: true, events: deps.appendChain(drafts) };
  });

  const revokeTx = db.transaction(
    (id: string, by: string, at: number, drafts: AuditDraft[]): TrustRuleRevoke => {
      const changed = stmt.revoke.run(by, at, id).changes > 0;
      const row = stmt.byId.get(id);
      const rule = row ? trustRuleOf(row) : undefined;
      return changed
        ? { rule, revoked: true, events: deps.appendChain(drafts) }
        : { rule, revoked: false, events: [] };
    },
  );

  return {
    async insertTrustRule(rule, events) {
      checkTrustRule(rule);
      checkDrafts(events);
      return deps.noted(
        await deps.attempt("insertTrustRule", () => insertTx.immediate(rule, events)),
      );
    },
    async listTrustRules(options = {}) {
      const st = options.includeRevoked ? stmt.listAll : stmt.listActive;
      return deps.attempt("listTrustRules", () => st.all().map(trustRuleOf));
    },
    async revokeTrustRule(id, by, at, events) {
      checkDrafts(events);
      return deps.noted(
        await deps.attempt("revokeTrustRule", () => revokeTx.immediate(id, by, at, events)),
      );
    },
  };
}
