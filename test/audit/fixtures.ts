// Requests and events shaped as the engine writes them, for tests of the audit and its verifier
// (no vitest import: child processes use this too).
import { hashArgs } from "../../src/core/hash.js";
import type { ApprovalRequest, AuditDraft } from "../../src/core/schemas.js";
import type { Store } from "../../src/core/store.js";

export function request(id: string, over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  const now = 1_700_000_000_000;
  return {
    id,
    action: "files.write",
    title: `request ${id}`,
    args: { path: "/tmp/x" },
    argsHash: hashArgs({ path: "/tmp/x" }),
    items: [],
    allowed: ["approve", "reject", "revise", "select", "edit"],
    level: "full",
    requester: "writer",
    approvers: [],
    quorum: 1,
    onTimeout: "reject",
    escalations: 0,
    correlationId: `corr-${id}`,
    metadata: {},
    status: "pending",
    decisions: [],
    inputHash: `input-${id}`,
    createdAt: now,
    updatedAt: now,
    version: 1,
    ...over,
  };
}

/** Creates a request and decides it, with the events the engine records. */
export async function createAndDecide(
  store: Store,
  id: string,
  outcome: "approved" | "rejected",
): Promise<void> {
  const r = request(id);
  const created: AuditDraft = {
    type: "created",
    requestId: id,
    actor: r.requester,
    at: r.createdAt,
    data: { title: r.title },
  };
  await store.insertRequest(r, [created]);
  await store.transition({ ...r, status: outcome, version: 2, updatedAt: r.createdAt + 1 }, 1, [
    { type: "decided", requestId: id, actor: "alice", at: r.createdAt + 1, data: { outcome } },
  ]);
}
