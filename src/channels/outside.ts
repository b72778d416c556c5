// What leaves for a third party — Slack, the mail provider, a webhook's receiver — passes the one
// redaction (audit/redact.ts) first, the same that guards the audit log: an agent's title, summary,
// preview, args, items, labels or metadata may quote a password or an API key, and a message posted
// to Slack or handed to a mail provider cannot be taken back.
import { builtInRedactor, type Redactor } from "../audit/redact.js";
import type { ApprovalRequest } from "../core/schemas.js";
import type { DeliveryContext } from "./types.js";

/** The request as an outside channel may show it: a deep copy, every field through the engine's
 * redaction (the values of sensitive keys, and credentials inside any string, replaced). The whole
 * request rather than a list of fields, so a field added later cannot leak by being forgotten here.
 * Ids, statuses, numbers and approver names carry no credential and come out as they went in. */
export function outsideView(request: ApprovalRequest, redactor: Redactor): ApprovalRequest {
  // Through JSON first: a request shares objects (its `decision` is one of its `decisions`), which
  // `redact` would take for a cycle; a stored request is JSON anyway.
  return redactor.redact(JSON.parse(JSON.stringify(request)) as ApprovalRequest);
}

/** The redaction a delivery passes what it sends through: the engine's, given by the dispatcher. */
export function deliveryRedactor(ctx: Pick<DeliveryContext, "redactor">): Redactor {
  return ctx.redactor ?? builtInRedactor;
}
