// `engine.request()`: a new gate. The input is parsed and checked against the action's schema, the
// policy sets the level (or settles it at once), and the store inserts it idempotently by key: the
// same key with the same input returns the first request, with other input is a conflict.

import type { ZodType } from "zod";
import { checkArgsAgainst, compileArgsSchema } from "../core/args-schema.js";
import { ConflictError } from "../core/errors.js";
import { canonicalJson, sha256 } from "../core/hash.js";
import { newRequest } from "../core/new-request.js";
import type { OutboxDraft } from "../core/outbox.js";
import type { Policy, PolicyVerdict } from "../core/policy.js";
import { checkRevisionOf } from "../core/revision.js";
import {
  type ApprovalRequest,
  type AuditDraft,
  type AuditEvent,
  type ParsedRequestInput,
  requestInputSchema,
} from "../core/schemas.js";
import type { InsertOptions, Store } from "../core/store.js";
import { parseOrThrow } from "../core/validate.js";

export interface CreateDeps {
  store: Pick<Store, "insertRequest" | "getRequest" | "getRequestByKey">;
  policy: Policy | undefined;
  schemaFor(action: string): ZodType | undefined;
  now(): number;
  redactDraft(d: AuditDraft): AuditDraft;
  /** Hands the new request's events to the feed (settle). */
  settle(events: AuditEvent[]): Promise<void>;
  /** The outbox messages the new request's events write (with the insert, same transaction). */
  outboxFor(stored: ApprovalRequest, events: AuditDraft[]): OutboxDraft[];
  /** Told that a commit wrote outbox messages (wakes the dispatcher). */
  onOutbox(): void;
  /** Told of a request this call created (not of a replay), with its text if the store gave it. */
  onCreated(stored: ApprovalRequest, docJson?: string): void;
}

/** `options` go to the store's insert: a pending quota is checked in the insert's transaction. */
export async function createRequest(
  deps: CreateDeps,
  raw: unknown,
  options: InsertOptions = {},
): Promise<ApprovalRequest> {
  const input = parseOrThrow(requestInputSchema, raw, "request");
  checkSchema(deps.schemaFor(input.action), input.action, input.args, "args");
  checkArgsAgainst(input.argsSchema, input.args, "args");
  // A response schema zod cannot read is refused now, not when a reviewer first answers.
  if (input.responseSchema !== undefined) compileArgsSchema(input.responseSchema, "responseSchema");
  const verdict = await decidePolicy(deps.policy, input);
  const inputHash = sha256(canonicalJson(input));
  const replay = await checkRevisionOf(deps.store, input, inputHash);
  if (replay) return replay;
  const { stored, events } = newRequest(input, verdict, inputHash, deps.now());
  const drafts = events.map(deps.redactDraft);
  const outbox = deps.outboxFor(stored, drafts);
  const result = await deps.store.insertRequest(stored, drafts, outbox, options);
  if (!result.created) {
    if (result.request.inputHash !== inputHash) {
      throw new ConflictError(
        `key \`${input.key}\` was already used for another request (${result.request.id}) with different content`,
        result.request,
      );
    }
    return result.request;
  }
  if (outbox.length > 0) deps.onOutbox();
  await deps.settle(result.events);
  deps.onCreated(stored, result.docJson);
  return stored;
}

/** Args and edited args of an action with a registered schema must satisfy it. */
export function checkSchema(
  schema: ZodType | undefined,
  action: string,
  args: unknown,
  field: string,
): void {
  if (schema) parseOrThrow(schema, args, `${field} for action \`${action}\``, field);
}

async function decidePolicy(
  policy: Policy | undefined,
  input: ParsedRequestInput,
): Promise<PolicyVerdict> {
  if (!input.requireApproval) {
    return { level: "auto", reason: "approval not required by configuration" };
  }
  const verdict = policy ? await policy({ input }) : undefined;
  return verdict ?? { level: input.level ?? "full" };
}
