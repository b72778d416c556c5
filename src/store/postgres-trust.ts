// The PostgreSQL store's learned trust rules (src/core/trust-rule.ts): the table's migration and the
// statements. Each write is one transaction with its audit events (appended by the store, which
// owns the chain); a partial unique index keeps one active rule per action and shape, so two admins
// accepting the same suggestion at once, on two servers, store one rule.
import type { PoolClient } from "pg";
import { AirlockError } from "../core/errors.js";
import type { AuditDraft, AuditEvent } from "../core/schemas.js";
import type { Store } from "../core/store.js";
import type { TrustRuleInsert, TrustRuleRevoke } from "../core/trust-rule.js";
import type { Step } from "./postgres-client.js";
import { checkDrafts } from "./storable.js";
import {
  checkTrustRule,
  scopeText,
  type TrustRuleRow,
  trustRuleIdTaken,
  trustRuleOf,
} from "./trust-rows.js";

/** The migration that creates the table, for the quoted schema `s`. */
export function postgresTrustRulesSql(s: string): string {
  return `
    CREATE TABLE ${s}.trust_rules (
      id text COLLATE "C" PRIMARY KEY,
      action text NOT NULL,
      shape_hash text NOT NULL,
      shape text NOT NULL,
      approvals integer NOT NULL,
      created_by text NOT NULL,
      created_at double precision NOT NULL,
      revoked_by text,
      revoked_at double precision
    );
    CREATE UNIQUE INDEX trust_rules_active ON ${s}.trust_rules (action, shape_hash)
      WHERE revoked_at IS NULL;
  `;
}

/** Migration 11: each rule's scope (core/trust-rule.ts), as JSON text; rules accepted before it
 * have none and approve nothing. */
export function postgresTrustScopeSql(s: string): string {
  return `ALTER TABLE ${s}.trust_rules ADD COLUMN scope text;`;
}

/** PostgreSQL's unique_violation: here only the primary key can raise it. */
const UNIQUE_VIOLATION = "23505";

type TrustMethods = Required<Pick<Store, "insertTrustRule" | "listTrustRules" | "revokeTrustRule">>;

export interface PostgresTrustDeps {
  /** The quoted schema name. */
  schema: string;
  /** Runs `fn` on a pooled connection with the store's failure rules. */
  run<T>(what: string, fn: (c: PoolClient, step: Step) => Promise<T>): Promise<T>;
  /** Inside the transaction `fn` began: appends `drafts` to the audit chain and commits. */
  appendAndCommit(c: PoolClient, step: Step, drafts: AuditDraft[]): Promise<AuditEvent[]>;
}

export function postgresTrustRules(deps: PostgresTrustDeps): TrustMethods {
  const t = `${deps.schema}.trust_rules`;
  return {
    async insertTrustRule(rule, events) {
      checkTrustRule(rule);
      checkDrafts(events);
      return deps.run("insertTrustRule", async (c, step): Promise<TrustRuleInsert> => {
        await c.query("BEGIN");
        let inserted: TrustRuleRow | undefined;
        try {
          const res = await c.query<TrustRuleRow>(
            `INSERT INTO ${t} (id, action, shape_hash, shape, approvals, created_by, created_at, scope)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (action, shape_hash) WHERE revoked_at IS NULL DO NOTHING
             RETURNING *`,
            [
              rule.id,
              rule.action,
              rule.shapeHash,
              rule.shape,
              rule.approvals,
              rule.createdBy,
              rule.createdAt,
              scopeText(rule),
            ],
          );
          inserted = res.rows[0];
        } catch (err) {
          await c.query("ROLLBACK");
          if ((err as { code?: string }).code === UNIQUE_VIOLATION)
            throw trustRuleIdTaken(rule.id, err);
          throw err;
        }
        if (!inserted) {
          const active = await c.query<TrustRuleRow>(
            `SELECT * FROM ${t} WHERE action = $1 AND shape_hash = $2 AND revoked_at IS NULL`,
            [rule.action, rule.shapeHash],
          );
          await c.query("ROLLBACK");
          const row = active.rows[0];
          if (!row) {
            throw new AirlockError(
              "conflict",
              `the active trust rule for \`${rule.action}\` with this shape changed meanwhile; try again`,
            );
          }
          return { rule: trustRuleOf(row), created: false, events: [] };
        }
        const appended = await deps.appendAndCommit(c, step, events);
        return { rule: trustRuleOf(inserted), created: true, events: appended };
      });
    },

    async listTrustRules(options = {}) {
      const where = options.includeRevoked ? "" : "WHERE revoked_at IS NULL";
      return deps.run("listTrustRules", async (c) => {
        const res = await c.query<TrustRuleRow>(
          `SELECT * FROM ${t} ${where} ORDER BY created_at, id`,
        );
        return res.rows.map(trustRuleOf);
      });
    },

    async revokeTrustRule(id, by, at, events) {
      checkDrafts(events);
      return deps.run("revokeTrustRule", async (c, step): Promise<TrustRuleRevoke> => {
        await c.query("BEGIN");
        const res = await c.query<TrustRuleRow>(
          `UPDATE ${t} SET revoked_by = $2, revoked_at = $3 WHERE id = $1 AND revoked_at IS NULL
           RETURNING *`,
          [id, by, at],
        );
        const row = res.rows[0];
        if (!row) {
          const current = await c.query<TrustRuleRow>(`SELECT * FROM ${t} WHERE id = $1`, [id]);
          await c.query("ROLLBACK");
          const found = current.rows[0];
          return { rule: found ? trustRuleOf(found) : undefined, revoked: false, events: [] };
        }
        const appended = await deps.appendAndCommit(c, step, events);
        return { rule: trustRuleOf(row), revoked: true, events: appended };
      });
    },
  };
}
