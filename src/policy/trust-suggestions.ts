// Which calls people keep approving: for each action and args shape (args-shape.ts), the run of
// approvals by people, counted from the newest decided request backwards, that no person's rejection
// interrupts. A run of at least `threshold` becomes a suggested trust rule.
//
// What counts, and why:
// - an approval of the whole call as proposed (`approve_all`) by people extends the run, and teaches
//   the run's scope (trust-scope.ts: requesters, reviewers, risk, quorum, approvers, values), when
//   every approval came from a person the requester cannot be (trust-scope.ts, earningReviewers);
//   one that did not says nothing (neither extends nor breaks the run);
// - a person saying anything else breaks it: a rejection or revise, and also an approval that edited
//   the args or selected only some items, because the rule would approve the unedited, whole call,
//   which that person did not;
// - decisions nobody made (auto, timeout, escalation, no items, error, cancel: AUTOMATIC_METHODS) say
//   nothing about what people think: they neither extend nor break a run. So the auto-approvals of an
//   accepted rule never feed a new suggestion.
// The scan is bounded: the newest `scanLimit` decided requests, all actions together, then (when
// that ends inside a run still too short) the newest `actionScanLimit` of each such action alone.

import type { ApprovalRequest, Status } from "../core/schemas.js";
import { AUTOMATIC_METHODS } from "../core/state.js";
import type { ListFilter, Page } from "../core/store.js";
import type { TrustRule, TrustScope } from "../core/trust-rule.js";
import { argsShape, argsShapeHash } from "./args-shape.js";
import { DEFAULT_MAX_VALUES, earningReviewers, ScopeLearner } from "./trust-scope.js";

export interface TrustSuggestion {
  action: string;
  /** The canonical args shape, and its SHA-256 (what an accepted rule matches). */
  shape: string;
  shapeHash: string;
  /** Approvals by people in a row, newest first, with no person's rejection among them. */
  streak: number;
  /** What those approvals earned: the rule accepted from this suggestion approves no more (its
   * `reviewers` are the distinct people behind the run). */
  scope: TrustScope;
  /** Newest first, at most `maxExamples`: the requests the rule would have approved. */
  examples: TrustExample[];
}

export interface TrustExample {
  id: string;
  title: string;
  reviewer: string;
  decidedAt: number;
}

export interface SuggestOptions {
  /** Approvals in a row needed for a suggestion; 0 turns suggestions off. @default 20 */
  threshold?: number;
  /** How many decided requests to read, newest first, all actions together. @default 1000 */
  scanLimit?: number;
  /** When that read ends inside a run still short of `threshold`, its action is read again on its
   * own, this many requests back... @default 500 */
  actionScanLimit?: number;
  /** ...for at most this many actions. @default 10 */
  rescanActions?: number;
  /** Examples kept per suggestion. @default 10 */
  maxExamples?: number;
  /** Active rules: what they already cover is not suggested again. */
  rules?: readonly TrustRule[];
  /** Distinct values of a field learned as an enumeration (see trust-scope.ts). @default 5 */
  maxValues?: number;
}

export const DEFAULT_TRUST_THRESHOLD = 20;
const PAGE = 100;
/** Statuses a person can have decided (timed out and cancelled requests are nobody's verdict). */
const DECIDED: Status[] = ["approved", "rejected", "revise"];

/** Something that lists requests as the engine (`airlock.list`) does. */
export interface RequestLister {
  list(filter: ListFilter): Promise<Page<ApprovalRequest>>;
}

interface Run {
  action: string;
  shape: string;
  shapeHash: string;
  streak: number;
  broken: boolean;
  examples: TrustExample[];
  learner: ScopeLearner;
}

/** The calls approved by people at least `threshold` times in a row, longest run first. */
export async function suggestTrustRules(
  airlock: RequestLister,
  options: SuggestOptions = {},
): Promise<TrustSuggestion[]> {
  const threshold = options.threshold ?? DEFAULT_TRUST_THRESHOLD;
  if (!Number.isSafeInteger(threshold) || threshold < 0) {
    throw new TypeError(`threshold must be a non-negative integer, got ${threshold}`);
  }
  if (threshold === 0) return [];
  const maxExamples = options.maxExamples ?? 10;
  const maxValues = options.maxValues ?? DEFAULT_MAX_VALUES;
  if (!Number.isSafeInteger(maxValues) || maxValues < 1) {
    throw new TypeError(`maxValues must be a positive integer, got ${maxValues}`);
  }
  // A rule accepted before scopes existed approves nothing: its call is suggested again, so an admin
  // can revoke it and accept the scoped rule.
  const covered = new Set(
    (options.rules ?? []).filter((r) => r.scope).map((r) => keyOf(r.action, r.shapeHash)),
  );
  const runs = new Map<string, Run>();
  const opts = { maxExamples, maxValues };
  const cut = await scan(airlock, {}, options.scanLimit ?? 1000, runs, opts);

  // The newest requests of all actions together may end in the middle of a quieter action's run:
  // such actions (a few, bounded) are read again on their own, further back.
  if (cut) {
    const actions = new Set<string>();
    for (const run of runs.values()) {
      if (!run.broken && run.streak > 0 && run.streak < threshold) actions.add(run.action);
    }
    for (const action of [...actions].slice(0, options.rescanActions ?? 10)) {
      for (const [key, run] of runs) if (run.action === action) runs.delete(key);
      await scan(airlock, { action }, options.actionScanLimit ?? 500, runs, opts);
    }
  }

  return [...runs.entries()]
    .filter(([key, run]) => run.streak >= threshold && !covered.has(key))
    .map(([, run]) => ({
      action: run.action,
      shape: run.shape,
      shapeHash: run.shapeHash,
      streak: run.streak,
      scope: run.learner.scope(),
      examples: run.examples,
    }))
    .sort((a, b) => b.streak - a.streak || a.action.localeCompare(b.action));
}

/** Counts up to `limit` decided requests matching `filter`, newest first, into `runs`; true when
 * it stopped at the limit with more left. */
async function scan(
  airlock: RequestLister,
  filter: Pick<ListFilter, "action">,
  limit: number,
  runs: Map<string, Run>,
  opts: { maxExamples: number; maxValues: number },
): Promise<boolean> {
  let scanned = 0;
  let cursor: string | undefined;
  do {
    const page = await airlock.list({
      ...filter,
      status: DECIDED,
      order: "newest",
      limit: Math.min(PAGE, limit - scanned),
      ...(cursor ? { cursor } : {}),
    });
    for (const request of page.items) {
      const shapeHash = argsShapeHash(request.args);
      const key = keyOf(request.action, shapeHash);
      let run = runs.get(key);
      if (!run) {
        const shape = argsShape(request.args);
        run = {
          action: request.action,
          shape,
          shapeHash,
          streak: 0,
          broken: false,
          examples: [],
          learner: new ScopeLearner(opts.maxValues),
        };
        runs.set(key, run);
      }
      count(run, request, opts.maxExamples);
    }
    scanned += page.items.length;
    cursor = page.nextCursor;
  } while (cursor && scanned < limit);
  return cursor !== undefined;
}

/** One request, newer ones already counted: extends the run, breaks it, or says nothing. */
function count(run: Run, request: ApprovalRequest, maxExamples: number): void {
  const d = request.decision;
  if (run.broken || !d || AUTOMATIC_METHODS.has(d.method)) return;
  if (d.outcome === "approved" && d.method === "approve_all") {
    const people = earningReviewers(request);
    if (!people) return; // approved through something the requester can reach: says nothing
    run.streak++;
    run.learner.add(request, people);
    if (run.examples.length < maxExamples) {
      run.examples.push({
        id: request.id,
        title: request.title,
        reviewer: d.reviewer,
        decidedAt: d.decidedAt,
      });
    }
    return;
  }
  run.broken = true;
}

/** One action with one shape. */
export function keyOf(action: string, shapeHash: string): string {
  return `${action}\u0000${shapeHash}`;
}
