// A new gate as it is first stored: the request built from the caller's input and the policy's
// verdict, with its `created` audit event, and, for a gate that needs no human (auto approval, no
// items), its terminal decision too, so that one transaction creates and settles it.

import { InvalidInputError } from "./errors.js";
import { hashArgs } from "./hash.js";
import { normalizeIdentity } from "./identity.js";
import { newRequestId } from "./ids.js";
import type { PolicyVerdict } from "./policy.js";
import {
  type ApprovalRequest,
  type AuditDraft,
  type Item,
  type ParsedRequestInput,
  PRESENTATION_FIELDS,
} from "./schemas.js";
import { applyAutomatic } from "./state.js";

/** The decisions a request allows: the input's list, or the default (every kind but `respond`, which
 * a request opts into; a `responseSchema` with no list opts in). A `responseSchema` on a request that
 * lists its decisions without `respond` is refused: nobody could ever send the response it describes. */
function allowedOf(input: ParsedRequestInput): ApprovalRequest["allowed"] {
  if (input.allowed === undefined) {
    const base: ApprovalRequest["allowed"] = ["approve", "reject", "revise", "select", "edit"];
    return input.responseSchema === undefined ? base : [...base, "respond"];
  }
  if (input.responseSchema !== undefined && !input.allowed.includes("respond")) {
    throw new InvalidInputError(
      `invalid request: \`responseSchema\` describes a response, but \`allowed\` (${input.allowed.join(", ")}) does not include \`respond\`; add it, or leave the schema out`,
      "responseSchema",
    );
  }
  return input.allowed;
}

export function newRequest(
  input: ParsedRequestInput,
  verdict: PolicyVerdict,
  inputHash: string,
  now: number,
): { stored: ApprovalRequest; events: AuditDraft[] } {
  const items = normalizeItems(input.items);
  const id = newRequestId(now);
  const request: ApprovalRequest = {
    id,
    action: input.action,
    title: input.title,
    args: input.args,
    argsHash: hashArgs(input.args),
    items,
    allowed: allowedOf(input),
    level: verdict.level,
    // Identities are stored in their normal form (identity.ts), so stores can match them exactly.
    requester: normalizeIdentity(input.requester),
    approvers: [...new Set(input.approvers.map(normalizeIdentity))],
    quorum: input.quorum,
    onTimeout: input.onTimeout,
    escalations: 0,
    revisionCommentRequired: input.revisionCommentRequired,
    correlationId: input.correlationId ?? id,
    metadata: input.metadata,
    status: "pending",
    decisions: [],
    inputHash,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  if (input.key !== undefined) request.key = input.key;
  if (input.summary !== undefined) request.summary = input.summary;
  if (input.preview !== undefined) request.preview = input.preview;
  if (input.risk !== undefined) request.risk = input.risk;
  const confidence = verdict.confidence ?? input.confidence;
  if (confidence !== undefined) request.confidence = confidence;
  if (input.revisionOf !== undefined) request.revisionOf = input.revisionOf;
  if (input.idempotent === true) request.idempotent = true;
  if (input.argsSchema !== undefined) request.argsSchema = input.argsSchema;
  if (input.responseSchema !== undefined) request.responseSchema = input.responseSchema;
  for (const field of PRESENTATION_FIELDS) {
    if (input[field] !== undefined) Object.assign(request, { [field]: input[field] });
  }
  if (input.timeoutMs !== undefined) request.deadline = now + input.timeoutMs;

  const created: AuditDraft = {
    type: "created",
    requestId: id,
    actor: request.requester,
    at: now,
    data: {
      title: request.title,
      action: request.action,
      level: request.level,
      approvers: request.approvers,
      quorum: request.quorum,
      deadline: request.deadline,
      argsHash: request.argsHash,
      args: request.args,
      items: items.map((i) => i.id),
      correlationId: request.correlationId,
      ...(request.revisionOf ? { revisionOf: request.revisionOf } : {}),
      ...(request.key ? { key: request.key } : {}),
      ...(verdict.reason ? { policy: verdict.reason } : {}),
    },
  };

  const settle = (decision: Parameters<typeof applyAutomatic>[1]) => {
    const t = applyAutomatic(request, decision, now);
    return { stored: { ...t.next, version: 1 }, events: [created, ...t.events] };
  };
  if (verdict.level === "auto") {
    return settle({
      outcome: "approved",
      method: "auto",
      reviewer: "policy",
      argsHash: request.argsHash,
      comment: verdict.reason ?? "approved automatically by policy",
    });
  }
  if (input.items !== undefined && items.length === 0) {
    // Nothing to approve is not an approval (pattern 1's "no queries").
    return settle({
      outcome: "rejected",
      method: "no_items",
      reviewer: "system",
      comment: "No items to approve",
    });
  }
  return { stored: request, events: [created] };
}

/** Gives every item a stable id: the caller's own (must be unique) or `item-N` by position. */
export function normalizeItems(items: ParsedRequestInput["items"]): Item[] {
  if (!items) return [];
  const out: Item[] = items.map((it, i) =>
    typeof it === "string"
      ? { id: `item-${i + 1}`, label: it }
      : { ...it, id: it.id ?? `item-${i + 1}` },
  );
  const seen = new Set<string>();
  for (const [i, it] of out.entries()) {
    if (seen.has(it.id)) {
      throw new InvalidInputError(
        `item id \`${it.id}\` is used twice; every item needs a unique id so a selection can never reach the wrong item`,
        `items.${i}.id`,
      );
    }
    seen.add(it.id);
  }
  return out;
}
