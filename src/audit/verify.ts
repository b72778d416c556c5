// `airlock audit verify`: checks the audit log of a store, while other processes keep appending.
//
// The chain head is read first and only events up to it are checked (a snapshot): events appended
// meanwhile are neither required nor reported. Events are read in pages by seq (keyset) and checked
// one at a time, so the chain check holds one event's hash whatever the length of the log.
//
// Where the check starts:
// - at the prune anchor when the log was pruned (marks.ts): the anchor's signature is checked, and
//   the first remaining event must link to it, so rows deleted past it, or an edited anchor, fail;
// - with `resume`, at the verified mark a previous run recorded, when it is after the anchor: the
//   event at the mark must still carry the hash it had, and only the events after it are checked
//   (and only the requests they touch). Tampering before the mark is left to a full run.
// Then each request's status is compared with what its audit events say it should be, so a request
// edited in the database (a rejection turned into an approval) is caught. With the audit key, keyed
// events are checked as HMACs; with a checkpoint file, the chain must still contain every signed
// checkpoint after the start (so a truncated, wiped or rewritten log is caught even by someone who
// recomputed the chain).
import { availableParallelism } from "node:os";
import { AirlockError, InvalidInputError } from "../core/errors.js";
import { parseStoredObject } from "../core/hash.js";
import type { AuditEvent } from "../core/schemas.js";
import { TERMINAL_EVENT_TYPES } from "../core/state.js";
import type { AuditMark, AuditPageEvent, Store } from "../core/store.js";
import {
  type AuditKey,
  auditKeyBytes,
  auditKeyId,
  type VerifyFailure,
  type VerifyOk,
} from "./chain.js";
import { createChainCheck, hashFailure } from "./chain-check.js";
import { type Checkpoint, isCheckpointsStart, readCheckpoints } from "./checkpoint.js";
import { hashQueue, startHashPool } from "./hash-pool.js";
import { markProblem, markPromisesCheckpoints, signMark } from "./marks.js";
import { statusAfterEvent } from "./status-events.js";

export interface VerifyOptions {
  /** The audit key; required when the chain is keyed or a checkpoint file is given. */
  key?: AuditKey;
  /** The file of signed checkpoints the store wrote (its `checkpointFile` option). */
  checkpointFile?: string;
  /** Compare each stored request's status with its audit events. @default true */
  checkStatuses?: boolean;
  /** Events read per page. @default 5000 */
  pageSize?: number;
  /** Start at the verified mark of a previous run (when there is one after the prune anchor) and
   * check only what came after it. @default false: everything from the anchor (or the genesis) */
  resume?: boolean;
  /** After a successful run, record the last event checked as the verified mark (signed like the
   * anchor), where the next `resume` starts. @default false */
  recordMark?: boolean;
  /** The clock for the recorded mark. @default Date.now */
  now?: () => number;
  /** Threads that hash the events while this one reads them; 0: hash here. Only the built package
   * has the workers' file (hash-pool.ts): from the sources, events are hashed here whatever this says.
   * @default for a log of PARALLEL_FROM events or more to check, the machine's parallelism (at most
   * MAX_WORKERS); else 0 */
  workers?: number;
}

/** Below this many events to check, starting threads costs more than it saves. */
export const PARALLEL_FROM = 50_000;
const MAX_WORKERS = 4;

/** The most hashing threads a caller may ask for. */
export const MAX_EXPLICIT_WORKERS = 16;

/** The hashing threads a run starts by default for `events` to check (`VerifyOptions.workers`). */
export function defaultWorkers(events: number): number {
  return events >= PARALLEL_FROM ? Math.min(MAX_WORKERS, availableParallelism()) : 0;
}

export type VerifyResult =
  | (VerifyOk & {
      /** The event the check started after (0: the genesis). */
      from?: number;
      /** Where `from` came from. */
      startedAt?: "genesis" | "anchor" | "mark";
      /** The prune anchor: events up to it were pruned. */
      anchorSeq?: number;
    })
  | VerifyFailure;

/** What the audit says a request's status is after `e` (undefined: `e` does not change it). */
function statusAfter(e: AuditEvent | AuditPageEvent): string | undefined {
  // Only a terminal event's status depends on its data (the outcome): no other event's data is
  // parsed, which on a long log is most of them.
  if (!TERMINAL_EVENT_TYPES.has(e.type)) return statusAfterEvent(e.type, undefined);
  const data = "dataJson" in e ? parseStoredObject(e.dataJson) : e.data;
  return statusAfterEvent(e.type, data.outcome);
}

const fail = (badSeq: number, reason: string, count = 0): VerifyFailure => ({
  ok: false,
  count,
  badSeq,
  reason,
});

export async function verifyAuditLog(
  store: Store,
  options: VerifyOptions = {},
): Promise<VerifyResult> {
  const anchorBefore = (await store.auditMarks?.())?.anchor?.seq;
  const result = await verifyOnce(store, options);
  if (result.ok) return result;
  // A prune that committed while we read deletes events we were about to read: check again.
  const anchorAfter = (await store.auditMarks?.())?.anchor?.seq;
  return anchorAfter !== anchorBefore ? verifyOnce(store, options) : result;
}

async function verifyOnce(store: Store, options: VerifyOptions): Promise<VerifyResult> {
  const key = options.key === undefined ? undefined : auditKeyBytes(options.key);
  const asked = options.workers;
  if (
    asked !== undefined &&
    !(Number.isInteger(asked) && asked >= 0 && asked <= MAX_EXPLICIT_WORKERS)
  ) {
    throw new InvalidInputError(
      `Expected \`workers\` to be a whole number from 0 to ${MAX_EXPLICIT_WORKERS}, got ${String(asked)}`,
      "workers",
    );
  }
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
      return fail(0, `line ${read.bad.line} of the checkpoint file ${read.bad.reason}`);
    }
    checkpoints = read.checkpoints;
  }

  const state = await store.auditChainState();
  if (state.headRowMissing) {
    return fail(
      1,
      "the audit chain head row is missing (table audit_head): events may have been deleted; restore the database from a backup",
    );
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
  const keying = { key, ...(state.keyedFrom !== undefined ? { keyedFrom: state.keyedFrom } : {}) };

  const start = await startingPoint(store, options, keying, headSeq);
  if ("ok" in start) return start;

  let lastCheckpoint: Checkpoint | undefined;
  for (const c of checkpoints) {
    if (!lastCheckpoint || c.seq > lastCheckpoint.seq) lastCheckpoint = c;
  }
  if (lastCheckpoint && lastCheckpoint.seq > headSeq) {
    return fail(
      headSeq + 1,
      `the checkpoint written at ${new Date(lastCheckpoint.at).toISOString()} records event #${lastCheckpoint.seq}, but the database's chain ends at #${headSeq}: events were deleted (the log was truncated or wiped) or the database was replaced`,
    );
  }
  // Only the checkpoints this run can meet (the file may hold many): after the start, or at it.
  const bySeq = new Map<number, Checkpoint>();
  for (const c of checkpoints) if (c.seq >= start.point.seq) bySeq.set(c.seq, c);
  // A run resumed at a mark that says checkpoints were being written needs the file from then: one
  // of its checkpoints at or before the mark (a file deleted since, or started anew, has none).
  const heldBeforeMark = checkpoints.some((c) => c.seq <= start.point.seq);
  checkpoints = [];
  const atStart = bySeq.get(start.point.seq);
  if (atStart && start.point.seq > 0 && atStart.hash !== start.point.hash) {
    return fail(
      start.point.seq,
      `the ${start.from === "anchor" ? "prune anchor" : "verified mark"} at event #${start.point.seq} differs from the checkpoint written at ${new Date(atStart.at).toISOString()}`,
    );
  }

  // Long runs hash on worker threads (hash-pool.ts) while this thread reads and checks the links.
  // Given explicitly, `workers` applies to a log of any length.
  const workers = options.workers ?? defaultWorkers(headSeq - start.point.seq);
  const pool = startHashPool({ key, keyedFrom: state.keyedFrom, workers });
  const hashing = pool ? hashQueue(pool, 2 * workers) : undefined;
  const check = createChainCheck({
    ...keying,
    ...(start.point.seq > 0 ? { start: start.point } : {}),
    hashes: pool === undefined,
  });
  const hashFailed = (bad: { seq: number; verdict: "altered" | "needs-key" }) =>
    fail(bad.seq, hashFailure(bad.seq, bad.verdict), bad.seq - start.point.seq);
  /** A failure found on this thread, unless an event before it (`before`: those of its page not
   * yet sent, or a page sent earlier) fails its hash: the first failure in seq order wins. */
  const firstFailure = async (found: VerifyFailure, before: readonly AuditPageEvent[]) => {
    if (!hashing) return found;
    const earlier = (await hashing.add(before)) ?? (await hashing.drain());
    return earlier && earlier.seq <= found.badSeq ? hashFailed(earlier) : found;
  };
  // Statuses: a store that reads each request with its last status event is checked request by
  // request, beside the walk (flat memory; the walk only counts creations, compared after it);
  // otherwise, and for a resumed run, the walk notes the status each touched request should have.
  const wantStatuses = options.checkStatuses !== false;
  const byEvidence =
    wantStatuses && start.from !== "mark" && store.listStatusEvidence !== undefined;
  const expected = new Map<string, { status: string; seq: number }>();
  let created = 0;
  // The events recording that a checkpoint file was started: each must have its checkpoint.
  const started: number[] = [];
  let after = start.point.seq;
  const evidence = byEvidence ? startEvidenceCheck(store, headSeq, start.point.seq) : undefined;
  try {
    try {
      while (after < headSeq) {
        const read = store.readAuditPage
          ? await store.readAuditPage(after, pageSize)
          : await store.listAudit({ after, limit: pageSize });
        // Events appended after the head was read are not this run's to check.
        const page =
          (read[read.length - 1]?.seq ?? 0) > headSeq ? read.filter((e) => e.seq <= headSeq) : read;
        for (const [i, e] of page.entries()) {
          const bad = check.push(e);
          if (bad) return await firstFailure(bad, page.slice(0, i));
          const c = bySeq.get(e.seq);
          if (c && c.hash !== e.hash) {
            const reason = `event #${e.seq} differs from the checkpoint written at ${new Date(c.at).toISOString()}: the log was rewritten from there or earlier`;
            return await firstFailure(fail(e.seq, reason, check.count), page.slice(0, i + 1));
          }
          if (isCheckpointsStart(e, key)) started.push(e.seq);
          if (e.requestId !== undefined) {
            if (byEvidence) {
              if (e.type === "created") created++;
            } else if (wantStatuses) {
              const status = statusAfter(e);
              if (status !== undefined) expected.set(e.requestId, { status, seq: e.seq });
            }
          }
          after = e.seq;
        }
        const bad = await hashing?.add(page);
        if (bad) return hashFailed(bad);
        if (read.length < pageSize || after >= headSeq) break;
      }
      const bad = await hashing?.drain();
      if (bad) return hashFailed(bad);
    } finally {
      await pool?.close();
    }
    const count = check.count;
    if (after !== headSeq || (state.head && state.head.hash !== check.last.hash)) {
      return fail(
        after + 1,
        `the chain head records event #${headSeq}, but the log ends at #${after}: events were deleted or the head was altered`,
        count,
      );
    }

    const unvouched =
      start.promised && !heldBeforeMark
        ? missingMarkCheckpoints(start.point.seq, options.checkpointFile)
        : missingStartCheckpoint(started, bySeq, options.checkpointFile);
    if (unvouched) return { ...unvouched, count };

    let requests = 0;
    if (wantStatuses) {
      const bad =
        start.from === "mark"
          ? await checkTouched(store, expected, headSeq)
          : evidence
            ? await checkEvidence(
                store,
                await evidence.found,
                headSeq,
                start.point.seq,
                created,
                pageSize,
              )
            : await checkStatuses(store, expected, headSeq);
      if (typeof bad === "number") requests = bad;
      else return { ...bad, count };
    }
    if (options.recordMark && store.saveVerifiedMark && check.last.seq > 0) {
      const now = options.now ?? Date.now;
      const promises = start.promised === true || started.length > 0;
      await store.saveVerifiedMark(signMark("verified", check.last, now(), keying, promises));
    }
    const ok: VerifyResult = {
      ok: true,
      count,
      lastHash: check.last.hash,
      requests,
      checkpoints: bySeq.size,
      from: start.point.seq,
      startedAt: start.from,
    };
    if (start.anchorSeq !== undefined) ok.anchorSeq = start.anchorSeq;
    if (state.keyedFrom !== undefined) ok.keyedFrom = state.keyedFrom;
    return ok;
  } finally {
    await evidence?.stop();
  }
}

/** The first record of a checkpoint start (`started`) whose checkpoint is not among `bySeq` (the
 * file's checkpoints from the start of the run on): the chain says checkpoints were being written,
 * and a file without them was deleted, emptied or replaced, which would hide a truncation. */
function missingStartCheckpoint(
  started: readonly number[],
  bySeq: ReadonlyMap<number, Checkpoint>,
  file: string | undefined,
): Omit<VerifyFailure, "count"> | undefined {
  const seq = started.find((s) => !bySeq.has(s));
  if (seq === undefined) return undefined;
  const reason =
    file === undefined
      ? `event #${seq} records that signed checkpoints of the chain were being written to a file, but no checkpoint file was given to check them against: verify with it (AIRLOCK_CHECKPOINT_FILE, or the \`checkpointFile\` option)`
      : bySeq.size === 0
        ? `event #${seq} records that signed checkpoints of the chain were being written, but the checkpoint file ${file} holds none: it was deleted or emptied, and events may have been removed from the end of the log without trace; restore the checkpoint file`
        : `event #${seq} records that signed checkpoints of the chain started, but the checkpoint file ${file} has no checkpoint of it: the file was deleted or replaced since, and events may have been removed from the end of the log without trace; restore the original checkpoint file`;
  return { ok: false, badSeq: seq, reason };
}

/** A resumed run's failure when its mark says checkpoints were being written and the file holds none
 * from before it (`file`: undefined when none was given). */
function missingMarkCheckpoints(
  markSeq: number,
  file: string | undefined,
): Omit<VerifyFailure, "count"> {
  const reason =
    file === undefined
      ? `the verified mark at event #${markSeq} says signed checkpoints of the chain were being written, but no checkpoint file was given to check them against: verify with it (AIRLOCK_CHECKPOINT_FILE, or the \`checkpointFile\` option)`
      : `the verified mark at event #${markSeq} says signed checkpoints of the chain were being written, but the checkpoint file ${file} holds none from before it: it was deleted or replaced since, and events may have been removed from the end of the log without trace; restore the original checkpoint file`;
  return { ok: false, badSeq: markSeq, reason };
}

interface Start {
  point: { seq: number; hash: string };
  from: "genesis" | "anchor" | "mark";
  anchorSeq?: number;
  /** The verified mark it starts at says that checkpoints were being written up to it. */
  promised?: boolean;
}

/** Where the check starts: the verified mark (with `resume`), the prune anchor, or the genesis;
 * each mark's signature checked, and the mark's event still there with its hash. */
async function startingPoint(
  store: Store,
  options: VerifyOptions,
  keying: { key?: Buffer; keyedFrom?: number },
  headSeq: number,
): Promise<Start | VerifyFailure> {
  const marks = (await store.auditMarks?.()) ?? {};
  const { anchor, verified } = marks;
  let start: Start = { point: { seq: 0, hash: "" }, from: "genesis" };
  if (anchor) {
    const problem = markProblem("anchor", anchor, keying);
    if (problem) return fail(anchor.seq, problem);
    if (anchor.seq > headSeq) {
      return fail(
        headSeq + 1,
        `the prune anchor records event #${anchor.seq}, but the chain head is #${headSeq}: the head was altered`,
      );
    }
    start = { point: pointOf(anchor), from: "anchor", anchorSeq: anchor.seq };
  }
  if (!options.resume || !verified || verified.seq <= start.point.seq) return start;
  const problem = markProblem("verified", verified, keying);
  if (problem) return fail(verified.seq, problem);
  if (verified.seq > headSeq) {
    return fail(
      headSeq + 1,
      `the verified mark records event #${verified.seq}, but the chain ends at #${headSeq}: events were deleted`,
    );
  }
  const [e] = await store.listAudit({ after: verified.seq - 1, limit: 1 });
  // The event itself re-hashed too: its hash column alone could have been left while its content
  // was edited.
  const unchanged =
    e !== undefined &&
    e.seq === verified.seq &&
    e.hash === verified.hash &&
    createChainCheck({ ...keying, start: { seq: e.seq - 1, hash: e.prevHash } }).push(e) ===
      undefined;
  if (!e || !unchanged) {
    return fail(
      verified.seq,
      `event #${verified.seq} is no longer the event verified at ${new Date(verified.at).toISOString()} (deleted or altered since): verify the whole log`,
    );
  }
  return {
    ...start,
    point: pointOf(verified),
    from: "mark",
    promised: markPromisesCheckpoints("verified", verified, keying),
  };
}

const pointOf = (m: AuditMark) => ({ seq: m.seq, hash: m.hash });

/** What the scan of the stored requests found: each one's status matched its log (`checked` of them,
 * `stored` created in the checked range), or the first that did not. */
type EvidenceFound = { checked: number; stored: number } | Omit<VerifyFailure, "count">;

interface EvidenceCheck {
  found: Promise<EvidenceFound>;
  /** Ends the scan early (the walk failed) and waits for it to stop. */
  stop(): Promise<void>;
}

const EVIDENCE_PAGE = 1000;

/** Starts comparing every stored request with its last status event, as the store reads them
 * together, beside the walk of the log (which only counts creations meanwhile): a store that reads
 * asynchronously (PostgreSQL's server) works on both at once. */
function startEvidenceCheck(store: Store, headSeq: number, fromSeq: number): EvidenceCheck {
  let stopped = false;
  const found = scanEvidence(store, headSeq, fromSeq, () => stopped);
  // Awaited after a walk that passed; a walk that failed stops it and ignores what it found.
  found.catch(() => undefined);
  return {
    found,
    async stop() {
      stopped = true;
      await found.catch(() => undefined);
    },
  };
}

/** Pages of stored requests with their evidence, until the last or until `stopped`. */
async function* evidencePages(store: Store, stopped: () => boolean) {
  const read = store.listStatusEvidence?.bind(store);
  if (!read) throw new Error("listStatusEvidence is missing");
  let cursor: string | undefined;
  while (!stopped()) {
    const rows = await read(cursor, EVIDENCE_PAGE);
    yield rows;
    const last = rows[rows.length - 1];
    if (rows.length < EVIDENCE_PAGE || !last) return;
    cursor = last.id;
  }
}

async function scanEvidence(
  store: Store,
  headSeq: number,
  fromSeq: number,
  stopped: () => boolean,
): Promise<EvidenceFound> {
  let checked = 0;
  let stored = 0;
  for await (const rows of evidencePages(store, stopped)) {
    for (const row of rows) {
      checked++;
      if (row.docStatus !== row.status) {
        return {
          ok: false,
          badSeq: row.lastStatus?.seq ?? 0,
          reason: `request ${row.id} is stored with status ${row.status} but its stored document says ${row.docStatus ?? "(unreadable)"}: the stored request was altered`,
        };
      }
      if (row.firstSeq !== undefined && row.firstSeq > fromSeq && row.firstSeq <= headSeq) stored++;
      const last = row.lastStatus;
      if (last && last.seq > headSeq) continue; // changed after the snapshot
      const want = last ? statusAfterEvent(last.type, last.outcome) : undefined;
      if (want === row.status) continue;
      if (!last || want === undefined) {
        if (row.firstSeq !== undefined && row.firstSeq > headSeq) continue; // created after it
        return {
          ok: false,
          badSeq: 0,
          reason: `request ${row.id} is stored (status ${row.status}) but has no event in the audit log: it was added to the database directly`,
        };
      }
      return {
        ok: false,
        badSeq: last.seq,
        reason: `request ${row.id} is stored as ${row.status}, but its audit log says ${want} (event #${last.seq}): the stored request was altered`,
      };
    }
  }
  return { checked, stored };
}

/** After a walk that passed: the scan's finding, then the number of stored requests created in the
 * checked range against the number of creations the walk counted (a request deleted from the
 * database leaves its creation behind). On a mismatch of the counts, the log is read again to name
 * the missing request. */
async function checkEvidence(
  store: Store,
  found: EvidenceFound,
  headSeq: number,
  fromSeq: number,
  created: number,
  pageSize: number,
): Promise<number | Omit<VerifyFailure, "count">> {
  if (!("checked" in found)) return found;
  const { checked, stored } = found;
  if (stored === created) return checked;
  // Someone deleted a request (or added a creation): find which, holding the statuses this once.
  const expected = new Map<string, { status: string; seq: number }>();
  let after = fromSeq;
  while (after < headSeq) {
    const page = await store.listAudit({ after, limit: pageSize });
    for (const e of page) {
      if (e.seq > headSeq) break;
      const status = e.requestId !== undefined ? statusAfter(e) : undefined;
      if (e.requestId !== undefined && status !== undefined) {
        expected.set(e.requestId, { status, seq: e.seq });
      }
      after = e.seq;
    }
    if (page.length < pageSize) break;
  }
  const bad = await checkStatuses(store, expected, headSeq);
  if (typeof bad !== "number") return bad;
  return {
    ok: false,
    badSeq: 0,
    reason: `the audit log records ${created} request creations, but ${stored} stored requests were created in it: requests were deleted or creations added`,
  };
}

/** After a resumed run: compares the requests the new events touched with what those events say;
 * returns how many were checked, or the first mismatch. */
async function checkTouched(
  store: Store,
  expected: Map<string, { status: string; seq: number }>,
  headSeq: number,
): Promise<number | Omit<VerifyFailure, "count">> {
  let checked = 0;
  for (const [id, want] of expected) {
    const r = await store.getRequest(id);
    checked++;
    if (r?.status === want.status) continue;
    if (await changedSince(store, id, headSeq)) continue;
    return {
      ok: false,
      badSeq: want.seq,
      reason: r
        ? `request ${id} is stored as ${r.status}, but its audit log says ${want.status} (event #${want.seq}): the stored request was altered`
        : `request ${id} has audit events (last status ${want.status}, event #${want.seq}) but is missing from the stored requests: it was deleted`,
    };
  }
  return checked;
}

/** Whether a request has events after the snapshot (its status may have moved on since). */
async function changedSince(store: Store, id: string, headSeq: number): Promise<boolean> {
  return (await store.listAudit({ requestId: id, limit: 10_000 })).some((e) => e.seq > headSeq);
}

/** Compares every stored request with the status its audit events give it; returns how many were
 * checked, or the first mismatch that is not explained by a change after the snapshot. */
async function checkStatuses(
  store: Store,
  expected: Map<string, { status: string; seq: number }>,
  headSeq: number,
): Promise<number | Omit<VerifyFailure, "count">> {
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
      if (await changedSince(store, row.id, headSeq)) continue; // created or decided after the snapshot
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
