// Checks a run of audit events in seq order, one at a time, holding only the previous event's seq and
// hash: memory stays flat however long the log. Unlike `createVerifier` (chain.ts) it can start in
// the middle of the chain, at a prune anchor or a verified mark, instead of at the genesis.
import * as crypto from "node:crypto";
import { createHash } from "node:crypto";
import { canonicalJson } from "../core/hash.js";
import type { AuditEvent } from "../core/schemas.js";
import { GENESIS_HASH, type VerifyFailure } from "./chain.js";

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
  const plain = createEventHasher();
  const keyed = o.key ? createEventHasher(o.key) : undefined;
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
      const isKeyed = o.keyedFrom !== undefined && e.seq >= o.keyedFrom;
      if (isKeyed && !keyed) {
        return fail(e.seq, `event #${e.seq} is keyed (HMAC): verifying it needs the audit key`);
      }
      if ((isKeyed ? keyed : plain)?.(e) !== e.hash) {
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

/** `hashEvent` (chain.ts) for checking many events: the same bytes hashed, about twice as fast.
 * The event body is written in canonical key order directly (actor, at, data, prevHash, requestId,
 * seq, type), and the HMAC is computed as RFC 2104 defines it, SHA-256(opad ‖ SHA-256(ipad ‖ text)),
 * with one-shot digests over buffers that hold the pads once (no Hmac object per event).
 * test/audit/chain-check.test.ts holds it equal to `hashEvent`. */
export function createEventHasher(key?: Buffer): (e: AuditEvent) => string {
  const sha = oneShotSha256Hex();
  const pads = key ? hmacPads(key) : undefined;
  let inner = Buffer.alloc(0);
  const outer = Buffer.alloc(BLOCK + 32);
  if (pads) {
    inner = Buffer.alloc(BLOCK + 4096);
    pads.inner.copy(inner);
    pads.outer.copy(outer);
  }
  return (e) => {
    const text = `{"actor":${JSON.stringify(e.actor)},"at":${JSON.stringify(e.at)},"data":${canonicalJson(e.data)},"prevHash":${JSON.stringify(e.prevHash)},"requestId":${e.requestId === undefined ? "null" : JSON.stringify(e.requestId)},"seq":${JSON.stringify(e.seq)},"type":${JSON.stringify(e.type)}}`;
    if (!pads) return sha(text);
    const bytes = Buffer.byteLength(text, "utf8");
    if (BLOCK + bytes > inner.length) {
      const grown = Buffer.alloc(BLOCK + bytes * 2);
      inner.copy(grown, 0, 0, BLOCK);
      inner = grown;
    }
    inner.write(text, BLOCK, "utf8");
    outer.write(sha(inner.subarray(0, BLOCK + bytes)), BLOCK, "hex");
    return sha(outer);
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

type OneShotHash = (algorithm: string, data: string | Buffer) => string;

/** SHA-256 as hex: `crypto.hash` where Node has it (one call, no Hash object), else a Hash. */
function oneShotSha256Hex(): (data: string | Buffer) => string {
  const hash = (crypto as { hash?: OneShotHash }).hash;
  if (hash) return (data) => hash("sha256", data);
  return (data) => createHash("sha256").update(data).digest("hex");
}
