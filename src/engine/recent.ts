// The requests this engine wrote or read last, so a decision or a claim that follows at once starts
// from what it already knows instead of reading the store again (a network round trip on
// PostgreSQL). Only the compare-and-set loop reads from here (transact.ts): the store still decides,
// since the write names the version it started from, and a stale copy only costs a second try.
// Copies are kept as JSON text, so nothing a caller does to a request it was handed reaches here.
import type { ApprovalRequest } from "../core/schemas.js";

export interface Recent {
  /** A private copy of the request as last seen at `version`, or undefined. */
  get(id: string): ApprovalRequest | undefined;
  /** `json`: the request's `JSON.stringify` text when the caller has it already (the store wrote it). */
  remember(request: ApprovalRequest, json?: string): void;
  forget(id: string): void;
}

/** Enough for every gate of a busy process in flight at once; older entries are dropped first. */
const DEFAULT_CAPACITY = 512;

export function recentRequests(capacity = DEFAULT_CAPACITY): Recent {
  // A Map iterates in insertion order: deleting and re-inserting makes it least-recently-used.
  const byId = new Map<string, { version: number; json: string }>();
  return {
    get(id) {
      const hit = byId.get(id);
      return hit ? (JSON.parse(hit.json) as ApprovalRequest) : undefined;
    },
    remember(request, json) {
      const known = byId.get(request.id);
      // Never step back: a slow reader must not replace what a later write left here.
      if (known && known.version > request.version) return;
      byId.delete(request.id);
      byId.set(request.id, { version: request.version, json: json ?? JSON.stringify(request) });
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
