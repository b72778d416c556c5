// The tamper-evident audit log: every event carries the hash of the one before it, so editing or
// deleting any row breaks the chain from that row on. With an audit key (kept outside the database)
// the hash is an HMAC-SHA-256, so someone who can write to the database cannot recompute the chain
// after editing it; without one it is a plain SHA-256, as before keys existed.
import { createHmac } from "node:crypto";
import { AirlockError, InvalidInputError } from "../core/errors.js";
import { canonicalJson, sha256 } from "../core/hash.js";
import type { AuditDraft, AuditEvent } from "../core/schemas.js";

export const GENESIS_HASH = "0".repeat(64);

/** An audit key as configured: a string (its UTF-8 bytes are the key) or bytes. */
export type AuditKey = string | Buffer | Uint8Array;

/** The shortest key accepted, in bytes. */
export const MIN_AUDIT_KEY_BYTES = 16;

/** The key's bytes; invalid_input when it is too short to be a secret. */
export function auditKeyBytes(key: AuditKey): Buffer {
  const bytes = typeof key === "string" ? Buffer.from(key, "utf8") : Buffer.from(key);
  if (bytes.length < MIN_AUDIT_KEY_BYTES) {
    throw new InvalidInputError(
      `Expected \`auditKey\` to be at least ${MIN_AUDIT_KEY_BYTES} bytes (a random secret, e.g. 32 bytes as hex), got ${bytes.length}`,
      "auditKey",
    );
  }
  return bytes;
}

/** A fingerprint that names a key without revealing it, recorded with a keyed chain so that a wrong
 * key is reported as such instead of as tampering. */
export function auditKeyId(key: Buffer): string {
  return createHmac("sha256", key).update("airlock audit key id").digest("hex").slice(0, 16);
}

export function hmacHex(key: Buffer, text: string): string {
  return createHmac("sha256", key).update(text).digest("hex");
}

/** What an event's hash covers: its fields as canonical JSON (keys sorted), with its data already
 * written as canonical JSON (`dataJson`), so that a store can write the same text it hashed and a
 * verifier can hash the stored text without parsing it. */
export function eventHashText(
  seq: number,
  e: { type: string; requestId?: string | undefined; actor: string; at: number },
  prevHash: string,
  dataJson: string,
): string {
  return `{"actor":${JSON.stringify(e.actor)},"at":${JSON.stringify(e.at)},"data":${dataJson},"prevHash":${JSON.stringify(prevHash)},"requestId":${e.requestId == null ? "null" : JSON.stringify(e.requestId)},"seq":${JSON.stringify(seq)},"type":${JSON.stringify(e.type)}}`;
}

/** The hash of one event: HMAC-SHA-256 under `key` when given, else SHA-256. */
export function hashEvent(seq: number, draft: AuditDraft, prevHash: string, key?: Buffer): string {
  return hashEventText(eventHashText(seq, draft, prevHash, canonicalJson(draft.data)), key);
}

function hashEventText(text: string, key: Buffer | undefined): string {
  return key ? hmacHex(key, text) : sha256(text);
}

/** Places a draft after `prev` in the chain. Stores call this inside the transaction that appends,
 * with the key when the chain is keyed. */
export function chainEvent(
  draft: AuditDraft,
  prev: { seq: number; hash: string } | undefined,
  key?: Buffer,
): AuditEvent {
  const { event, dataJson } = placeEvent(draft, prev, key);
  hashedData.set(event, dataJson);
  return event;
}

/** `chainEvent`, with the data's canonical JSON: the very text the hash covers, which a store that
 * keeps data as text writes, so that verification can hash it as read. */
export function placeEvent(
  draft: AuditDraft,
  prev: { seq: number; hash: string } | undefined,
  key?: Buffer,
): { event: AuditEvent; dataJson: string } {
  const seq = (prev?.seq ?? 0) + 1;
  const prevHash = prev?.hash ?? GENESIS_HASH;
  const dataJson = canonicalJson(draft.data);
  const hash = hashEventText(eventHashText(seq, draft, prevHash, dataJson), key);
  return { event: { ...draft, seq, prevHash, hash }, dataJson };
}

/** The data text each event from `chainEvent` was hashed over (see `hashedDataText`); a caller of
 * `placeEvent` has it already. */
const hashedData = new WeakMap<AuditEvent, string>();

/** The canonical JSON of an event's data, as its hash covers it: kept from `chainEvent` (so a store
 * writing the events it got there does not serialise the data a second time), else made. */
export function hashedDataText(e: AuditEvent): string {
  return hashedData.get(e) ?? canonicalJson(e.data);
}

/** How a store with (or without) a key appends to a chain recorded as `keying`: the key to hash
 * with, and whether this append starts keying the chain. Throws when the two disagree: a keyed
 * chain never goes back to plain hashes, and is never continued under another key. */
export function keyForAppend(
  own: { key: Buffer; id: string } | undefined,
  keying: { keyedFrom?: number | null; keyId?: string | null },
): { key: Buffer | undefined; startsKeying: boolean } {
  if (keying.keyedFrom === undefined || keying.keyedFrom === null) {
    return { key: own?.key, startsKeying: own !== undefined };
  }
  if (!own) {
    throw new AirlockError(
      "store_unavailable",
      `the audit chain is keyed (HMAC) from event #${keying.keyedFrom}: open the store with its audit key (the \`auditKey\` option; AIRLOCK_AUDIT_KEY for the airlock command)`,
    );
  }
  if (keying.keyId && keying.keyId !== own.id) {
    throw new AirlockError(
      "store_unavailable",
      `the audit key given is not the key this audit chain was keyed with (from event #${keying.keyedFrom}): use the original key`,
    );
  }
  return { key: own.key, startsKeying: false };
}

export type VerifyOk = {
  ok: true;
  count: number;
  lastHash: string;
  /** How many stored requests were compared with their audit events (verifyAuditLog). */
  requests?: number;
  /** How many signed checkpoints the chain was checked against. */
  checkpoints?: number;
  /** The first event hashed with the audit key, when the chain is keyed. */
  keyedFrom?: number;
};
export type VerifyFailure = { ok: false; count: number; badSeq: number; reason: string };
export type VerifyResult = VerifyOk | VerifyFailure;

/** Checks a run of events in `seq` order; feed it page by page through `createVerifier`. Events
 * from `keyedFrom` on are checked as HMACs under `key`. */
export function createVerifier(opts: { key?: Buffer; keyedFrom?: number } = {}) {
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
      const keyed = opts.keyedFrom !== undefined && e.seq >= opts.keyedFrom;
      if (keyed && !opts.key) {
        return {
          ok: false,
          count,
          badSeq: e.seq,
          reason: `event #${e.seq} is keyed (HMAC): verifying it needs the audit key`,
        };
      }
      if (hashEvent(e.seq, e, e.prevHash, keyed ? opts.key : undefined) !== e.hash) {
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
