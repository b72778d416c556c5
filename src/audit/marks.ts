// Marks kept in the database beside the audit log, each a signed summary of one point of the chain:
// - the prune anchor: the seq and hash of the last event `prune` deleted. The log that remains must
//   start right after it (its first event links to the anchor's hash), so deleting more rows, or
//   moving the anchor, is caught;
// - the verified mark: where `airlock audit verify` got to, so the next run checks only what came
//   after (and that the event at the mark still has the hash it had).
// A mark is signed like the checkpoints (checkpoint.ts): HMAC-SHA-256 under the audit key when the
// chain is keyed at its seq, so whoever can write to the database but lacks the key cannot forge
// one; a plain SHA-256 before that, like the unkeyed events it summarises.
import { sha256 } from "../core/hash.js";
import type { AuditMark } from "../core/store.js";
import { hmacHex } from "./chain.js";

export type MarkKind = "anchor" | "verified";

/** Whether a mark at `seq` is signed with the key: the chain is keyed there. */
export function markIsKeyed(seq: number, keyedFrom: number | null | undefined): boolean {
  return keyedFrom !== undefined && keyedFrom !== null && keyedFrom <= seq;
}

// A keyed verified mark may also say that the run saw signed checkpoints being written
// (`promisesCheckpoints`): a variant of its signed text, so only the key holder can set or remove it,
// and the marks table keeps its columns.
function markText(kind: MarkKind, m: Omit<AuditMark, "mac">, promises = false): string {
  return `airlock audit ${kind}${promises ? " with checkpoints" : ""}\n${m.seq}\n${m.hash}\n${m.at}`;
}

/** The MAC of a mark: HMAC under `key` when given, else SHA-256. */
export function markMac(
  kind: MarkKind,
  m: Omit<AuditMark, "mac">,
  key?: Buffer,
  promises = false,
): string {
  const text = markText(kind, m, promises);
  return key ? hmacHex(key, text) : sha256(text);
}

/** Whether a genuine keyed mark says that checkpoints were being written up to it. */
export function markPromisesCheckpoints(
  kind: MarkKind,
  m: AuditMark,
  keying: { key?: Buffer; keyedFrom?: number },
): boolean {
  return (
    keying.key !== undefined &&
    markIsKeyed(m.seq, keying.keyedFrom) &&
    markMac(kind, m, keying.key, true) === m.mac
  );
}

/** A mark of `point` at `at`, signed with `key` when the chain is keyed there. Throws when it is
 * keyed there and no key was given (stores open keyed chains only with their key). */
export function signMark(
  kind: MarkKind,
  point: { seq: number; hash: string },
  at: number,
  keying: { key?: Buffer; keyedFrom?: number | null },
  /** The mark says that checkpoints were being written (kept only where it is keyed). */
  promisesCheckpoints = false,
): AuditMark {
  const keyed = markIsKeyed(point.seq, keying.keyedFrom);
  if (keyed && !keying.key) {
    throw new Error(`the ${kind} at event #${point.seq} must be signed with the audit key`);
  }
  const m = { seq: point.seq, hash: point.hash, at };
  return {
    ...m,
    mac: keyed ? markMac(kind, m, keying.key, promisesCheckpoints) : markMac(kind, m),
  };
}

/** Why a stored mark is not genuine (undefined when it is). */
export function markProblem(
  kind: MarkKind,
  m: AuditMark,
  keying: { key?: Buffer; keyedFrom?: number },
): string | undefined {
  const keyed = markIsKeyed(m.seq, keying.keyedFrom);
  if (keyed && !keying.key) return `the ${kind} is signed with the audit key: checking it needs it`;
  if (
    markMac(kind, m, keyed ? keying.key : undefined) !== m.mac &&
    !markPromisesCheckpoints(kind, m, keying)
  ) {
    return kind === "anchor"
      ? `the prune anchor (event #${m.seq}) does not carry a valid signature: it was edited, or written with another key`
      : `the verified mark (event #${m.seq}) does not carry a valid signature: it was edited, or written with another key`;
  }
  return undefined;
}
