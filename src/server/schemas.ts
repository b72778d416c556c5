// The shapes of the HTTP API. Bodies reuse the core's zod schemas as they are (so the API accepts
// exactly what the engine does); the OpenAPI document is generated from these same objects.
import { z } from "zod";
import { MAX_LEASE_MS } from "../core/execution.js";
import {
  approvalRequestSchema,
  auditEventSchema,
  decisionInputSchema,
  eventTypeSchema,
  executionStateSchema,
  requestInputSchema,
  statusSchema,
} from "../core/schemas.js";
import { tokenInputSchema, tokenRecordSchema } from "./tokens.js";

const name = z.string().trim().min(1).max(200);
const oneOrMany = <T extends z.ZodType>(item: T) => z.union([item, z.array(item)]);

/** `POST /v1/requests`. Strict: `status`, `decisions`, `id` and the like are refused. `requester`
 * may only repeat the caller's own name; the server sets it from the token. */
export const createRequestBody = requestInputSchema;

/** `POST /v1/requests/:id/decisions`. `reviewer` may be left out (it is the token's principal) or
 * repeat it; `groups` may only name groups of the token. */
export const decisionBody = decisionInputSchema.extend({
  reviewer: name.optional(),
  /** Ignored: the server records the channel the decision arrived by (`api`). Accepted so clients
   * that send one keep working. */
  channel: z.string().max(100).optional(),
});

export const cancelBody = z
  .object({
    reason: z.string().max(20_000).optional(),
    /** May only repeat the caller's own name. */
    by: name.optional(),
  })
  .strict();

export const listQuery = z.object({
  status: oneOrMany(statusSchema).optional(),
  action: z.string().min(1).max(200).optional(),
  approver: oneOrMany(name).optional(),
  requester: name.optional(),
  /** Approved requests whose execution is in this state (`unknown`: approved, not known to have
   * run). */
  execution: oneOrMany(executionStateSchema).optional(),
  /** Requests whose title contains this text, ignoring case. */
  q: z.string().min(1).max(200).optional(),
  cursor: z.string().min(1).max(200).optional(),
  /** Requests per page; a value above 100 is lowered to 100. @default 50 */
  limit: z.coerce.number().int().min(1).max(10_000).optional(),
  /** `newest` first (the default), `oldest` first, or by `deadline` (soonest first, then those
   * without one). */
  order: z.enum(["newest", "oldest", "deadline"]).optional(),
  /** `summary`: each item is a summary read from columns (no args, preview or items), cheap
   * whatever is stored; `full` (the default): the whole requests. */
  view: z.enum(["full", "summary"]).optional(),
  /** The request created with this idempotency key (by `requester`, by default the caller): a page
   * of that one request, or an empty one. The other filters do not apply. */
  key: z.string().trim().min(1).max(200).optional(),
});

export const claimBody = z
  .object({
    /** How long the claim holds without a renewal or an outcome. @default 300000 (5 minutes) */
    leaseMs: z.number().int().min(1).max(MAX_LEASE_MS).optional(),
  })
  .strict();

export const renewBody = z
  .object({
    attempt: z.number().int().min(1),
    leaseMs: z.number().int().min(1).max(MAX_LEASE_MS).optional(),
  })
  .strict();

export const outcomeBody = z.discriminatedUnion("ok", [
  z
    .object({
      attempt: z.number().int().min(1),
      ok: z.literal(true),
      /** SHA-256 (hex) of the canonical JSON of what the action returned. */
      resultDigest: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .optional(),
    })
    .strict(),
  z
    .object({
      attempt: z.number().int().min(1),
      ok: z.literal(false),
      error: z.string().min(1).max(20_000),
    })
    .strict(),
]);

export const resolutionBody = z
  .object({
    resolution: z.enum(["retry", "done", "abandon"]),
    comment: z.string().max(20_000).optional(),
  })
  .strict();

export const waitQuery = z.object({
  /** Seconds to hold the request open; at most the server's limit (60 by default). */
  timeout: z.coerce.number().min(0).optional(),
});

export const eventsQuery = z.object({
  requestId: z.string().min(1).max(200).optional(),
  types: oneOrMany(eventTypeSchema).optional(),
  /** Resume after this event id, like the `Last-Event-ID` header (which wins when both are sent). */
  after: z.coerce.number().int().min(0).optional(),
});

export const auditQuery = z.object({
  requestId: z.string().min(1).max(200).optional(),
  after: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(5000).optional(),
});

/** `POST /v1/audit`: what an agent reports it did without a human (or its progress). The actor is
 * the token's principal. */
export const auditAppendBody = z
  .object({
    type: z.enum(["auto_executed", "notified"]),
    requestId: z.string().min(1).max(200).optional(),
    actor: z.string().min(1).max(200).optional(),
    data: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

export const requestPage = z.object({
  items: z.array(approvalRequestSchema),
  /** Pass as `cursor` for the next (older) page; absent on the last page. */
  nextCursor: z.string().optional(),
});

export const auditPage = z.object({
  items: z.array(auditEventSchema),
  /** Pass as `after` for the next page; absent on the last page. */
  nextAfter: z.number().int().optional(),
});

/** How the audit chain is protected (audit/unkeyed.ts). */
const auditKeyingFields = {
  /** New events are HMACs under the audit key; false: a plain SHA-256 chain, which whoever can
   * write to the database can rewrite unnoticed. */
  keyed: z.boolean(),
  /** Present when `keyed` is false: what that leaves open and how to key the chain. */
  warning: z.string().optional(),
};

export const verifyResult = z.union([
  z.object({
    ok: z.literal(true),
    count: z.number().int(),
    lastHash: z.string(),
    /** The first event hashed with the audit key, when the chain is keyed. */
    keyedFrom: z.number().int().optional(),
    ...auditKeyingFields,
  }),
  z.object({
    ok: z.literal(false),
    count: z.number().int(),
    badSeq: z.number().int(),
    reason: z.string(),
  }),
]);

export const tokenCreateBody = tokenInputSchema;
export const tokenCreated = tokenRecordSchema.extend({
  /** The secret. Shown in this answer only; the server keeps its SHA-256. */
  token: z.string(),
});
export const tokenList = z.object({ items: z.array(tokenRecordSchema) });

export const health = z.object({
  /** `ok`; `degraded` while the storage fails (the server still answers, with 503 where it must
   * write); `starting` until its tokens are stored and `shutting_down` while it closes (the two
   * statuses answered with 503). */
  status: z.enum(["ok", "degraded", "starting", "shutting_down"]),
  /** True when `status` is `ok`. */
  ok: z.boolean(),
  shuttingDown: z.boolean(),
  storage: z.object({
    ok: z.boolean(),
    /** When the current storage fault started (epoch ms). */
    since: z.number().optional(),
    /** Requests that failed on storage in this fault. */
    failures: z.number().int().optional(),
  }),
  /** Whether the audit chain is keyed (with a `warning` when not), when the server was told
   * (`airlock serve` tells it). */
  audit: z.object(auditKeyingFields).optional(),
});
