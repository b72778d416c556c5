// Who may decide what, indexed, on the SQLite store. A reviewer lists what it may decide: the
// requests whose approvers share a name with it, or that have none (open to everyone). Checked row
// by row (json_each over `approvers`), that is cheap for a reviewer of most requests: the listing's
// order index gives a page after a few rows. For a reviewer of one request in a hundred it reads a
// hundred rows per row listed, and a search for a text none of its requests holds reads them all
// (seconds at a million requests).
//
// So a table keeps one row per (approver, request): `request_approvers (approver, status, id)` with
// the request's deadline key and lower-cased title, written by triggers on `requests` (a request with
// no approvers is kept under OPEN, the empty name, which no identity has). A listing by approver
// first counts that reviewer's rows in the index, up to NARROW_ROWS; fewer, and the page is read
// from them alone (narrowSql); more, and the usual listing follows (most rows pass the filter).
import type { ListFilter } from "../core/store.js";
import { clampLimit, listedStatuses, listOrder, parseCursor } from "./paging.js";

/** The name a request with no approvers is kept under: names are never empty (schemas.ts). */
export const OPEN = "";

/** A reviewer with fewer rows than this in the index (of the statuses listed) is listed from them:
 * reading and sorting 50,000 index entries took a few ms. */
export const NARROW_ROWS = 50_000;

/** How long a store keeps what the count said for a reviewer and statuses. */
export const NARROW_MAX_AGE_MS = 60_000;

const NAMES = (row: "new" | "old") =>
  `json_each(CASE WHEN ${row}.approvers = '[]' THEN '["${OPEN}"]' ELSE ${row}.approvers END)`;

/** Migration 9: the table, filled from every request, and the triggers that keep it equal to
 * `requests`. Re-runnable. `deadlineKey` is how the store writes a row's deadline key. */
export function approverIndexSql(deadlineKey: (row: string) => string): string {
  const insert = (row: "new" | "old") => `
    INSERT OR IGNORE INTO request_approvers (approver, status, id, dkey, title_lower)
      SELECT value, ${row}.status, ${row}.id, ${deadlineKey(row)}, ${row}.title_lower FROM ${NAMES(row)};`;
  const remove = (row: "new" | "old") => `
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
      SELECT j.value, r.status, r.id, ${deadlineKey("r")}, r.title_lower
      FROM requests AS r, json_each(CASE WHEN r.approvers = '[]' THEN '["${OPEN}"]' ELSE r.approvers END) AS j;
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

/** The names a filter's approver matches in the index: its own, and OPEN. */
export function approverKeys(filter: ListFilter): string[] | undefined {
  if (filter.approver === undefined) return undefined;
  const names = Array.isArray(filter.approver) ? filter.approver : [filter.approver];
  return [...new Set([...names, OPEN])];
}

/** Whether a listing may be read from the index alone: it filters by approver and by nothing the
 * index does not hold. */
export function narrowable(filter: ListFilter): boolean {
  return (
    filter.approver !== undefined && filter.action === undefined && filter.requester === undefined
  );
}

const statusIn = (statuses: string[]) =>
  statuses.length ? ` AND status IN (${statuses.map(() => "?").join(",")})` : "";

/** Counts the filter's rows in the index, up to NARROW_ROWS (`limit`). */
export function narrowCountSql(filter: ListFilter, limit = NARROW_ROWS) {
  const keys = approverKeys(filter) ?? [];
  const statuses = listedStatuses(filter);
  return {
    sql: `SELECT count(*) AS n FROM (SELECT 1 FROM request_approvers WHERE approver IN (${keys.map(() => "?").join(",")})${statusIn(statuses)} LIMIT ?)`,
    params: [...keys, ...statuses, limit],
  };
}

/** A page of the listing (one row more when another follows) read from the index: the ids (each
 * once, though several of the reviewer's names may hold it) in the listing's order after the
 * cursor, then their rows. `columns` are read from `requests`, with the deadline key as `dkey`. */
export function narrowSql(filter: ListFilter, columns: string) {
  const keys = approverKeys(filter) ?? [];
  const statuses = listedStatuses(filter);
  const order = listOrder(filter);
  const cursor = parseCursor(order, filter.cursor);
  const where = [`approver IN (${keys.map(() => "?").join(",")})${statusIn(statuses)}`];
  const params: unknown[] = [...keys, ...statuses];
  if (filter.q !== undefined && filter.q !== "") {
    // Exactly titleMatches (paging.ts): the lower-cased title contains the lower-cased text.
    where.push("instr(title_lower, ?) > 0");
    params.push(filter.q.toLowerCase());
  }
  if (cursor?.order === "deadline") {
    where.push("(dkey > ? OR (dkey = ? AND id > ?))");
    params.push(cursor.key, cursor.key, cursor.id);
  } else if (cursor) {
    where.push(order === "newest" ? "id < ?" : "id > ?");
    params.push(cursor.id);
  }
  const orderBy = order === "deadline" ? "dkey, id" : order === "newest" ? "id DESC" : "id";
  const limit = clampLimit(filter.limit);
  const ids = `SELECT id AS found, dkey AS found_dkey FROM request_approvers WHERE ${where.join(" AND ")} GROUP BY id ORDER BY ${orderBy} LIMIT ?`;
  // CROSS JOIN: the few ids found lead, each row read by its id.
  const sql = `SELECT ${columns}, found_dkey AS dkey FROM (${ids}) CROSS JOIN requests ON requests.id = found ORDER BY ${orderBy.replace("dkey", "found_dkey").replace(/\bid\b/, "found")}`;
  return { sql, params: [...params, limit + 1], order, limit };
}
