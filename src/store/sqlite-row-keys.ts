// Which UPDATE a transition of the SQLite store runs. An UPDATE rewrites the entries of every index
// whose columns (or whose partial condition's columns) it names in its SET list, even to the same
// values: a claim that wrote status, deadline and title again rewrote both status indexes' pages
// for nothing. So the store keeps, for the rows it wrote last, the values of the columns indexes
// hold, and runs the UPDATE that names only those that change:
//
// - `unindexed`: none of them (a vote, an escalation's note): no index but the quota's moves;
// - `execution`: the execution state and lease only (a claim, an execution's outcome): their two
//   partial indexes, not the status, deadline and approver ones;
// - `full`: everything (a decision, a timeout, a new deadline or title).
//
// The values kept are only a guess at the row as it is: every narrower UPDATE also checks, in its
// WHERE, that the columns it leaves out hold the new values already, so a wrong guess (another
// process wrote the row, a batch rolled back) changes no row and the full UPDATE follows, as it does
// for a row not kept here.

/** The columns an index of `requests` holds or filters on (besides id, requester and key, which no
 * transition changes). */
export interface KeyColumns {
  status: string;
  deadline: number | null;
  title_lower: string;
  execution: string | null;
  lease_until: number | null;
}

export type UpdateKind = "unindexed" | "execution" | "full";

/** The narrowest UPDATE that takes a row from `before` to `after`. */
export function updateKind(before: KeyColumns, after: KeyColumns): UpdateKind {
  if (
    before.status !== after.status ||
    before.deadline !== after.deadline ||
    before.title_lower !== after.title_lower
  ) {
    return "full";
  }
  return before.execution === after.execution && before.lease_until === after.lease_until
    ? "unindexed"
    : "execution";
}

export interface RowKeys {
  /** The key columns as this store wrote them at `version`, or undefined. */
  get(id: string, version: number): KeyColumns | undefined;
  set(id: string, version: number, row: KeyColumns): void;
  forget(id: string): void;
}

/** Enough for every gate of a busy process in flight at once; the oldest entries go first. */
const CAPACITY = 4096;

export function rowKeys(capacity = CAPACITY): RowKeys {
  // Insertion order: deleting before setting keeps the most recently written last.
  const byId = new Map<string, KeyColumns & { version: number }>();
  return {
    get(id, version) {
      const k = byId.get(id);
      return k && k.version === version ? k : undefined;
    },
    set(id, version, row) {
      byId.delete(id);
      byId.set(id, {
        version,
        status: row.status,
        deadline: row.deadline,
        title_lower: row.title_lower,
        execution: row.execution,
        lease_until: row.lease_until,
      });
      if (byId.size > capacity) {
        const oldest = byId.keys().next().value;
        if (oldest !== undefined) byId.delete(oldest);
      }
    },
    forget(id) {
      byId.delete(id);
    },
  };
}
