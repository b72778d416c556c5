import { randomFillSync } from "node:crypto";
import { monotonicFactory } from "ulid";

// ULIDs sort by creation time, so "newest first" is "id descending" and ids make stable cursors.
// The monotonic factory keeps ids increasing within one millisecond too. Its random part comes from
// the system CSPRNG, drawn 4 KiB at a time instead of one call per id.
const pool = new Uint8Array(4096);
let used = pool.length;
function prng(): number {
  if (used >= pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  return (pool[used++] ?? 0) / 256;
}

const next = monotonicFactory(prng);

export function newRequestId(now: number): string {
  return `req_${next(now).toLowerCase()}`;
}

/** An outbox message's id: time-ordered like request ids. */
export function newMessageId(now: number): string {
  return `msg_${next(now).toLowerCase()}`;
}
