// Paging shared by every store: page sizes, list orders and their cursors, so that the stores cannot
// drift apart in what a cursor means.
import { InvalidInputError } from "../core/errors.js";
import {
  type ApprovalRequest,
  EXECUTION_STATES,
  type ExecutionState,
  type Status,
} from "../core/schemas.js";
import {
  type CountOptions,
  LIST_ORDERS,
  type ListFilter,
  type ListOrder,
  type RequestSummary,
} from "../core/store.js";

/** The most rows one page of a listing returns. */
export const MAX_PAGE = 500;

/** Title search on the SQL stores estimates how common a text is from a sample of the newest
 * titles: how many it holds, and how long it is used before it is read again. */
export const SAMPLE_TITLES = 4000;
export const SAMPLE_MAX_AGE_MS = 10 * 60_000;

/** How many of `titles` hold `text` (both lower-cased): a sample's measure of how common it is. */
export function titlesHolding(titles: readonly string[], text: string): number {
  let n = 0;
  for (const t of titles) if (t.includes(text)) n++;
  return n;
}

/** The share of `titles` holding `text` (both lower-cased); 0 for no titles. */
export function shareHolding(titles: readonly string[], text: string): number {
  return titles.length === 0 ? 0 : titlesHolding(titles, text) / titles.length;
}

/** A page size within 1..MAX_PAGE; 50 when none is asked for. */
export function clampLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return 50;
  return Math.min(Math.max(Math.trunc(limit), 1), MAX_PAGE);
}

/** A count's cap as a safe integer (the SQL stores write it into the statement), or undefined. */
export function countCap(options: CountOptions): number | undefined {
  const { upTo } = options;
  if (upTo === undefined) return undefined;
  if (!Number.isSafeInteger(upTo) || upTo < 1) {
    throw new InvalidInputError(`count: upTo must be a positive integer, got ${upTo}`, "upTo");
  }
  return upTo;
}

/** The sort key of a request without a live deadline in `deadline` order: after every real one
 * (9e15 ms is past the largest date JavaScript can represent). The SQL stores index the same value. */
export const NO_DEADLINE = 9e15;

export function listOrder(filter: ListFilter): ListOrder {
  const order = filter.order ?? "newest";
  if (!LIST_ORDERS.includes(order)) {
    throw new InvalidInputError(
      `Expected \`order\` to be one of ${LIST_ORDERS.join(", ")}, got ${JSON.stringify(order)}`,
      "order",
    );
  }
  return order;
}

/** The statuses a filter lists (none: any status). */
export function listedStatuses(filter: ListFilter): Status[] {
  return filter.status === undefined
    ? []
    : Array.isArray(filter.status)
      ? filter.status
      : [filter.status];
}

/** The execution states a filter lists (none: any, claimed or not). */
export function listedExecutions(filter: ListFilter): ExecutionState[] {
  return filter.execution === undefined
    ? []
    : Array.isArray(filter.execution)
      ? filter.execution
      : [filter.execution];
}

/** A request's position in `deadline` order: its live deadline, or NO_DEADLINE. */
export function deadlineKey(r: Pick<ApprovalRequest, "status" | "deadline">): number {
  return r.status === "pending" && r.deadline !== undefined ? r.deadline : NO_DEADLINE;
}

/** The cursor after a row: its id in `newest` and `oldest` order, `<deadline key>:<id>` in
 * `deadline` order. */
export function cursorAfter(order: ListOrder, row: { id: string; deadlineKey: number }): string {
  return order === "deadline" ? `${row.deadlineKey}:${row.id}` : row.id;
}

export type Cursor =
  | { order: "newest" | "oldest"; id: string }
  | { order: "deadline"; key: number; id: string };

/** Reads `filter.cursor` for `order`; invalid_input when it is not a cursor of that order. */
export function parseCursor(order: ListOrder, cursor: string | undefined): Cursor | undefined {
  if (cursor === undefined) return undefined;
  if (order !== "deadline") return { order, id: cursor };
  const colon = cursor.indexOf(":");
  const key = colon > 0 ? Number(cursor.slice(0, colon)) : Number.NaN;
  if (!Number.isFinite(key) || colon === cursor.length - 1) {
    throw new InvalidInputError(
      `\`cursor\` ${JSON.stringify(cursor)} is not a cursor of a listing in deadline order: pass the nextCursor of the previous page with the same order`,
      "cursor",
    );
  }
  return { order, key, id: cursor.slice(colon + 1) };
}

/** A listed row as both SQL stores read it: its id and deadline key, for the cursor. */
export interface Positioned {
  id: string;
  dkey: number;
}
export const position = (r: Positioned) => ({ id: r.id, deadlineKey: r.dkey });

/** Cuts the rows read (one more than a page) to a page and its cursor. */
export function pageOf<T>(
  order: ListOrder,
  rows: T[],
  limit: number,
  position: (row: T) => { id: string; deadlineKey: number },
): { items: T[]; nextCursor?: string } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return rows.length > limit && last !== undefined
    ? { items, nextCursor: cursorAfter(order, position(last)) }
    : { items };
}

/** The summary of a whole request (the memory store's; the SQL stores read the same from columns). */
export function summaryOf(r: ApprovalRequest): RequestSummary {
  const s: RequestSummary = {
    id: r.id,
    action: r.action,
    title: r.title,
    status: r.status,
    level: r.level,
    requester: r.requester,
    approvers: [...r.approvers],
    quorum: r.quorum,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    correlationId: r.correlationId,
    itemCount: r.items.length,
  };
  if (r.key !== undefined) s.key = r.key;
  if (r.risk !== undefined) s.risk = r.risk;
  if (r.confidence !== undefined) s.confidence = r.confidence;
  if (r.status === "pending" && r.deadline !== undefined) s.deadline = r.deadline;
  if (r.revisionOf !== undefined) s.revisionOf = r.revisionOf;
  if (r.execution !== undefined) s.execution = r.execution.state;
  if (r.status !== "pending" && r.decision) {
    s.decision = {
      outcome: r.decision.outcome,
      method: r.decision.method,
      reviewer: r.decision.reviewer,
      decidedAt: r.decision.decidedAt,
    };
  }
  return s;
}

/** The size of a request as stored: its JSON document's UTF-8 bytes. */
export function docBytes(doc: string): number {
  return Buffer.byteLength(doc, "utf8");
}

/** The title search of `ListFilter.q`: the title contains the text, ignoring case. Stores that
 * search with an index must answer exactly what this says. */
export function titleMatches(title: string, q: string | undefined): boolean {
  return q === undefined || q === "" || title.toLowerCase().includes(q.toLowerCase());
}

/** A listing's condition on execution states, with the states written as literals (they are checked
 * against EXECUTION_STATES first) so that `unknown` alone can use its partial index. */
export function executionCondition(states: readonly string[]): string {
  for (const state of states) {
    if (!(EXECUTION_STATES as readonly string[]).includes(state)) {
      throw new InvalidInputError(
        `Expected \`execution\` to be one of ${EXECUTION_STATES.join(", ")}, got ${JSON.stringify(state)}`,
        "execution",
      );
    }
  }
  return states.length === 1
    ? `execution = '${states[0]}'`
    : `execution IN (${states.map((s) => `'${s}'`).join(", ")})`;
}
