// Pruning and audit marks for the memory store: the reference of `Store.prune` (the cut rule is in
// src/audit/prune-cut.ts). The memory store's chain is never keyed, so its marks are plain hashes.
// Its outbox rows are kept: the memory outbox has no way to remove rows yet (a known gap).
import { createChainCheck } from "../audit/chain-check.js";
import { signMark } from "../audit/marks.js";
import { type CutRequest, createCutFinder, resolvePruneOptions } from "../audit/prune-cut.js";
import type { ApprovalRequest, AuditEvent } from "../core/schemas.js";
import type { AuditMark, AuditMarks, PruneOptions, PruneResult } from "../core/store.js";

export interface MemoryPruning {
  /** The last event pruned: the chain continues from it when every event was pruned. */
  readonly anchor: AuditMark | undefined;
  prune(options: PruneOptions): PruneResult;
  marks(): AuditMarks;
  saveVerified(mark: AuditMark): void;
}

export function memoryPruning(state: {
  audit: AuditEvent[];
  byId: Map<string, ApprovalRequest>;
  /** Removes a request and whatever indexes it. */
  removeRequest: (id: string) => void;
}): MemoryPruning {
  let anchor: AuditMark | undefined;
  let verified: AuditMark | undefined;

  function batch(
    before: number,
    batchEvents: number,
    at: number,
  ): { events: number; requests: number; more: boolean } {
    const { audit } = state;
    const lastSeq = new Map<string, number>();
    for (const e of audit) if (e.requestId !== undefined) lastSeq.set(e.requestId, e.seq);
    const check = createChainCheck(anchor ? { start: anchor } : {});
    const finder = createCutFinder({ before, batchEvents, check });
    for (const e of audit) {
      let request: CutRequest | undefined;
      if (e.requestId !== undefined) {
        const r = state.byId.get(e.requestId);
        request = r
          ? { status: r.status, updatedAt: r.updatedAt, lastSeq: lastSeq.get(r.id) ?? e.seq }
          : { missing: true };
      }
      if (!finder.push(e, request)) break;
    }
    const cut = finder.cut;
    if (!cut) return { events: 0, requests: 0, more: false };
    const n = audit.findIndex((e) => e.seq > cut.seq);
    const removed = audit.splice(0, n === -1 ? audit.length : n);
    const ids = new Set<string>();
    for (const e of removed) if (e.requestId !== undefined) ids.add(e.requestId);
    for (const id of ids) state.removeRequest(id);
    anchor = signMark("anchor", cut, at, {});
    return { events: removed.length, requests: ids.size, more: finder.batchFull };
  }

  return {
    get anchor() {
      return anchor;
    },
    prune(options) {
      const o = resolvePruneOptions(options);
      let requests = 0;
      let events = 0;
      // Each round removes at least one event or ends the loop.
      for (;;) {
        const b = batch(o.before, o.batchEvents, o.now());
        events += b.events;
        requests += b.requests;
        if (!b.more || b.events === 0) break;
      }
      return { requests, events, outbox: 0, ...(anchor ? { anchor: { ...anchor } } : {}) };
    },
    marks() {
      return {
        ...(anchor ? { anchor: { ...anchor } } : {}),
        ...(verified ? { verified: { ...verified } } : {}),
      };
    },
    saveVerified(mark) {
      verified = { ...mark };
    },
  };
}
