// Checks a run of audit events in seq order, one at a time, holding only the previous event's seq and
// hash: memory stays flat however long the log. Unlike `createVerifier` (chain.ts) it can start in
// the middle of the chain, at a prune anchor or a verified mark, instead of at the genesis.
import { createHash } from "node:crypto";
import { canonicalJson, sha256OneShot } from "../core/hash.js";
import { MAX_JSON_DEPTH } from "../core/limits.js";
import type { AuditEvent } from "../core/schemas.js";
import type { AuditPageEvent } from "../core/store.js";
import { eventHashText, GENESIS_HASH, type VerifyFailure } from "./chain.js";

export interface ChainCheckOptions {
  /** The audit key; needed from `keyedFrom` on. */
  key?: Buffer;
  /** The first event hashed with the key (the chain is unkeyed before it). */
  keyedFrom?: number;
  /** The event the run follows (seq and hash); the genesis when undefined. */
  start?: { seq: number; hash: string };
  /** Check each event's own hash. @default true; false: only the order and the links, when the
   * hashes are checked elsewhere (hash-pool.ts) */
  hashes?: boolean;
}

export interface ChainCheck {
  /** Checks the next event; the failure when it does not belong there. */
  push(e: AuditEvent | AuditPageEvent): VerifyFailure | undefined;
  /** The last event checked (or the start). */
  readonly last: { seq: number; hash: string };
  /** How many events were checked. */
  readonly count: number;
}

export function createChainCheck(o: ChainCheckOptions = {}): ChainCheck {
  let prevSeq = o.start?.seq ?? 0;
  let prevHash = o.start?.hash ?? GENESIS_HASH;
  let count = 0;
  const matches = o.hashes === false ? undefined : createHashMatch(o.key, o.keyedFrom);
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
      const verdict = matches?.(e);
      if (verdict !== undefined && verdict !== "ok")
        return fail(e.seq, hashFailure(e.seq, verdict));
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

/** What an event's own hash says: it matches, it does not (`altered`), or it is keyed and there is
 * no key to check it with. */
export type HashVerdict = "ok" | "altered" | "needs-key";

export const hashFailure = (seq: number, verdict: Exclude<HashVerdict, "ok">): string =>
  verdict === "needs-key"
    ? `event #${seq} is keyed (HMAC): verifying it needs the audit key`
    : `event #${seq} was altered: its content does not match its hash`;

/** Checks events' own hashes: HMAC under `key` from `keyedFrom` on, plain SHA-256 before.
 *
 * Data read as stored text is hashed as read: a match proves the text is the canonical JSON the
 * writer hashed. Else the text may be as an older version wrote it (`olderSpelling`), hashed as that
 * version did; whichever way matched last is tried first, so an older log costs one hash per event,
 * not two. */
export function createHashMatch(
  key: Buffer | undefined,
  keyedFrom: number | undefined,
): (e: AuditEvent | AuditPageEvent) => HashVerdict {
  const plain = createEventHasher();
  const keyed = key ? createEventHasher(key) : undefined;
  let storedFirst = true;
  return (e) => {
    const hash = keyedFrom !== undefined && e.seq >= keyedFrom ? keyed : plain;
    if (!hash) return "needs-key";
    if (!("dataJson" in e)) return hashes(hash, e, canonicalJson(e.data)) ? "ok" : "altered";
    if (hashes(hash, e, storedFirst ? e.dataJson : olderSpelling(e.dataJson))) return "ok";
    if (!hashes(hash, e, storedFirst ? olderSpelling(e.dataJson) : e.dataJson)) return "altered";
    storedFirst = !storedFirst;
    return "ok";
  };
}

/** Whether `e` carries the hash of its fields with `dataJson` as its data (none: it cannot). */
const hashes = (
  hash: EventHasher,
  e: Parameters<EventHasher>[0] & { hash: string },
  dataJson: string | undefined,
) => dataJson !== undefined && hash(e, dataJson) === e.hash;

/** Nesting deeper than any data written (input is held to MAX_JSON_DEPTH; an event's data wraps it a
 * few levels more) is refused before it is parsed or walked, so it cannot overflow the stack. */
const STORED_DEPTH = 4 * MAX_JSON_DEPTH;

/** What an older version hashed for data it stored as `text`: the canonical JSON of the value, when
 * `text` is exactly what that version wrote (JSON.stringify of the value, keys as inserted). Any
 * other spelling of a value (duplicate keys, spaces, `1.0`, escapes) is not something Airlock ever
 * wrote, and SQL may read it differently from JSON.parse (json_extract keeps the first of duplicate
 * keys, JSON.parse the last): undefined, so the event is reported as altered. */
function olderSpelling(text: string): string | undefined {
  if (nestingExceeds(text, STORED_DEPTH)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  return JSON.stringify(value) === text ? canonicalJson(value) : undefined;
}

/** Whether brackets in JSON text nest deeper than `max` (those inside strings not counted). */
function nestingExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** Hashes an event whose data is given as canonical JSON text (`dataJson`). */
export type EventHasher = (
  e: {
    seq: number;
    type: string;
    requestId?: string | undefined;
    actor: string;
    at: number;
    prevHash: string;
  },
  dataJson: string,
) => string;

/** `hashEvent` (chain.ts) for checking many events: the same bytes hashed, about twice as fast.
 * The HMAC is computed as RFC 2104 defines it, SHA-256(opad ‖ SHA-256(ipad ‖ text)), with one-shot
 * digests over buffers that hold the pads once (no Hmac object per event).
 * test/audit/chain-check.test.ts holds it equal to `hashEvent`. */
export function createEventHasher(key?: Buffer): EventHasher {
  const sha = sha256OneShot;
  const pads = key ? hmacPads(key) : undefined;
  let inner = Buffer.alloc(0);
  const outer = Buffer.alloc(BLOCK + 32);
  if (pads) {
    inner = Buffer.alloc(BLOCK + 4096);
    pads.inner.copy(inner);
    pads.outer.copy(outer);
  }
  return (e, dataJson) => {
    const text = eventHashText(e.seq, e, e.prevHash, dataJson);
    if (!pads) return sha.hex(text);
    // At most 3 bytes per UTF-16 unit: room enough without measuring the text first.
    if (BLOCK + text.length * 3 > inner.length) {
      const grown = Buffer.alloc(BLOCK + text.length * 6);
      inner.copy(grown, 0, 0, BLOCK);
      inner = grown;
    }
    const bytes = inner.write(text, BLOCK, "utf8");
    sha.bytes(inner.subarray(0, BLOCK + bytes)).copy(outer, BLOCK);
    return sha.hex(outer);
  };
}

/** SHA-256's block size in bytes. */
const BLOCK = 64;

function hmacPads(key: Buffer): { inner: Buffer; outer: Buffer } {
  const k = Buffer.alloc(BLOCK);
  (key.length > BLOCK ? createHash("sha256").update(key).digest() : key).copy(k);
  const inner = Buffer.alloc(BLOCK);
  const outer = Buffer.alloc(BLOCK);
  for (let i = 0; i < BLOCK; i++) {
    inner[i] = (k[i] ?? 0) ^ 0x36;
    outer[i] = (k[i] ?? 0) ^ 0x5c;
  }
  return { inner, outer };
}
