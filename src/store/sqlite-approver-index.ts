// The SQLite store's approver index (approver-index.ts says what it is for and how it is read):
// the table and the triggers that keep it equal to `requests`.
import { type Dialect, OPEN } from "./approver-index.js";

/** How the SQLite store's reads of the index are written. */
export const SQLITE_APPROVER_DIALECT: Dialect = {
  param: (values, v) => {
    values.push(v);
    return "?";
  },
  contains: (column, q) => `instr(${column}, ${q}) > 0`,
  requests: "requests",
  index: "request_approvers",
  join: "CROSS JOIN",
};

const NAMES = (row: string) =>
  `json_each(CASE WHEN ${row}.approvers = '[]' THEN '["${OPEN}"]' ELSE ${row}.approvers END)`;

/** Migration 9: the table, filled from every request, and the triggers that keep it equal to
 * `requests`. Re-runnable. `deadlineKey` writes a row's deadline key as the store does. */
export function approverIndexSql(deadlineKey: (row: string) => string): string {
  const insert = (row: string) => `
    INSERT OR IGNORE INTO request_approvers (approver, status, id, dkey, title_lower)
      SELECT value, ${row}.status, ${row}.id, ${deadlineKey(row)}, COALESCE(${row}.title_lower, '')
      FROM ${NAMES(row)};`;
  const remove = (row: string) => `
    DELETE FROM request_approvers WHERE approver IN (SELECT value FROM ${NAMES(row)})
      AND status = ${row}.status AND id = ${row}.id;`;
  return `
    CREATE TABLE IF NOT EXISTS request_approvers (
      approver TEXT NOT NULL,
      status TEXT NOT NULL,
      id TEXT NOT NULL,
      dkey REAL NOT NULL,
      title_lower TEXT NOT NULL,
      PRIMARY KEY (approver, status, id)
    ) WITHOUT ROWID;
    DELETE FROM request_approvers;
    INSERT OR IGNORE INTO request_approvers (approver, status, id, dkey, title_lower)
      SELECT j.value, r.status, r.id, ${deadlineKey("r")}, COALESCE(r.title_lower, '')
      FROM requests AS r, ${NAMES("r")} AS j;
    DROP TRIGGER IF EXISTS request_approvers_insert;
    DROP TRIGGER IF EXISTS request_approvers_update;
    DROP TRIGGER IF EXISTS request_approvers_delete;
    CREATE TRIGGER request_approvers_insert AFTER INSERT ON requests BEGIN ${insert("new")}
    END;
    CREATE TRIGGER request_approvers_update AFTER UPDATE OF approvers, status, deadline, title_lower
      ON requests
      WHEN old.approvers IS NOT new.approvers OR old.status IS NOT new.status
        OR old.deadline IS NOT new.deadline OR old.title_lower IS NOT new.title_lower
    BEGIN ${remove("old")} ${insert("new")}
    END;
    CREATE TRIGGER request_approvers_delete AFTER DELETE ON requests BEGIN ${remove("old")}
    END;
  `;
}
