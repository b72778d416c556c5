// `airlock audit verify`: checks the audit log of a store, while other processes keep appending.
//
// The chain head is read first and only events up to it are checked (a snapshot): events appended
// meanwhile are neither required nor reported. Then each stored request's status is compared with
// what its audit events say it should be, so a request edited in the database (a rejection turned
// into an approval) is caught. With the audit key, keyed events are checked as HMACs; with a
// checkpoint file, the chain must still contain every signed checkpoint (so a truncated, wiped or
// rewritten log is caught even by someone who recomputed the chain).
import { AirlockError, InvalidInputError } from "../core/errors.js";
import type { AuditEvent } from "../core/schemas.js";
import { TERMINAL_EVENT_TYPES } from "../core/state.js";
import type { Store } from "../core/store.js";
import {
  type AuditKey,
  auditKeyBytes,
  auditKeyId,
  createVerifier,
  type VerifyFailure,
  type VerifyResult,
} from "./chain.js";
import { type Checkpoint, readCheckpoints } from "./checkpoint.js";

export interface VerifyOptions {
  /** The audit key; required when the chain is keyed or a checkpoint file is given. */
  key?: AuditKey;
  /** The file of signed checkpoints the store wrote (its `checkpointFile` option). */
  checkpointFile?: string;
  /** Compare each stored request's status with its audit events. @default true */
  checkStatuses?: boolean;
  /** Events read per page. @default 5000 */
  pageSize?: number;
}

export type { VerifyResult } from "./chain.js";

/** What the audit says a request's status is after `e` (undefined: `e` does not change it). */
function statusAfter(e: AuditEvent): string | undefined {
  if (e.type === "created" || e.type === "escalated" || e.type === "decision_recorded") {
    return "pending";
  }
  if (!TERMINAL_EVENT_TYPES.has(e.type)) return undefined;
  const outcome = e.data.outcome;
  if (typeof outcome === "string") return outcome;
  return e.type === "decided" ? "approved" : e.type;
}

export async function verifyAuditLog(
  store: Store,
  options: VerifyOptions = {},
): Promise<VerifyResult> {
  const key = options.key === undefined ? undefined : auditKeyBytes(options.key);
  const pageSize = Math.max(1, Math.min(options.pageSize ?? 5000, 10_000));

  // Checkpoints first: every one of them was written after its events committed, so the head read
  // next is at or past each of them unless events were removed.
  let checkpoints: Checkpoint[] = [];
  if (options.checkpointFile !== undefined) {
    if (!key) {
      throw new InvalidInputError(
        "verifying against a checkpoint file needs the audit key that signed it",
        "key",
      );
    }
    const read = await readCheckpoints(options.checkpointFile, key);
    if (read.bad) {
      return {
        ok: false,
        count: 0,
        badSeq: 0,
        reason: `line ${read.bad.line} of the checkpoint file ${read.bad.reason}`,
      };
    }
    checkpoints = read.checkpoints;
  }

  const state = await store.auditChainState();
  if (state.headRowMissing) {
    return {
      ok: false,
      count: 0,
      badSeq: 1,
      reason:
        "the audit chain head row is missing (table audit_head): events may have been deleted; restore the database from a backup",
    };
  }
  if (state.keyedFrom !== undefined) {
    if (!key) {
      throw new AirlockError(
        "invalid_input",
        `the audit chain is keyed (HMAC) from event #${state.keyedFrom}: verifying it needs the audit key`,
      );
    }
    if (state.keyId !== undefined && state.keyId !== auditKeyId(key)) {
      throw new AirlockError(
        "invalid_input",
        `the audit key given is not the key this chain was keyed with (from event #${state.keyedFrom})`,
      );
    }
  }
  const headSeq = state.head?.seq ?? 0;

  const bySeq = new Map<number, Checkpoint>();
  let lastCheckpoint: Checkpoint | undefined;
  for (const c of checkpoints) {
    bySeq.set(c.seq, c);
    if (!lastCheckpoint || c.seq > lastCheckpoint.seq) lastCheckpoint = c;
  }
  if (lastCheckpoint && lastCheckpoint.seq > headSeq) {
    return {
      ok: false,
      count: 0,
      badSeq: headSeq + 1,
      reason: `the checkpoint written at ${new Date(lastCheckpoint.at).toISOString()} records event #${lastCheckpoint.seq}, but the database's chain ends at #${headSeq}: events were deleted (the log was truncated or wiped) or the database was replaced`,
    };
  }

  const verifier = createVerifier({ key, keyedFrom: state.keyedFrom });
  const expected = new Map<string, { status: string; seq: number }>();
  let after = 0;
  let last: AuditEvent | undefined;
  while (after < headSeq) {
    const page = await store.listAudit({ after, limit: pageSize });
    for (const e of page) {
      if (e.seq > headSeq) break;
      const bad = verifier.push(e);
      if (bad) return bad;
      const c = bySeq.get(e.seq);
      if (c && c.hash !== e.hash) {
        return {
          ok: false,
          count: e.seq,
          badSeq: e.seq,
          reason: `event #${e.seq} differs from the checkpoint written at ${new Date(c.at).toISOString()}: the log was rewritten from there or earlier`,
        };
      }
      if (e.requestId !== undefined) {
        const status = statusAfter(e);
        if (status !== undefined) expected.set(e.requestId, { status, seq: e.seq });
      }
      after = e.seq;
      last = e;
    }
    if (page.length < pageSize || (last && last.seq >= headSeq)) break;
  }
  const result = verifier.done();
  if (after !== headSeq || (state.head && state.head.hash !== result.lastHash)) {
    return {
      ok: false,
      count: result.count,
      badSeq: after + 1,
      reason: `the chain head records event #${headSeq}, but the log ends at #${after}: events were deleted or the head was altered`,
    };
  }

  let requests = 0;
  if (options.checkStatuses !== false) {
    const bad = await checkStatuses(store, expected, headSeq);
    if (typeof bad === "number") requests = bad;
    else return { ...bad, count: result.count };
  }
  const ok: VerifyResult = { ...result, requests, checkpoints: checkpoints.length };
  if (state.keyedFrom !== undefined) ok.keyedFrom = state.keyedFrom;
  return ok;
}

/** Compares every stored request with the status its audit events give it; returns how many were
 * checked, or the first mismatch that is not explained by a change after the snapshot. */
async function checkStatuses(
  store: Store,
  expected: Map<string, { status: string; seq: number }>,
  headSeq: number,
): Promise<number | Omit<VerifyFailure, "count">> {
  const changedSince = async (id: string) =>
    (await store.listAudit({ requestId: id, limit: 10_000 })).some((e) => e.seq > headSeq);
  let checked = 0;
  let cursor: string | undefined;
  const seen = new Set<string>();
  for (;;) {
    const rows = await store.listStatuses(cursor, 1000);
    for (const row of rows) {
      checked++;
      seen.add(row.id);
      if (row.docStatus !== row.status) {
        return {
          ok: false,
          badSeq: expected.get(row.id)?.seq ?? 0,
          reason: `request ${row.id} is stored with status ${row.status} but its stored document says ${row.docStatus ?? "(unreadable)"}: the stored request was altered`,
        };
      }
      const want = expected.get(row.id);
      if (want?.status === row.status) continue;
      if (await changedSince(row.id)) continue; // created or decided after the snapshot
      if (!want) {
        return {
          ok: false,
          badSeq: 0,
          reason: `request ${row.id} is stored (status ${row.status}) but has no event in the audit log: it was added to the database directly`,
        };
      }
      return {
        ok: false,
        badSeq: want.seq,
        reason: `request ${row.id} is stored as ${row.status}, but its audit log says ${want.status} (event #${want.seq}): the stored request was altered`,
      };
    }
    const lastRow = rows[rows.length - 1];
    if (rows.length < 1000 || !lastRow) break;
    cursor = lastRow.id;
  }
  for (const [id, want] of expected) {
    if (!seen.has(id)) {
      return {
        ok: false,
        badSeq: want.seq,
        reason: `request ${id} has audit events (last status ${want.status}, event #${want.seq}) but is missing from the stored requests: it was deleted`,
      };
    }
  }
  return checked;
}
