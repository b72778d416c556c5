// Signed checkpoints of the audit chain, kept outside the database: after commits, the store appends
// `{"seq":…,"hash":…,"at":…,"mac":…}` lines to a file (at most one per interval, and one at close),
// each signed with the audit key. Someone who can rewrite the database but not this file cannot hide
// a truncation or a rewrite: `verifyAuditLog` checks that the chain still holds every checkpoint.
//
// Deleting the file as well must not pass for "no checkpoints were ever written": a store that starts
// a checkpoint file (none there, or empty) records that in the chain itself, as a keyed event, and
// writes a checkpoint of that very event at once. `verifyAuditLog` then requires the checkpoint of
// every such event it meets: without the file, or with a new one started after a deletion, it fails.
import { appendFileSync, statSync } from "node:fs";
import { appendFile, readFile } from "node:fs/promises";
import { InvalidInputError } from "../core/errors.js";
import type { AuditDraft, AuditEvent } from "../core/schemas.js";
import type { AuditPageEvent } from "../core/store.js";
import { type AuditKey, auditKeyBytes, auditKeyId, hmacHex } from "./chain.js";

export interface Checkpoint {
  seq: number;
  hash: string;
  /** When it was written, epoch ms. */
  at: number;
  mac: string;
}

export function checkpointMac(key: Buffer, c: Omit<Checkpoint, "mac">): string {
  return hmacHex(key, `airlock audit checkpoint\n${c.seq}\n${c.hash}\n${c.at}`);
}

export interface CheckpointWriterOptions {
  file: string;
  key: Buffer;
  /** At most one line per this many ms (the last head noted is written). @default 1000 */
  intervalMs?: number;
  /** A write that failed (the store keeps working; the next write tries again). */
  onError?: (err: Error) => void;
  now?: () => number;
}

export interface CheckpointWriter {
  /** Notes a committed chain head; it is written within `intervalMs`. */
  note(head: { seq: number; hash: string }): void;
  /** Writes the last head noted, if not written yet, and waits for every write. */
  flush(): Promise<void>;
  /** Writes a checkpoint of exactly `head` now, whatever was noted after it; rejects when the line
   * could not be written. */
  writeExactly(head: { seq: number; hash: string }): Promise<void>;
  /** True once (then false): the file was missing or empty when the writer was made, so its start
   * is to be recorded in the chain (`recordCheckpointsStart`). */
  takeFresh(): boolean;
}

/** The audit options both stores take. */
export interface AuditKeyOptions {
  /** The audit key (at least 16 bytes; keep it outside the database, e.g. in the environment). With
   * it, new audit events are hashed with HMAC-SHA-256 and the database records from which event
   * the chain is keyed; a keyed database then refuses to open without this same key. */
  auditKey?: AuditKey;
  /** A file outside the database to which signed checkpoints of the chain head are appended after
   * commits (at most one per `checkpointIntervalMs`, and one at close). Needs `auditKey`. */
  checkpointFile?: string;
  /** @default 1000 */
  checkpointIntervalMs?: number;
}

/** A store's own audit key: its bytes and id. */
export interface OwnAuditKey {
  key: Buffer;
  id: string;
}

/** The store's own audit key (none without `auditKey`); invalid_input when `checkpointFile` is given
 * without `auditKey`. */
export function ownAuditKey(o: AuditKeyOptions): OwnAuditKey | undefined {
  const own =
    o.auditKey === undefined
      ? undefined
      : (() => {
          const key = auditKeyBytes(o.auditKey);
          return { key, id: auditKeyId(key) };
        })();
  if (o.checkpointFile !== undefined && !own) {
    throw new InvalidInputError(
      "`checkpointFile` needs `auditKey`: checkpoints are signed with the audit key",
      "checkpointFile",
    );
  }
  return own;
}

/** The writer of `checkpointFile`, signing with `own` (none without either). */
export function checkpointWriterFor(
  o: AuditKeyOptions,
  own: OwnAuditKey | undefined,
  onError: ((err: Error) => void) | undefined,
): CheckpointWriter | undefined {
  return o.checkpointFile !== undefined && own
    ? createCheckpointWriter({
        file: o.checkpointFile,
        key: own.key,
        intervalMs: o.checkpointIntervalMs,
        onError,
      })
    : undefined;
}

/** Creates the writer; invalid_input at once when the file cannot be written (a wrong path should
 * not go unnoticed until someone needs the checkpoints). */
export function createCheckpointWriter(o: CheckpointWriterOptions): CheckpointWriter {
  let fresh = (statSync(o.file, { throwIfNoEntry: false })?.size ?? 0) === 0;
  try {
    appendFileSync(o.file, "", { mode: 0o600 });
  } catch (err) {
    throw new InvalidInputError(
      `cannot write the checkpoint file ${o.file}: ${(err as Error).message}`,
      "checkpointFile",
    );
  }
  const intervalMs = o.intervalMs ?? 1000;
  const now = o.now ?? Date.now;
  let pending: { seq: number; hash: string } | undefined;
  let writtenSeq = 0;
  let lastWriteAt = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();

  function write(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const head = pending;
    pending = undefined;
    if (!head || head.seq <= writtenSeq) return chain;
    writtenSeq = head.seq;
    const at = now();
    lastWriteAt = at;
    const c = { seq: head.seq, hash: head.hash, at };
    const line = `${JSON.stringify({ ...c, mac: checkpointMac(o.key, c) })}\n`;
    chain = chain
      .then(() => appendFile(o.file, line, { mode: 0o600 }))
      .catch((err: unknown) => {
        writtenSeq = Math.min(writtenSeq, head.seq - 1);
        o.onError?.(err instanceof Error ? err : new Error(String(err)));
      });
    return chain;
  }

  return {
    note(head) {
      if (head.seq <= writtenSeq || (pending && pending.seq >= head.seq)) return;
      pending = { seq: head.seq, hash: head.hash };
      if (timer) return;
      const wait = Math.max(0, lastWriteAt + intervalMs - now());
      timer = setTimeout(() => void write(), wait);
      timer.unref();
    },
    flush: () => write(),
    writeExactly(head) {
      writtenSeq = Math.max(writtenSeq, head.seq);
      const c = { seq: head.seq, hash: head.hash, at: now() };
      const line = `${JSON.stringify({ ...c, mac: checkpointMac(o.key, c) })}\n`;
      const done = chain.then(() => appendFile(o.file, line, { mode: 0o600 }));
      chain = done.catch((err: unknown) => {
        o.onError?.(err instanceof Error ? err : new Error(String(err)));
      });
      return done;
    },
    takeFresh() {
      const was = fresh;
      fresh = false;
      return was;
    },
  };
}

/** `data.kind` of the event recording that checkpoints of the chain are written to a file. */
export const CHECKPOINTS_STARTED = "checkpoints_started";

function startedMac(key: Buffer, at: number): string {
  return hmacHex(key, `airlock audit checkpoints started\n${at}`);
}

/** The event recording that checkpoints start. Its `mac` tells it from a look-alike someone records
 * through `record()` (who lacks the key): only the store that holds the key writes a genuine one. */
export function checkpointsStartedDraft(key: Buffer, at: number): AuditDraft {
  return {
    type: "notified",
    actor: "airlock",
    at,
    data: { kind: CHECKPOINTS_STARTED, mac: startedMac(key, at) },
  };
}

/** Whether `e` is a genuine record that checkpoints started (see `checkpointsStartedDraft`). Only
 * the data of an event that may be one is parsed. */
export function isCheckpointsStart(
  e: AuditEvent | AuditPageEvent,
  key: Buffer | undefined,
): boolean {
  // The actor too: a caller of `record()` could copy a genuine record's data and time (its MAC
  // covers only those), but an HTTP caller records under its own token's name.
  if (!key || e.type !== "notified" || e.requestId !== undefined || e.actor !== "airlock") {
    return false;
  }
  let data: unknown;
  if ("dataJson" in e) {
    if (!e.dataJson.includes(CHECKPOINTS_STARTED)) return false;
    try {
      data = JSON.parse(e.dataJson);
    } catch {
      return false;
    }
  } else data = e.data;
  const d = data as { kind?: unknown; mac?: unknown } | null;
  return d?.kind === CHECKPOINTS_STARTED && d.mac === startedMac(key, e.at);
}

/** Appends the record that checkpoints start and writes the checkpoint of exactly that event at
 * once (the window in which a crash leaves the record without its checkpoint is one file append).
 * Stores call it from `migrate()`, where it does so only when the file was fresh, and after a prune
 * that deleted events (`always`), which may have taken the earlier record with them. */
export async function recordCheckpointsStart(
  writer: CheckpointWriter | undefined,
  own: OwnAuditKey | undefined,
  append: (drafts: AuditDraft[]) => Promise<AuditEvent[]>,
  o: { always?: boolean; now?: () => number } = {},
): Promise<void> {
  if (!writer || !own) return;
  if (!writer.takeFresh() && !o.always) return;
  const events = await append([checkpointsStartedDraft(own.key, (o.now ?? Date.now)())]);
  const record = events[events.length - 1];
  if (record) await writer.writeExactly(record);
}

/** The checkpoints of a file, each checked against its signature. A missing file has none. */
export async function readCheckpoints(
  file: string,
  key: Buffer,
): Promise<{ checkpoints: Checkpoint[]; bad?: { line: number; reason: string } }> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as { code?: string }).code === "ENOENT") return { checkpoints: [] };
    throw new InvalidInputError(
      `cannot read the checkpoint file ${file}: ${(err as Error).message}`,
      "checkpointFile",
    );
  }
  const checkpoints: Checkpoint[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]?.trim();
    if (!raw) continue;
    let c: Checkpoint | undefined;
    try {
      const v = JSON.parse(raw) as Partial<Checkpoint>;
      if (
        Number.isSafeInteger(v.seq) &&
        typeof v.hash === "string" &&
        typeof v.at === "number" &&
        typeof v.mac === "string"
      ) {
        c = v as Checkpoint;
      }
    } catch {
      // reported below
    }
    // A torn last line (a crash mid-write) is not tampering: skip it.
    if (!c && i === lines.length - 1 && !text.endsWith("\n")) continue;
    if (!c) return { checkpoints, bad: { line: i + 1, reason: "is not a checkpoint" } };
    if (checkpointMac(key, c) !== c.mac) {
      return {
        checkpoints,
        bad: {
          line: i + 1,
          reason: `(event #${c.seq}) does not carry a valid signature: the file was edited, or written with another key`,
        },
      };
    }
    checkpoints.push(c);
  }
  return { checkpoints };
}
