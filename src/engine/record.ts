// `engine.record()`: appends an event that changes no request (`notified`, `viewed`,
// `auto_executed`), redacted. Decisions enter the audit log only through the state machine.
import { AirlockError, ConflictError } from "../core/errors.js";
import {
  type ApprovalRequest,
  type AuditDraft,
  type AuditEvent,
  recordInputSchema,
} from "../core/schemas.js";
import { isApproved } from "../core/state.js";
import type { Store } from "../core/store.js";
import { parseOrThrow } from "../core/validate.js";

export interface RecordDeps {
  store: Pick<Store, "appendAudit">;
  load(id: string): Promise<ApprovalRequest>;
  now(): number;
  redactDraft(d: AuditDraft): AuditDraft;
  /** Hands the appended event to the feed (settle). */
  settle(events: AuditEvent[]): Promise<void>;
}

export async function recordEvent(deps: RecordDeps, raw: unknown): Promise<AuditEvent> {
  const input = parseOrThrow(recordInputSchema, raw, "event");
  if (input.type === "auto_executed" && input.requestId !== undefined) {
    const r = await deps.load(input.requestId);
    if (!isApproved(r)) {
      throw new ConflictError(
        `request ${r.id} is ${r.status}, not approved: nothing of it may be executed, automatically or not`,
        r,
      );
    }
  }
  const draft: AuditDraft = {
    type: input.type,
    actor: input.actor,
    at: input.at ?? deps.now(),
    data: input.data,
  };
  if (input.requestId !== undefined) draft.requestId = input.requestId;
  const [e] = await deps.store.appendAudit([deps.redactDraft(draft)]);
  if (!e) throw new AirlockError("store_unavailable", "the store appended no event");
  await deps.settle([e]);
  return e;
}
