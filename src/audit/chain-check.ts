// Checks a run of audit events in seq order, one at a time, holding only the previous event's seq and
// hash: memory stays flat however long the log. Unlike `createVerifier` (chain.ts) it can start in
// the middle of the chain, at a prune anchor or a verified mark, instead of at the genesis.
import type { AuditEvent } from "../core/schemas.js";
import { GENESIS_HASH, hashEvent, type VerifyFailure } from "./chain.js";

export interface ChainCheckOptions {
  /** The audit key; needed from `keyedFrom` on. */
  key?: Buffer;
  /** The first event hashed with the key (the chain is unkeyed before it). */
  keyedFrom?: number;
  /** The event the run follows (seq and hash); the genesis when undefined. */
  start?: { seq: number; hash: string };
}

export interface ChainCheck {
  /** Checks the next event; the failure when it does not belong there. */
  push(e: AuditEvent): VerifyFailure | undefined;
  /** The last event checked (or the start). */
  readonly last: { seq: number; hash: string };
  /** How many events were checked. */
  readonly count: number;
}

export function createChainCheck(o: ChainCheckOptions = {}): ChainCheck {
  let prevSeq = o.start?.seq ?? 0;
  let prevHash = o.start?.hash ?? GENESIS_HASH;
  let count = 0;
  const fail = (seq: number, reason: string): VerifyFailure => ({
    ok: false,
    count,
    badSeq: seq,
    reason,
  });
  return {
    push(e) {
      count++;
      const expectedSeq = prevSeq + 1;
      if (e.seq !== expectedSeq) {
        return fail(
          e.seq,
          `expected event #${expectedSeq}, found #${e.seq} (a row was deleted or reordered)`,
        );
      }
      if (e.prevHash !== prevHash) {
        return fail(
          e.seq,
          prevSeq === (o.start?.seq ?? -1) && prevSeq > 0
            ? `event #${e.seq} does not link to the hash of event #${prevSeq} recorded by the prune anchor or verified mark`
            : `event #${e.seq} does not link to the hash of event #${prevSeq}`,
        );
      }
      const keyed = o.keyedFrom !== undefined && e.seq >= o.keyedFrom;
      if (keyed && !o.key) {
        return fail(e.seq, `event #${e.seq} is keyed (HMAC): verifying it needs the audit key`);
      }
      if (hashEvent(e.seq, e, e.prevHash, keyed ? o.key : undefined) !== e.hash) {
        return fail(e.seq, `event #${e.seq} was altered: its content does not match its hash`);
      }
      prevSeq = e.seq;
      prevHash = e.hash;
      return undefined;
    },
    get last() {
      return { seq: prevSeq, hash: prevHash };
    },
    get count() {
      return count;
    },
  };
}
