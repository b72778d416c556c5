import { monotonicFactory } from "ulid";

// ULIDs sort by creation time, so "newest first" is "id descending" and ids make stable cursors.
// The monotonic factory keeps ids increasing within one millisecond too.
const next = monotonicFactory();

export function newRequestId(now: number): string {
  return `req_${next(now).toLowerCase()}`;
}
