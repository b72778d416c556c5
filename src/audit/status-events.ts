// Which audit events set a request's status, and to what: the rule verification uses to compare the
// stored requests with the log (and stores use to find each request's last such event).
import type { AuditEvent } from "../core/schemas.js";
import { TERMINAL_EVENT_TYPES } from "../core/state.js";

/** The event types that set a status: back to pending, or a terminal one. */
export const STATUS_EVENT_TYPES: readonly string[] = [
  "created",
  "escalated",
  "decision_recorded",
  ...TERMINAL_EVENT_TYPES,
];

/** What the audit says a request's status is after an event of `type` whose `data.outcome` is
 * `outcome` (undefined: such an event does not change it). */
export function statusAfterEvent(type: string, outcome: unknown): string | undefined {
  if (type === "created" || type === "escalated" || type === "decision_recorded") return "pending";
  if (!TERMINAL_EVENT_TYPES.has(type as AuditEvent["type"])) return undefined;
  if (typeof outcome === "string") return outcome;
  return type === "decided" ? "approved" : type;
}
