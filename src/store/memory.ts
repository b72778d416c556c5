// An in-memory store: the executable documentation of the Store contract, and a fast store for tests
// of code built on Airlock. Nothing survives the process; there is no other process to notify.
import { chainEvent } from "../audit/chain.js";
import { AirlockError } from "../core/errors.js";
import type { ApprovalRequest, AuditDraft, AuditEvent } from "../core/schemas.js";
import { clampLimit } from "./paging.js";
import type { ListFilter, OutcomeRow, Store } from "./store.js";

export function memoryStore(): Store {
  const byId = new Map<string, ApprovalRequest>();
  const byKey = new Map<string, string>();
  const audit: AuditEvent[] = [];
  let closed = false;

  const copy = <T>(v: T): T => structuredClone(v);
  function guard() {
    if (closed) throw new AirlockError("closed", "the memory store is closed");
  }
  function append(drafts: AuditDraft[]): AuditEvent[] {
    const out: AuditEvent[] = [];
    for (const d of drafts) {
      const e = chainEvent(copy(d), audit[audit.length - 1]);
      audit.push(e);
      out.push(copy(e));
    }
    return out;
  }
  function matches(r: ApprovalRequest, f: ListFilter): boolean {
    const statuses = f.status === undefined ? [] : Array.isArray(f.status) ? f.status : [f.status];
    if (statuses.length && !statuses.includes(r.status)) return false;
    if (f.action !== undefined && r.action !== f.action) return false;
    if (f.requester !== undefined && r.requester !== f.requester) return false;
    if (f.approver !== undefined) {
      const names = Array.isArray(f.approver) ? f.approver : [f.approver];
      if (r.approvers.length && !r.approvers.some((a) => names.includes(a))) return false;
    }
    if (f.cursor !== undefined && !(r.id < f.cursor)) return false;
    return true;
  }

  return {
    kind: "memory",
    async migrate() {},
    async insertRequest(request, events) {
      guard();
      const existingId = request.key === undefined ? undefined : byKey.get(request.key);
      const existing = existingId === undefined ? undefined : byId.get(existingId);
      if (existing) return { request: copy(existing), created: false, events: [] };
      if (byId.has(request.id)) {
        throw new AirlockError("conflict", `request id \`${request.id}\` already exists`);
      }
      byId.set(request.id, copy(request));
      if (request.key !== undefined) byKey.set(request.key, request.id);
      return { request: copy(request), created: true, events: append(events) };
    },
    async getRequest(id) {
      guard();
      const r = byId.get(id);
      return r ? copy(r) : undefined;
    },
    async listRequests(filter) {
      guard();
      const limit = clampLimit(filter.limit);
      const all = [...byId.values()].filter((r) => matches(r, filter));
      all.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
      const items = all.slice(0, limit).map(copy);
      const last = items[items.length - 1];
      return all.length > limit && last ? { items, nextCursor: last.id } : { items };
    },
    async transition(next, expectedVersion, events) {
      guard();
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
      return { ok: true, request: copy(next), events: append(events) };
    },
    async appendAudit(events) {
      guard();
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
      const last = audit[audit.length - 1];
      return last ? { seq: last.seq, hash: last.hash } : undefined;
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
    onExternalChange() {
      return () => {};
    },
    async close() {
      closed = true;
    },
  };
}
