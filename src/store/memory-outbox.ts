// The memory store's outbox: the rows in insertion order, with the same claim, lease and settle rules
// as the SQL stores' statements (see outbox-rows.ts for the checks all three share).
import type {
  OutboxClaim,
  OutboxDraft,
  OutboxFilter,
  OutboxMessage,
  OutboxSettlement,
} from "../core/outbox.js";
import { outboxLimit } from "./outbox-rows.js";

interface Row extends OutboxMessage {
  /** Insertion order, as the SQL stores' `n`. */
  n: number;
}

export interface MemoryOutbox {
  /** Writes the drafts not already there (by id); returns how many were written. */
  write(drafts: readonly OutboxDraft[], now: number): number;
  claim(c: OutboxClaim): OutboxMessage[];
  /** True when `owner` held the row (pending) and it was settled. */
  canSettle(id: string, owner: string): boolean;
  settle(id: string, s: OutboxSettlement, now: number): void;
  list(f: OutboxFilter): OutboxMessage[];
}

export function memoryOutbox(): MemoryOutbox {
  const rows: Row[] = [];
  const byId = new Map<string, Row>();
  let n = 0;
  const view = ({ n: _n, ...m }: Row): OutboxMessage => structuredClone(m);

  return {
    write(drafts, now) {
      let written = 0;
      for (const d of drafts) {
        if (byId.has(d.id)) continue;
        const row: Row = {
          n: ++n,
          id: d.id,
          target: d.target,
          topic: d.topic,
          payload: structuredClone(d.payload),
          status: "pending",
          attempts: 0,
          availableAt: d.availableAt ?? now,
          createdAt: now,
          updatedAt: now,
        };
        if (d.requestId !== undefined) row.requestId = d.requestId;
        rows.push(row);
        byId.set(d.id, row);
        written++;
      }
      return written;
    },
    claim(c) {
      const due = rows
        .filter(
          (r) =>
            r.status === "pending" &&
            r.availableAt <= c.now &&
            (r.leaseUntil === undefined || r.leaseUntil <= c.now),
        )
        .sort((a, b) => a.availableAt - b.availableAt || a.n - b.n)
        .slice(0, c.limit);
      for (const r of due) {
        r.leaseOwner = c.owner;
        r.leaseUntil = c.now + c.leaseMs;
        r.attempts++;
        r.updatedAt = c.now;
      }
      return due.map(view);
    },
    canSettle(id, owner) {
      const r = byId.get(id);
      return r !== undefined && r.status === "pending" && r.leaseOwner === owner;
    },
    settle(id, s, now) {
      const r = byId.get(id);
      if (!r) return;
      delete r.leaseOwner;
      delete r.leaseUntil;
      r.updatedAt = now;
      r.status = s.status;
      if (s.status === "delivered") {
        r.deliveredAt = now;
        if (s.receipt !== undefined) r.receipt = structuredClone(s.receipt);
        return;
      }
      r.lastError = s.error;
      if (s.status === "pending") {
        r.availableAt = s.availableAt;
        if (s.notAnAttempt) r.attempts = Math.max(0, r.attempts - 1);
      }
    },
    list(f) {
      let from = 0;
      if (f.after !== undefined) {
        const at = byId.get(f.after);
        // An unknown id is after nothing: the SQL stores' `n > (no row)` lists nothing too.
        if (!at) return [];
        from = at.n;
      }
      return rows
        .filter(
          (r) =>
            r.n > from &&
            (f.requestId === undefined || r.requestId === f.requestId) &&
            (f.target === undefined || r.target === f.target) &&
            (f.status === undefined || r.status === f.status) &&
            (f.topic === undefined || r.topic === f.topic),
        )
        .slice(0, outboxLimit(f.limit))
        .map(view);
    },
  };
}
