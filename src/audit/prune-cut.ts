// Where `prune` may cut the audit log. Every store scans its log from the anchor in seq order and feeds
// each event, with what it knows of the event's request, to a cut finder; the finder says when to
// stop and where the cut is. The rule (the same for every store):
//
//   the cut is the largest seq C such that every event at or before C belongs to no request, or to a
//   request that is terminal, was last changed before `before`, and has no event after C.
//
// So only a prefix of the log is ever deleted (never a hole), pending and recent requests keep every
// event, and so does everything logged after the first event of such a request. Each event scanned is
// also checked against the chain (from the anchor): prune refuses to delete events that do not
// verify, which would destroy the evidence of tampering.
import { AirlockError, InvalidInputError } from "../core/errors.js";
import type { AuditEvent } from "../core/schemas.js";
import type { PruneOptions } from "../core/store.js";
import type { ChainCheck } from "./chain-check.js";

/** Events deleted per transaction by default. */
export const DEFAULT_PRUNE_BATCH = 20_000;

/** What a store knows of an event's request while scanning: undefined when the event belongs to no
 * request; `missing` when its request is not stored (deleted by hand: never pruned over). */
export type CutRequest =
  | { missing: true }
  | { missing?: false; status: string; updatedAt: number; lastSeq: number };

export interface CutFinder {
  /** Takes the next event; false when the scan should stop (at a blocker or a full batch). */
  push(e: AuditEvent, request: CutRequest | undefined): boolean;
  /** The cut found so far (the last event to delete). */
  readonly cut: { seq: number; hash: string } | undefined;
  /** True when the scan stopped only because the batch was full: more may be prunable. */
  readonly batchFull: boolean;
}

/** Options checked, with defaults. */
export function resolvePruneOptions(o: PruneOptions): {
  before: number;
  batchEvents: number;
  now: () => number;
} {
  if (!Number.isFinite(o.before)) {
    throw new InvalidInputError(
      `Expected \`before\` to be an instant (epoch ms), got \`${String(o.before)}\``,
      "before",
    );
  }
  const batchEvents = o.batchEvents ?? DEFAULT_PRUNE_BATCH;
  if (!Number.isSafeInteger(batchEvents) || batchEvents < 1) {
    throw new InvalidInputError(
      `Expected \`batchEvents\` to be an integer from 1 and up, got \`${String(batchEvents)}\``,
      "batchEvents",
    );
  }
  return { before: o.before, batchEvents, now: o.now ?? Date.now };
}

export function createCutFinder(o: {
  before: number;
  batchEvents: number;
  check: ChainCheck;
}): CutFinder {
  let cut: { seq: number; hash: string } | undefined;
  // The last event of any request seen so far: no cut before it.
  let need = o.check.last.seq;
  let scanned = 0;
  let batchFull = false;
  return {
    push(e, request) {
      if (request !== undefined) {
        if (request.missing) return false;
        if (request.status === "pending" || request.updatedAt >= o.before) return false;
        need = Math.max(need, request.lastSeq);
      }
      const bad = o.check.push(e);
      if (bad) {
        throw new AirlockError(
          "conflict",
          `prune stopped: the audit log does not verify at event #${bad.badSeq} (${bad.reason}); it and every event after it are kept. Run \`airlock audit verify\``,
        );
      }
      scanned++;
      if (need <= e.seq) {
        cut = { seq: e.seq, hash: e.hash };
        if (scanned >= o.batchEvents) {
          batchFull = true;
          return false;
        }
      }
      return true;
    },
    get cut() {
      return cut;
    },
    get batchFull() {
      return batchFull;
    },
  };
}
