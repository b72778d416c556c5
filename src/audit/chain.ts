// The tamper-evident audit log: every event carries the hash of the one before it, so editing or
// deleting any row breaks the chain from that row on.
import { canonicalJson, sha256 } from "../core/hash.js";
import type { AuditDraft, AuditEvent } from "../core/schemas.js";

export const GENESIS_HASH = "0".repeat(64);

export function hashEvent(seq: number, draft: AuditDraft, prevHash: string): string {
  const body = {
    seq,
    type: draft.type,
    requestId: draft.requestId ?? null,
    actor: draft.actor,
    at: draft.at,
    data: draft.data,
    prevHash,
  };
  return sha256(canonicalJson(body));
}

/** Places a draft after `prev` in the chain. Stores call this inside the transaction that appends. */
export function chainEvent(
  draft: AuditDraft,
  prev: { seq: number; hash: string } | undefined,
): AuditEvent {
  const seq = (prev?.seq ?? 0) + 1;
  const prevHash = prev?.hash ?? GENESIS_HASH;
  return { ...draft, seq, prevHash, hash: hashEvent(seq, draft, prevHash) };
}

export type VerifyOk = { ok: true; count: number; lastHash: string };
export type VerifyFailure = { ok: false; count: number; badSeq: number; reason: string };
export type VerifyResult = VerifyOk | VerifyFailure;

/** Checks a run of events in `seq` order; feed it page by page through `createVerifier`. */
export function createVerifier() {
  let prev: { seq: number; hash: string } | undefined;
  let count = 0;
  return {
    push(e: AuditEvent): VerifyFailure | undefined {
      count++;
      const expectedSeq = (prev?.seq ?? 0) + 1;
      const expectedPrev = prev?.hash ?? GENESIS_HASH;
      if (e.seq !== expectedSeq) {
        return {
          ok: false,
          count,
          badSeq: e.seq,
          reason: `expected event #${expectedSeq}, found #${e.seq} (a row was deleted or reordered)`,
        };
      }
      if (e.prevHash !== expectedPrev) {
        return {
          ok: false,
          count,
          badSeq: e.seq,
          reason: `event #${e.seq} does not link to the hash of event #${expectedSeq - 1}`,
        };
      }
      if (hashEvent(e.seq, e, e.prevHash) !== e.hash) {
        return {
          ok: false,
          count,
          badSeq: e.seq,
          reason: `event #${e.seq} was altered: its content does not match its hash`,
        };
      }
      prev = e;
      return undefined;
    },
    done(): VerifyOk {
      return { ok: true, count, lastHash: prev?.hash ?? GENESIS_HASH };
    },
  };
}
