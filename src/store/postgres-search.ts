// Title search (ListFilter.q) on PostgreSQL. The trigram index (pg_trgm, GIN) finds titles holding a
// text's trigrams, but for ordinary words it returns tens of thousands of candidates at a million
// requests, and checking each reads its heap page: hundreds of ms. Yet a text that is not rare has
// its first page of matches among the listing's first rows in order. So:
// 1. walk: the listing's next `walkRows` rows in its order, read from the index that gives the order
//    alone (title_lower is included in it: migration 8), checking each title; the matches are read
//    by id with the whole filter; the page is full, or the listing ended, for most texts;
// 2. if not, a second walk after it, as long as how common the text is says a page needs (bounded);
// 3. only then the trigram index's candidates after the last row walked (the usual statement).
// Every row is checked against the whole text; the stages only decide what is read.
import type { ListFilter } from "../core/store.js";
import { clampLimit, cursorAfter, listedStatuses, listOrder, type Positioned } from "./paging.js";
import type { Query, Statements } from "./postgres-sql.js";

/** Rows the walk reads (the store's `titleWalkRows`): an index-only walk of 50,000 entries took
 * 10–25 ms warm at a million pending requests. */
export const WALK_ROWS = 50_000;

type Read = <R extends Positioned>(q: Query) => Promise<R[]>;

interface Walked {
  id: string;
  hit: boolean;
  dkey: number;
  /** The walk's length on its last row (reported with hit false, even when it matches), 0 on hits. */
  n: string | number;
}

/** The walk reads an index alone only for a listing of one status (its (status, order) index), or
 * of all statuses newest or oldest first (the primary key). Approver and action filters (a
 * reviewer's inbox, a filtered queue) are left out of the walk and checked when its matches are read
 * by id: most rows pass them. A requester filter passes few rows (one agent's own), so it goes to
 * the trigram index at once. */
export function walkable(filter: ListFilter): boolean {
  if (!filter.q) return false;
  if (filter.requester !== undefined || filter.execution !== undefined) return false;
  const statuses = listedStatuses(filter).length;
  return statuses === 1 || (statuses === 0 && listOrder(filter) !== "deadline");
}

/** The longest second walk, in walks of `walkRows`. When the first found some matches but not a
 * page, the second reads about as far as those matches say the rest of the page needs; when it found
 * none, as far as the share of the newest titles holding the text says (none: no second walk). */
const SECOND_WALK_MAX = 4;

/** The most hits a second walk stops at (and reads by id) when a filter drops some of them. */
const MAX_WALK_HITS = 1_000;

/** The rows of a search page in the listing's order (one more than the page when another follows),
 * each with its deadline key. `read` runs a statement and returns its rows. */
export async function searchRows<R extends Positioned>(
  sql: Statements,
  filter: ListFilter,
  columns: string,
  walkRows: number,
  read: Read,
  sampleShare: (q: string) => Promise<number>,
): Promise<R[]> {
  const limit = clampLimit(filter.limit);
  const order = listOrder(filter);
  const found: R[] = [];
  let from = filter;
  let rows = walkRows;
  // Hits the next walk stops at: a page's worth, or more when the filter drops some of them.
  let want = limit + 1;
  for (let round = 0; round < 2; round++) {
    const walked = await read<Walked & Positioned>(
      sql.walkTitles({ ...from, approver: undefined, action: undefined }, rows, want),
    );
    // At most `want` of them: the walk stops there.
    const hits = walked.filter((r) => r.hit);
    // The walk's last row, when the page of hits was not full and the walk read all it could (the
    // listing goes on, maybe).
    const last = walked.find((r) => Number(r.n) === rows);
    // Read with the whole filter: a hit another filter leaves out, or that left the listing since
    // (a decision), is dropped here.
    const kept = hits.length
      ? await read<R>(
          sql.listIds(
            hits.map((h) => h.id),
            columns,
            filter,
          ),
        )
      : [];
    found.push(...kept);
    if (found.length > limit) return found.slice(0, limit + 1);
    // Fewer than wanted, and the listing ended within the walk: every match was there.
    if (hits.length < want && !last) return found;
    // Some hits were dropped: go on after the last hit then; otherwise after the last row walked.
    const after = hits.length >= want ? (hits[hits.length - 1] as Walked) : (last as Walked);
    from = {
      ...filter,
      cursor: cursorAfter(order, { id: after.id, deadlineKey: Number(after.dkey) }),
    };
    // How common the text is among the rows listed: from the walk's matches the filter kept (over
    // the whole walk: a page of hits may have come sooner, so this errs towards walking more);
    // from the newest titles when the walk found no title at all. Hits the filter dropped every
    // one of say it passes few rows: the trigram index next.
    const share = hits.length > 0 ? kept.length / rows : await sampleShare(filter.q ?? "");
    if (share === 0) break;
    const missing = limit + 1 - found.length;
    // Three times the estimate, at least another walk's worth: matches come in clusters.
    const estimate = Math.ceil((missing / share) * 3);
    rows = Math.min(Math.max(estimate, walkRows), walkRows * SECOND_WALK_MAX);
    // As many hits as the filter's share of them says fill the page, with a margin (bounded).
    const keptShare = hits.length > 0 ? kept.length / hits.length : 1;
    want = Math.min(Math.ceil((missing / keptShare) * 1.5), MAX_WALK_HITS);
  }
  // The trigram index's candidates after the rows walked.
  const rest = sql.list({ ...from, limit: Math.max(1, limit - found.length) }, columns);
  return [...found, ...(await read<R>(rest))];
}
