// Who may decide what, indexed, in both SQL stores. A reviewer lists what it may decide: the
// requests whose approvers share a name with it, or that have none (open to everyone). Checked row
// by row, that is cheap for a reviewer of most requests: the listing's order index gives a page
// after a few rows. For a reviewer of one request in a hundred it reads a hundred rows per row
// listed, and a search for a text none of its requests holds reads them all (seconds at a million
// requests).
//
// So a table keeps one row per (approver, request): `request_approvers (approver, status, id)` with
// the request's deadline key (`dkey`) and lower-cased title, written by triggers on `requests` (a
// request with no approvers is kept under OPEN, the empty name, which no identity has). A store
// reads it for a reviewer of few requests: its share of the listing's newest rows is under
// NARROW_SHARE (above it, the listing's own order finds a page in a few rows, and that is cheaper).
// Newest or oldest first, a page is then the first rows of each of the reviewer's (name, status)
// lists, which the index holds in id order, merged. In deadline order, or with a search, every row
// of the reviewer's lists is read, so the store counts them too (up to narrowLimit) and reads the
// index only below it. Both estimates are kept NARROW_MAX_AGE_MS. The triggers are each store's
// own (sqlite-approver-index.ts, postgres-approver-index.ts); the reads are written here once.
import { InvalidInputError } from "../core/errors.js";
import { STATUSES } from "../core/schemas.js";
import type { ListFilter } from "../core/store.js";
import { clampLimit, listedStatuses, listOrder, parseCursor } from "./paging.js";

/** The name a request with no approvers is kept under: names are never empty (schemas.ts). */
export const OPEN = "";

/** A reviewer's listing in deadline order is read from the index when it has fewer rows than this
 * there (of the statuses listed): they are all read and sorted (50,000 took 10–15 ms). A search
 * reads all the reviewer's rows too, but sorts only its matches: SEARCH_FACTOR times as many. */
const NARROW_ROWS = 50_000;
const SEARCH_FACTOR = 2;

/** When a store reads a reviewer's listing from the index: `auto` (the default) as above; `always`
 * (every listing by approver alone, whatever its share and count); `never` (the row-by-row filter
 * always, as before the index). */
export type ApproverIndexUse = "auto" | "always" | "never";
export const APPROVER_INDEX_USES: readonly ApproverIndexUse[] = ["auto", "always", "never"];

/** The store option `approverIndex`, checked: an unknown value fails at start-up. */
export function approverIndexUse(v: unknown): ApproverIndexUse {
  if (v === undefined) return "auto";
  if (APPROVER_INDEX_USES.includes(v as ApproverIndexUse)) return v as ApproverIndexUse;
  throw new InvalidInputError(
    `Expected \`approverIndex\` to be "auto", "always" or "never", got ${JSON.stringify(v)}`,
    "approverIndex",
  );
}

/** How long a store keeps a reviewer's share and count of rows (per names and statuses): they change
 * slowly, and either way the listing is exact (only its speed depends on them). */
export const NARROW_MAX_AGE_MS = 10 * 60_000;

/** How a store writes SQL: a placeholder for the next value, the table names, and the join that
 * makes the ids found lead (SQLite's CROSS JOIN keeps its left side outside). */
export interface Dialect {
  param: (values: unknown[], v: unknown) => string;
  /** SQL true when text `column` contains the text of placeholder `q`. */
  contains: (column: string, q: string) => string;
  requests: string;
  index: string;
  join: string;
}

/** The names a filter's approver matches in the index: its own, and OPEN. */
function approverKeys(filter: ListFilter): string[] {
  const a = filter.approver;
  const names = a === undefined ? [] : Array.isArray(a) ? a : [a];
  return [...new Set([...names, OPEN])];
}

/** Whether a listing may be read from the index alone: it filters by approver and by nothing the
 * index does not hold. */
function narrowable(filter: ListFilter): boolean {
  return (
    filter.approver !== undefined &&
    filter.action === undefined &&
    filter.requester === undefined &&
    filter.execution === undefined
  );
}

/** The most (name, status) lists a listing merges (narrowSql); a reviewer with more is counted. */
const MAX_LISTS = 32;

/** A reviewer's share of a listing is estimated from the listing's newest SHARE_ROWS rows (of the
 * statuses listed): the index is read for a reviewer whose share is below NARROW_SHARE. Above it,
 * the listing's own order index finds a page within 20 rows per row listed, cheaper than the index
 * (whatever the count: with no approvers set, every request is every reviewer's). */
const SHARE_ROWS = 1000;
const NARROW_SHARE = 0.05;

/** How many of the listing's newest SHARE_ROWS rows (of the statuses listed) are the reviewer's,
 * as `n`: each checked in the index by its key. */
function shareSql(d: Dialect, filter: ListFilter) {
  const values: unknown[] = [];
  const statuses = listedStatuses(filter);
  const keys = approverKeys(filter).map((k) => d.param(values, k));
  const inStatus = statuses.length
    ? `WHERE status IN (${statuses.map((x) => d.param(values, x)).join(", ")})`
    : "";
  const sql = `SELECT count(*) AS n FROM (SELECT id, status FROM ${d.requests} ${inStatus}
      ORDER BY id DESC LIMIT ${SHARE_ROWS}) AS w
    WHERE EXISTS (SELECT 1 FROM ${d.index} AS a
      WHERE a.approver IN (${keys.join(", ")}) AND a.status = w.status AND a.id = w.id)`;
  return { sql, values };
}

/** The (name, status) lists a listing in id order merges. */
function lists(filter: ListFilter): number {
  return approverKeys(filter).length * (listedStatuses(filter).length || STATUSES.length);
}

/** Whether reading the listing from the index needs the reviewer's count of rows first. Newest
 * and oldest first without a search never do, up to MAX_LISTS lists: the index holds each
 * (name, status) in id order, so the page is the first rows of each, merged (narrowSql). */
function needsCount(filter: ListFilter): boolean {
  return (
    (filter.q !== undefined && filter.q !== "") ||
    listOrder(filter) === "deadline" ||
    lists(filter) > MAX_LISTS
  );
}

/** The most of a reviewer's rows (of the statuses listed) a listing reads from the index: a search
 * reads them all but sorts only its matches. The store counts the reviewer's rows up to this, and
 * reads from the index when the count stays below. */
function narrowLimit(filter: ListFilter): number {
  const searching = filter.q !== undefined && filter.q !== "";
  return searching ? NARROW_ROWS * SEARCH_FACTOR : NARROW_ROWS;
}

/** The reviewer's rows of the listed statuses, as conditions on the index. */
function scope(d: Dialect, filter: ListFilter, values: unknown[]): string[] {
  const list = (xs: string[]) => xs.map((x) => d.param(values, x)).join(", ");
  const where = [`approver IN (${list(approverKeys(filter))})`];
  const statuses = listedStatuses(filter);
  if (statuses.length) where.push(`status IN (${list(statuses)})`);
  return where;
}

/** Counts the filter's rows in the index, up to `limit`, as `n`. */
function narrowCountSql(d: Dialect, filter: ListFilter, limit = NARROW_ROWS) {
  const values: unknown[] = [];
  const where = scope(d, filter, values);
  const sql = `SELECT count(*) AS n FROM (SELECT 1 FROM ${d.index} WHERE ${where.join(" AND ")} LIMIT ${Math.trunc(limit)}) AS capped`;
  return { sql, values };
}

/** A figure a store reads to choose (a statement giving `n`), kept by `key`; the index is read only
 * when each figure, read in order, stays below its `below`. */
export interface Estimate {
  key: string;
  sql: string;
  values: unknown[];
  below: number;
}

/** Whether a store reads `filter`'s listing from the index: at once (`true`, `false`), or when the
 * estimates all stay below their bounds (the reviewer's share of the newest rows, then, in
 * deadline order or with a search, its count of rows). */
export function indexChoice(
  d: Dialect,
  filter: ListFilter,
  use: ApproverIndexUse,
): boolean | Estimate[] {
  if (!narrowable(filter) || use === "never") return false;
  if (use === "always") return true;
  const keyed = (tag: unknown, q: { sql: string; values: unknown[] }, below: number) => ({
    ...q,
    key: JSON.stringify([tag, ...q.values]),
    below,
  });
  const share = keyed("share", shareSql(d, filter), SHARE_ROWS * NARROW_SHARE);
  if (!needsCount(filter)) return [share];
  const limit = narrowLimit(filter);
  return [share, keyed(limit, narrowCountSql(d, filter, limit), limit)];
}

/** A page of the listing (one row more when another follows) read from the index, then their rows
 * from `requests` (`columns`, with the deadline key as `dkey`). Newest or oldest first: the first
 * rows after the cursor of each (name, status) in the index's own order, each list stopping at a
 * page, merged. Deadline order: all the reviewer's rows (matching the search), sorted. Each id
 * once, though several of the reviewer's names may hold it. */
export function narrowSql(d: Dialect, filter: ListFilter, columns: string) {
  const values: unknown[] = [];
  const order = listOrder(filter);
  const cursor = parseCursor(order, filter.cursor);
  const limit = clampLimit(filter.limit);
  const by = (id: string, dkey: string) =>
    order === "deadline" ? `${dkey}, ${id}` : order === "newest" ? `${id} DESC` : id;
  // The search's condition, and in id order the cursor's, written again (placeholders and all) in
  // each list that needs them: SQLite's placeholders are positional.
  const q = filter.q ? filter.q.toLowerCase() : undefined;
  const also = (): string[] => {
    const c: string[] = [];
    // Exactly titleMatches (paging.ts): the lower-cased title contains the lower-cased text.
    if (q !== undefined) c.push(d.contains("title_lower", d.param(values, q)));
    if (cursor && cursor.order !== "deadline") {
      c.push(`id ${order === "newest" ? "<" : ">"} ${d.param(values, cursor.id)}`);
    }
    return c;
  };
  let ids: string;
  if (order === "deadline" || lists(filter) > MAX_LISTS) {
    const where = [...scope(d, filter, values), ...also()];
    if (cursor?.order === "deadline") {
      // Each placeholder once: SQLite's are positional.
      const [after, at] = [d.param(values, cursor.key), d.param(values, cursor.key)];
      where.push(`(dkey > ${after} OR (dkey = ${at} AND id > ${d.param(values, cursor.id)}))`);
    }
    ids = `SELECT id AS found, min(dkey) AS found_dkey FROM ${d.index}
      WHERE ${where.join(" AND ")} GROUP BY id ORDER BY ${by("id", "min(dkey)")} LIMIT ${limit + 1}`;
  } else {
    const statuses = listedStatuses(filter);
    const arms: string[] = [];
    for (const key of approverKeys(filter)) {
      for (const status of statuses.length ? statuses : STATUSES) {
        const where = [
          `approver = ${d.param(values, key)}`,
          `status = ${d.param(values, status)}`,
          ...also(),
        ];
        arms.push(`SELECT * FROM (SELECT id, dkey FROM ${d.index} WHERE ${where.join(" AND ")}
          ORDER BY ${by("id", "dkey")} LIMIT ${limit + 1}) AS arm`);
      }
    }
    ids = `SELECT id AS found, min(dkey) AS found_dkey FROM (${arms.join(" UNION ALL ")}) AS arms
      GROUP BY id ORDER BY ${by("id", "min(dkey)")} LIMIT ${limit + 1}`;
  }
  const sql = `SELECT ${columns}, found_dkey AS dkey FROM (${ids}) AS a
    ${d.join} ${d.requests} ON ${d.requests}.id = a.found ORDER BY ${by("a.found", "a.found_dkey")}`;
  return { sql, values, order, limit };
}
