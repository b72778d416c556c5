// An in-memory store: the executable documentation of the Store contract, and a fast store for tests
// of code built on Airlock. Nothing survives the process; there is no other process to notify.
import { chainEvent } from "../audit/chain.js";
import { AirlockError } from "../core/errors.js";
import { checkPendingQuota, quotaRefusal } from "../core/quota.js";
import type { ApprovalRequest, AuditDraft, AuditEvent } from "../core/schemas.js";
import type { ListFilter, OutcomeRow, Page, Store } from "../core/store.js";
import { memoryOutbox } from "./memory-outbox.js";
import { memoryPruning } from "./memory-prune.js";
import { memoryTickets } from "./memory-tickets.js";
import { memoryTrustRules } from "./memory-trust.js";
import {
  checkClaim,
  checkOutboxDrafts,
  checkOutboxFilter,
  checkSettlement,
} from "./outbox-rows.js";
import {
  clampLimit,
  countCap,
  deadlineKey,
  docBytes,
  listedExecutions,
  listedStatuses,
  listOrder,
  pageOf,
  parseCursor,
  summaryOf,
  titleMatches,
} from "./paging.js";
import { checkColumns, checkDrafts, idTaken } from "./storable.js";

/** Idempotency keys are scoped per requester. */
const keyOf = (requester: string, key: string) => `${requester}\u0000${key}`;

export function memoryStore(): Store {
  const byId = new Map<string, ApprovalRequest>();
  const byKey = new Map<string, string>();
  const audit: AuditEvent[] = [];
  const outbox = memoryOutbox();
  const pruning = memoryPruning({
    audit,
    byId,
    removeRequest(id) {
      const r = byId.get(id);
      if (r?.key !== undefined) byKey.delete(keyOf(r.requester, r.key));
      byId.delete(id);
    },
  });
  let closed = false;

  const copy = <T>(v: T): T => structuredClone(v);
  function guard() {
    if (closed) throw new AirlockError("closed", "the memory store is closed");
  }
  function append(drafts: AuditDraft[]): AuditEvent[] {
    const out: AuditEvent[] = [];
    for (const d of drafts) {
      const e = chainEvent(copy(d), audit[audit.length - 1] ?? pruning.anchor);
      audit.push(e);
      out.push(copy(e));
    }
    return out;
  }
  function matches(r: ApprovalRequest, f: ListFilter): boolean {
    const statuses = listedStatuses(f);
    if (statuses.length && !statuses.includes(r.status)) return false;
    if (f.action !== undefined && r.action !== f.action) return false;
    if (f.requester !== undefined && r.requester !== f.requester) return false;
    const executions = listedExecutions(f);
    if (executions.length && !(r.execution && executions.includes(r.execution.state))) return false;
    if (!titleMatches(r.title, f.q)) return false;
    if (f.approver !== undefined) {
      const names = Array.isArray(f.approver) ? f.approver : [f.approver];
      if (r.approvers.length && !r.approvers.some((a) => names.includes(a))) return false;
    }
    return true;
  }
  /** The requests of a listing, in its order, from its cursor on: one more than a page. */
  function listing(f: ListFilter): { rows: ApprovalRequest[]; limit: number } {
    const order = listOrder(f);
    const cursor = parseCursor(order, f.cursor);
    const limit = clampLimit(f.limit);
    let all = [...byId.values()].filter((r) => matches(r, f));
    if (order === "deadline") {
      const cmp = (a: { k: number; id: string }, b: { k: number; id: string }) =>
        a.k - b.k || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
      all.sort((a, b) => cmp({ k: deadlineKey(a), id: a.id }, { k: deadlineKey(b), id: b.id }));
      if (cursor?.order === "deadline") {
        const at = { k: cursor.key, id: cursor.id };
        all = all.filter((r) => cmp({ k: deadlineKey(r), id: r.id }, at) > 0);
      }
    } else {
      const dir = order === "newest" ? -1 : 1;
      all.sort((a, b) => (a.id < b.id ? -dir : a.id > b.id ? dir : 0));
      if (cursor) all = all.filter((r) => (dir < 0 ? r.id < cursor.id : r.id > cursor.id));
    }
    return { rows: all.slice(0, limit + 1), limit };
  }
  function page<T>(f: ListFilter, map: (r: ApprovalRequest) => T): Page<T> {
    const order = listOrder(f);
    const { rows, limit } = listing(f);
    const p = pageOf(order, rows, limit, (r) => ({ id: r.id, deadlineKey: deadlineKey(r) }));
    return p.nextCursor
      ? { items: p.items.map(map), nextCursor: p.nextCursor }
      : { items: p.items.map(map) };
  }

  function usageOf(requester: string): { count: number; bytes: number } {
    let count = 0;
    let bytes = 0;
    for (const r of byId.values()) {
      if (r.status !== "pending" || r.requester !== requester) continue;
      count++;
      bytes += docBytes(JSON.stringify(r));
    }
    return { count, bytes };
  }

  return {
    kind: "memory",
    async migrate() {},
    async insertRequest(request, events, messages = [], options = {}) {
      guard();
      checkColumns(request);
      checkDrafts(events);
      checkOutboxDrafts(messages);
      if (options.quota) checkPendingQuota(options.quota);
      const existingId =
        request.key === undefined ? undefined : byKey.get(keyOf(request.requester, request.key));
      const existing = existingId === undefined ? undefined : byId.get(existingId);
      if (existing) return { request: copy(existing), created: false, events: [] };
      if (byId.has(request.id)) {
        throw idTaken(request.id);
      }
      // No await from the usage read to the write below: nothing else runs in between.
      if (options.quota && request.status === "pending") {
        const refused = quotaRefusal(
          request.requester,
          usageOf(request.requester),
          docBytes(JSON.stringify(request)),
          options.quota,
        );
        if (refused) throw refused;
      }
      byId.set(request.id, copy(request));
      if (request.key !== undefined) byKey.set(keyOf(request.requester, request.key), request.id);
      outbox.write(messages, request.updatedAt);
      return { request: copy(request), created: true, events: append(events) };
    },
    async getRequest(id) {
      guard();
      const r = byId.get(id);
      return r ? copy(r) : undefined;
    },
    async getRequestByKey(requester, key) {
      guard();
      const id = byKey.get(keyOf(requester, key));
      const r = id === undefined ? undefined : byId.get(id);
      return r ? copy(r) : undefined;
    },
    async listRequests(filter) {
      guard();
      return page(filter, copy);
    },
    async listSummaries(filter) {
      guard();
      return page(filter, summaryOf);
    },
    async countRequests(filter, options = {}) {
      guard();
      const upTo = countCap(options) ?? Number.POSITIVE_INFINITY;
      let n = 0;
      for (const r of byId.values()) {
        if (n >= upTo) break;
        if (matches(r, filter)) n++;
      }
      return n;
    },
    async pendingUsage(requester) {
      guard();
      return usageOf(requester);
    },
    async listStatuses(after, limit) {
      guard();
      return [...byId.values()]
        .filter((r) => after === undefined || r.id > after)
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, Math.max(1, limit))
        .map((r) => ({ id: r.id, status: r.status, docStatus: r.status }));
    },
    async transition(next, expectedVersion, events, messages = []) {
      guard();
      checkColumns(next);
      checkDrafts(events);
      checkOutboxDrafts(messages);
      if (next.version !== expectedVersion + 1) {
        throw new AirlockError(
          "invalid_input",
          "transition: next.version must be expectedVersion + 1",
        );
      }
      const current = byId.get(next.id);
      if (!current || current.version !== expectedVersion) {
        return { ok: false, request: current ? copy(current) : undefined, events: [] };
      }
      byId.set(next.id, copy(next));
      outbox.write(messages, next.updatedAt);
      return { ok: true, request: copy(next), events: append(events) };
    },
    async enqueueOutbox(messages) {
      guard();
      checkOutboxDrafts(messages);
      return outbox.write(messages, Date.now());
    },
    async claimOutbox(claim) {
      guard();
      checkClaim(claim);
      return outbox.claim(claim);
    },
    async settleOutbox(id, owner, settlement, events = []) {
      guard();
      checkSettlement(id, owner, settlement);
      checkDrafts(events);
      if (!outbox.canSettle(id, owner)) return false;
      outbox.settle(id, settlement, Date.now());
      append(events);
      return true;
    },
    async listOutbox(filter) {
      guard();
      checkOutboxFilter(filter);
      return outbox.list(filter);
    },
    async appendAudit(events) {
      guard();
      checkDrafts(events);
      return append(events);
    },
    async listAudit(filter) {
      guard();
      const limit = Math.min(Math.max(filter.limit ?? 1000, 1), 10_000);
      return audit
        .filter(
          (e) =>
            (filter.requestId === undefined || e.requestId === filter.requestId) &&
            (filter.after === undefined || e.seq > filter.after),
        )
        .slice(0, limit)
        .map(copy);
    },
    async auditHead() {
      guard();
      const last = audit[audit.length - 1] ?? pruning.anchor;
      return last ? { seq: last.seq, hash: last.hash } : undefined;
    },
    async prune(options) {
      guard();
      return pruning.prune(options);
    },
    async auditMarks() {
      guard();
      return pruning.marks();
    },
    async saveVerifiedMark(mark) {
      guard();
      pruning.saveVerified(mark);
    },
    async auditChainState() {
      guard();
      const last = audit[audit.length - 1] ?? pruning.anchor;
      return { head: last ? { seq: last.seq, hash: last.hash } : undefined, headRowMissing: false };
    },
    async nextDeadline() {
      guard();
      let min: number | undefined;
      for (const r of byId.values()) {
        if (
          r.status === "pending" &&
          r.deadline !== undefined &&
          (min === undefined || r.deadline < min)
        ) {
          min = r.deadline;
        }
      }
      return min;
    },
    async dueRequests(now, limit) {
      guard();
      return [...byId.values()]
        .filter((r) => r.status === "pending" && r.deadline !== undefined && r.deadline <= now)
        .sort((a, b) => (a.deadline ?? 0) - (b.deadline ?? 0))
        .slice(0, limit)
        .map(copy);
    },
    async staleExecutions(now, limit) {
      guard();
      const lease = (r: ApprovalRequest) => r.execution?.leaseUntil ?? 0;
      return [...byId.values()]
        .filter((r) => r.execution?.state === "claimed" && lease(r) <= now)
        .sort((a, b) => lease(a) - lease(b) || (a.id < b.id ? -1 : 1))
        .slice(0, limit)
        .map(copy);
    },
    async nextLeaseEnd() {
      guard();
      let min: number | undefined;
      for (const r of byId.values()) {
        const until = r.execution?.state === "claimed" ? r.execution.leaseUntil : undefined;
        if (until !== undefined && (min === undefined || until < min)) min = until;
      }
      return min;
    },
    async outcomes(since) {
      guard();
      const rows: OutcomeRow[] = [];
      for (const r of byId.values()) {
        if (r.status === "pending" || !r.decision || r.decision.decidedAt < since) continue;
        rows.push({
          action: r.action,
          status: r.status,
          method: r.decision.method,
          createdAt: r.createdAt,
          decidedAt: r.decision.decidedAt,
        });
      }
      return rows;
    },
    async countPending() {
      guard();
      let n = 0;
      for (const r of byId.values()) if (r.status === "pending") n++;
      return n;
    },
    ...memoryTrustRules({ guard, append }),
    ...memoryTickets({ guard }),
    onExternalChange() {
      return () => {};
    },
    async close() {
      closed = true;
    },
  };
}
