// The shapes that cross Airlock's boundaries: what a caller asks for, what is stored, what is decided.
// Every input is parsed with these schemas; the TypeScript types are inferred from them so the two
// can never drift.
import { z } from "zod";
import { identityProblem } from "./identity.js";
import { MAX_ESCALATION_DEPTH } from "./limits.js";
import { jsonProblem, textProblem } from "./text.js";

export const STATUSES = [
  "pending",
  "approved",
  "rejected",
  "revise",
  "timed_out",
  "cancelled",
  /** A reviewer answered instead of approving or rejecting (`respond`): the waiting agent consumes
   * the `response`; nothing was approved. */
  "responded",
] as const;
export const statusSchema = z.enum(STATUSES);
export type Status = z.infer<typeof statusSchema>;

export const OUTCOMES = [
  "approved",
  "rejected",
  "revise",
  "timed_out",
  "cancelled",
  "responded",
] as const;
export const outcomeSchema = z.enum(OUTCOMES);
export type Outcome = z.infer<typeof outcomeSchema>;

/** How a decision came about. `reject`, `revise`, `cancel` and `respond` extend DESIGN.md's list for
 * plain human rejections, revision requests, cancellations and responses, which the design names only
 * as outcomes. */
export const METHODS = [
  "approve_all",
  "select",
  "edit",
  "skip",
  "reject",
  "revise",
  "cancel",
  "respond",
  "auto",
  "no_items",
  "timeout",
  "escalated",
  "error",
  "parse_error",
] as const;
export const methodSchema = z.enum(METHODS);
export type Method = z.infer<typeof methodSchema>;

export const CHANNELS = [
  "web",
  "cli",
  "api",
  "slack",
  "email",
  "webhook",
  "chat",
  "system",
] as const;
export const channelSchema = z.enum(CHANNELS);
export type Channel = z.infer<typeof channelSchema>;

/** How a door proved who decided (see authority.ts): recorded with the decision. */
export const PROOFS = [
  /** A bearer API token (HTTP API, CLI and console against a server, MCP against a server). */
  "api_token",
  /** The inbox's session cookie, signed in with an API token. */
  "inbox_session",
  /** A signed embed-card token, minted by an admin or an app backend for one reviewer. */
  "card_token",
  /** A Slack interaction signed with the app's signing secret, from a mapped Slack user. */
  "slack_signature",
  /** A signed single-use link sent to the reviewer's mail address. */
  "mail_link",
  /** A mail reply from the reviewer's address (envelope and header sender agree). */
  "mail_reply",
  /** Whoever runs the process on the machine that holds the database (local CLI and console). */
  "local",
  /** Code in the engine's own process, trusted as the embedding application. */
  "in_process",
] as const;
export const proofSchema = z.enum(PROOFS);
export type Proof = z.infer<typeof proofSchema>;

export const LEVELS = ["auto", "quick", "full"] as const;
export const levelSchema = z.enum(LEVELS);
export type Level = z.infer<typeof levelSchema>;

export const RISKS = ["low", "medium", "high", "critical"] as const;
export const riskSchema = z.enum(RISKS);
export type Risk = z.infer<typeof riskSchema>;

/** Refuses text no store can keep (NUL, lone surrogates): see text.ts. */
function storable<S extends z.ZodString>(schema: S): S {
  return schema.superRefine((s, ctx) => {
    const why = textProblem(s);
    if (why) ctx.addIssue({ code: "custom", message: why });
  });
}

/** A person, agent or group: refused when it mixes scripts or is only invisible characters
 * (identityProblem), so a look-alike never enters as a second identity. */
const name = storable(z.string().trim().min(1).max(200)).superRefine(refuseBadIdentity);

/** The refinement of every name: the issue is marked `unprocessable` (well-formed input that a rule
 * refuses), which the HTTP server answers with 422 like the engine's invalid_input, not 400. */
export function refuseBadIdentity(s: string, ctx: z.RefinementCtx): void {
  const why = identityProblem(s);
  if (why) ctx.addIssue({ code: "custom", message: `\`${s}\` ${why}`, params: UNPROCESSABLE });
}

/** The params of a zod issue for input that is well-formed but refused by a rule (HTTP 422). */
export const UNPROCESSABLE = { unprocessable: true } as const;

const jsonRecord = z.record(z.string(), z.unknown());

/** The largest `response` a reviewer may send with a `respond` decision, as JSON, in bytes. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

/** Any JSON value (a reviewer's `response`): checked for depth and storable text like args, for
 * being JSON at all (no functions, BigInts or cycles) and for its size (MAX_RESPONSE_BYTES). */
const responseJson = z.unknown().superRefine((value, ctx) => {
  const problem = jsonProblem(value);
  if (problem) {
    ctx.addIssue({ code: "custom", message: problem.message, path: problem.path });
    return;
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined || !isPlainJson(value)) {
    ctx.addIssue({
      code: "custom",
      message:
        "a response must be a JSON value (text, a number, true/false, null, a list or an object)",
    });
    return;
  }
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_RESPONSE_BYTES) {
    ctx.addIssue({
      code: "custom",
      message: `a response may take at most ${MAX_RESPONSE_BYTES} bytes of JSON; this one takes ${bytes}`,
      params: UNPROCESSABLE,
    });
  }
});

/** True when `value` is made only of what JSON keeps as it is (the depth is bounded already). */
function isPlainJson(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v === "string" || typeof v === "boolean") continue;
    if (typeof v === "number") {
      if (!Number.isFinite(v)) return false;
      continue;
    }
    if (Array.isArray(v)) {
      stack.push(...v);
      continue;
    }
    if (typeof v !== "object") return false;
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return false;
    stack.push(...Object.values(v));
  }
  return true;
}

/** A JSON object from a caller (args, metadata, editedArgs): checked for depth (MAX_JSON_DEPTH) and
 * storable text before anything walks it, so nothing later can overflow the stack on it. */
const inputJson = z.preprocess((value, ctx) => {
  const problem = jsonProblem(value);
  if (problem) {
    ctx.issues.push({ code: "custom", message: problem.message, path: problem.path, input: value });
  }
  return value;
  // Typed as the record it yields, so callers' input types stay precise (a preprocess takes `unknown`).
}, jsonRecord) as unknown as typeof jsonRecord;

export const itemSchema = z.object({
  id: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9._:-]+$/, "item ids may use letters, digits and . _ : - only"),
  label: storable(z.string().min(1).max(2000)),
  detail: storable(z.string().max(20_000)).optional(),
});
export type Item = z.infer<typeof itemSchema>;

/** An item as a caller may give it: a bare label, or an object whose id is optional. */
export const itemInputSchema = z.union([
  storable(z.string().min(1).max(2000)),
  itemSchema.extend({ id: itemSchema.shape.id.optional() }),
]);
export type ItemInput = z.infer<typeof itemInputSchema>;

/** What happens when a gate's deadline passes: reject (default), approve, or escalate to other approvers
 * with a new timeout, after which the nested `onTimeout` applies (chains allowed). */
export type OnTimeout =
  | "reject"
  | "approve"
  | { escalate: { approvers: string[]; timeoutMs: number; onTimeout?: OnTimeout } };
export const onTimeoutSchema: z.ZodType<OnTimeout> = z.lazy(() =>
  z.union([
    z.literal("reject"),
    z.literal("approve"),
    z.object({
      escalate: z.object({
        approvers: z.array(name).min(1).max(100),
        timeoutMs: z
          .number()
          .int()
          .positive()
          .max(366 * 24 * 3600 * 1000),
        onTimeout: onTimeoutSchema.optional(),
      }),
    }),
  ]),
);

/** Refuses an escalation chain longer than MAX_ESCALATION_DEPTH before the recursive schema walks it. */
const boundedOnTimeout = z.preprocess((value, ctx) => {
  let steps = 0;
  let rule: unknown = value;
  while (rule !== null && typeof rule === "object") {
    const escalate = (rule as { escalate?: unknown }).escalate;
    if (escalate === null || typeof escalate !== "object") break;
    if (++steps > MAX_ESCALATION_DEPTH) {
      ctx.issues.push({
        code: "custom",
        message: `escalation chains may have at most ${MAX_ESCALATION_DEPTH} steps`,
        input: value,
      });
      break;
    }
    rule = (escalate as { onTimeout?: unknown }).onTimeout;
  }
  return value;
}, onTimeoutSchema) as unknown as typeof onTimeoutSchema;

// --- how a request is shown to reviewers, and what hitlTool keeps with it ------------------------
// Typed fields instead of conventions hidden in `metadata` (which stays the caller's own). Every
// channel may show them; none has to. Requests stored before these fields existed carry the same
// facts under the old metadata keys: `presentationOf` (presentation.ts) reads both.

const shortText = storable(z.string().trim().min(1).max(2000));

/** Words for the decision buttons and the item list. A label may rename a button but never invert
 * it: channels ignore an approve label that says "reject" (and the reverse). */
export const labelsSchema = z
  .object({
    /** Shown with the approve button, e.g. "Sign". */
    approve: shortText.optional(),
    /** Shown with the reject button, e.g. "Keep unsigned". */
    reject: shortText.optional(),
    /** The heading of the item list, e.g. "Proposed additional research". */
    items: shortText.optional(),
    /** What one calls the items, plural, e.g. "queries". */
    itemNoun: shortText.optional(),
  })
  .strict();
export type Labels = z.infer<typeof labelsSchema>;

/** A point a reviewer should weigh (pattern 1's reflection); `high` ones are shown first. */
export const critiqueSchema = z
  .object({
    issue: storable(z.string().trim().min(1).max(2000)),
    importance: z.enum(["high", "medium", "low"]).optional(),
  })
  .strict();
export type Critique = z.infer<typeof critiqueSchema>;

/** What the agent expects the approved work to cost. */
export const estimateSchema = z
  .object({
    minutes: z.number().min(0).max(1e9).optional(),
    /** In dollars. */
    cost: z.number().min(0).max(1e12).optional(),
  })
  .strict();
export type Estimate = z.infer<typeof estimateSchema>;

/** The agent's progress so far, as label → value, e.g. `{ "Sub-questions analyzed": 3 }`. */
export const progressSchema = z
  .record(
    storable(z.string().min(1).max(200)),
    z.union([storable(z.string().max(2000)), z.number(), z.boolean()]),
  )
  .refine((p) => Object.keys(p).length <= 50, "progress may have at most 50 entries");
export type Progress = z.infer<typeof progressSchema>;

/** What `hitlTool` keeps with a request it opens: which tool, how it was configured, and the
 * (redacted) context of the call, so `resume` finds the tool and its context again. */
export const hitlInfoSchema = z
  .object({
    tool: name,
    approvalType: shortText.optional(),
    autoThreshold: z.number().min(0).max(100).optional(),
    quickThreshold: z.number().min(0).max(100).optional(),
    requiresReason: z.boolean().optional(),
    descriptionTemplate: storable(z.string().max(20_000)).optional(),
    context: inputJson.optional(),
  })
  .strict();
export type HitlInfo = z.infer<typeof hitlInfoSchema>;

/** The presentation fields, shared by the input and the stored request. */
const presentationShape = {
  labels: labelsSchema.optional(),
  /** The main question being worked on (patterns 1 and 5). */
  question: storable(z.string().trim().min(1).max(2000)).optional(),
  /** The operator's original command (pattern 2). */
  command: storable(z.string().trim().min(1).max(2000)).optional(),
  progress: progressSchema.optional(),
  critiques: z.array(critiqueSchema).max(100).optional(),
  estimate: estimateSchema.optional(),
  hitl: hitlInfoSchema.optional(),
};

/** The names of the presentation fields, copied from the input to the stored request as they are. */
export const PRESENTATION_FIELDS = Object.keys(
  presentationShape,
) as (keyof typeof presentationShape)[];

/** Who asks when a request names nobody (and nobody is authenticated). */
export const DEFAULT_REQUESTER = "anonymous";

/** The ways a request may be decided. `respond` (a reviewer answers with a `response` the waiting
 * agent consumes, e.g. to clarifying questions) is never in the default list: a request opts in. */
export const ALLOWED = ["approve", "reject", "revise", "select", "edit", "respond"] as const;
export const allowedSchema = z.enum(ALLOWED);
export type Allowed = z.infer<typeof allowedSchema>;

/** What a caller passes to `request()`. Fields the engine owns (status, decisions, requester when
 * authenticated) are not part of it. */
export const requestInputSchema = z
  .object({
    key: storable(z.string().min(1).max(200)).optional(),
    action: storable(z.string().trim().min(1).max(200)).default("generic"),
    title: storable(z.string().trim().min(1).max(500)),
    summary: storable(z.string().max(100_000)).optional(),
    args: inputJson.default({}),
    /** The JSON Schema of `args` (the tool's own definition): the args, and every edit of them on
     * any surface, are checked against it (core/args-schema.ts). */
    argsSchema: inputJson.optional(),
    /** The JSON Schema of a reviewer's `response` (a `respond` decision): a response that does not
     * fit is refused (422). Given with no `allowed`, the default decisions include `respond`. */
    responseSchema: inputJson.optional(),
    preview: storable(z.string().max(1_000_000)).optional(),
    items: z.array(itemInputSchema).max(1000).optional(),
    allowed: z.array(allowedSchema).min(1).optional(),
    risk: riskSchema.optional(),
    confidence: z.number().min(0).max(100).optional(),
    level: levelSchema.optional(),
    requester: name.default(DEFAULT_REQUESTER),
    approvers: z.array(name).max(100).default([]),
    quorum: z.number().int().min(1).max(100).default(1),
    timeoutMs: z
      .number()
      .int()
      .positive()
      .max(366 * 24 * 3600 * 1000)
      .optional(),
    onTimeout: boundedOnTimeout.default("reject"),
    /** `false` auto-approves at once and records `method: auto` (pattern 1's `required: false`). */
    requireApproval: z.boolean().default(true),
    /** A request for revision must say what should change (a non-empty comment), in every channel.
     * Off by default: pattern 2 lets a reviewer send a plan back without a word. */
    revisionCommentRequired: z.boolean().default(false),
    revisionOf: storable(z.string().min(1).max(100)).optional(),
    correlationId: storable(z.string().min(1).max(200)).optional(),
    /** Running the approved action twice does no harm: a claim whose process died (its outcome not
     * known) may be claimed and run again. Otherwise a person decides (retry, done or abandon). */
    idempotent: z.boolean().optional(),
    ...presentationShape,
    /** The caller's own data, kept and shown as is; Airlock reads nothing in it. */
    metadata: inputJson.default({}),
  })
  .strict();
export type RequestInput = z.input<typeof requestInputSchema>;
export type ParsedRequestInput = z.output<typeof requestInputSchema>;

export const decisionSchema = z.object({
  outcome: outcomeSchema,
  method: methodSchema,
  selected: z.array(z.string()).optional(),
  editedArgs: jsonRecord.optional(),
  /** What the reviewer answered (outcome `responded`): any JSON value, for the waiting agent. */
  response: z.unknown().optional(),
  /** SHA-256 of the canonical JSON of exactly what was approved (the edited args when edited). */
  argsHash: z.string().optional(),
  comment: z.string().optional(),
  reviewer: z.string(),
  channel: channelSchema,
  /** How the door proved the reviewer's identity (absent on decisions made before it was kept). */
  proof: proofSchema.optional(),
  decidedAt: z.number(),
  /** After this instant (epoch ms) the approval may no longer be executed. */
  validUntil: z.number().optional(),
  key: z.string().optional(),
  /** The digest of the review view the reviewer was shown (core/review-view.ts), when the surface
   * sent it. */
  viewDigest: z.string().optional(),
});
export type Decision = z.infer<typeof decisionSchema>;

/** What a human (or a channel on their behalf) passes to `decide()`. */
export const decisionInputSchema = z
  .object({
    outcome: z.enum(["approved", "rejected", "revise", "responded"]),
    method: methodSchema.optional(),
    selected: z
      .array(storable(z.string().min(1)))
      .max(1000)
      .optional(),
    editedArgs: inputJson.optional(),
    /** With outcome `responded` (and only then): the reviewer's answer, any JSON value, checked
     * against the request's `responseSchema` when it has one. */
    response: responseJson.optional(),
    comment: storable(z.string().max(20_000)).optional(),
    reviewer: name,
    /** Groups the reviewer belongs to, matched against the request's `approvers`. */
    groups: z.array(name).max(100).default([]),
    channel: channelSchema.default("api"),
    key: storable(z.string().min(1).max(200)).optional(),
    validForMs: z.number().int().positive().optional(),
    /** The digest of the review view shown to the reviewer (`GET /v1/requests/{id}/view`): a
     * decision on a view that changed since is refused (`view_changed`). */
    viewDigest: z
      .string()
      .regex(/^[0-9a-f]{64}$/, "a view digest is 64 hex characters")
      .optional(),
  })
  .strict();
export type DecisionInput = z.input<typeof decisionInputSchema>;
export type ParsedDecisionInput = z.output<typeof decisionInputSchema>;

/** An approved action's execution: `claimed` (a process is running it, under a lease), then
 * `executed` or `failed` as the process reports; `unknown` when the lease ran out with no report (the
 * process died: "approved, not known to have run"); `released` when a person allowed another attempt;
 * `abandoned` when a person gave up on it. */
export const EXECUTION_STATES = [
  "claimed",
  "executed",
  "failed",
  "unknown",
  "released",
  "abandoned",
] as const;
export const executionStateSchema = z.enum(EXECUTION_STATES);
export type ExecutionState = z.infer<typeof executionStateSchema>;

export const executionSchema = z.object({
  state: executionStateSchema,
  /** 1 for the first claim, one more for each claim after a release or an idempotent re-run. */
  attempt: z.number().int(),
  claimedAt: z.number(),
  claimedBy: z.string(),
  /** While `claimed`: past this instant with no outcome, the execution becomes `unknown`. */
  leaseUntil: z.number().optional(),
  /** When the outcome was reported, or a person settled it. */
  endedAt: z.number().optional(),
  /** SHA-256 of the canonical JSON of what the action returned (`executed`). */
  resultDigest: z.string().optional(),
  /** What the action threw (`failed`), redacted and cut to 2,000 characters. */
  error: z.string().optional(),
  /** The person who settled an unknown or failed execution (retry, done, abandon), and why. */
  resolvedBy: z.string().optional(),
  comment: z.string().optional(),
});
export type Execution = z.infer<typeof executionSchema>;

export const approvalRequestSchema = z.object({
  id: z.string(),
  key: z.string().optional(),
  action: z.string(),
  title: z.string(),
  summary: z.string().optional(),
  args: jsonRecord,
  argsHash: z.string(),
  /** The JSON Schema the args and any edit of them must satisfy. */
  argsSchema: jsonRecord.optional(),
  /** The JSON Schema a reviewer's `response` must satisfy. */
  responseSchema: jsonRecord.optional(),
  preview: z.string().optional(),
  items: z.array(itemSchema),
  allowed: z.array(allowedSchema),
  risk: riskSchema.optional(),
  confidence: z.number().optional(),
  level: levelSchema,
  requester: z.string(),
  approvers: z.array(z.string()),
  quorum: z.number().int(),
  /** Set only while pending: a terminal request has no deadline. */
  deadline: z.number().optional(),
  onTimeout: onTimeoutSchema,
  escalations: z.number().int(),
  /** A revision request needs a non-empty comment (absent on requests stored before it existed: false). */
  revisionCommentRequired: z.boolean().optional(),
  revisionOf: z.string().optional(),
  correlationId: z.string(),
  ...presentationShape,
  metadata: jsonRecord,
  status: statusSchema,
  /** Every decision recorded, including partial approvals towards a quorum. */
  decisions: z.array(decisionSchema),
  /** The terminal decision, once there is one. */
  decision: decisionSchema.optional(),
  /** Hash of the caller's input, to tell a replay (same key, same input) from a clash. */
  inputHash: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  version: z.number().int(),
  /** Declared safe to run twice (see the input's `idempotent`). */
  idempotent: z.boolean().optional(),
  /** What became of the approved action once claimed (core/execution.ts). */
  execution: executionSchema.optional(),
  /** When the approved action was known to have run (its `executed` outcome), and who ran it. On
   * requests stored before execution states, the time it was claimed. */
  executedAt: z.number().optional(),
  executedBy: z.string().optional(),
});
export type ApprovalRequest = z.infer<typeof approvalRequestSchema>;

export const EVENT_TYPES = [
  "created",
  "notified",
  "viewed",
  "decision_recorded",
  "decided",
  "timed_out",
  "escalated",
  "cancelled",
  "auto_executed",
  "claimed",
  "executed",
  "execution_failed",
  "execution_unknown",
  "execution_resolved",
] as const;
export const eventTypeSchema = z.enum(EVENT_TYPES);
export type EventType = z.infer<typeof eventTypeSchema>;

/** The events `record()` accepts: those that change no request. Every other type is written by the
 * state machine alone, so nobody in process can forge a decision into the audit log. An agent's progress
 * is recorded as `notified`. */
export const RECORDABLE_EVENT_TYPES = ["notified", "viewed", "auto_executed"] as const;

/** What a caller passes to `record()`. */
export const recordInputSchema = z
  .object({
    type: z.enum(RECORDABLE_EVENT_TYPES, {
      error: (issue) =>
        `only events that change no request can be recorded (${RECORDABLE_EVENT_TYPES.join(", ")}), got \`${String(issue.input)}\``,
    }),
    requestId: storable(z.string().min(1).max(200)).optional(),
    actor: name,
    at: z.number().optional(),
    data: inputJson.default({}),
  })
  .strict();
export type RecordInput = z.input<typeof recordInputSchema>;

/** One entry of the append-only audit log; `hash` chains it to the entry before it. */
export const auditEventSchema = z.object({
  seq: z.number().int(),
  type: eventTypeSchema,
  requestId: z.string().optional(),
  actor: z.string(),
  at: z.number(),
  data: jsonRecord,
  prevHash: z.string(),
  hash: z.string(),
});
export type AuditEvent = z.infer<typeof auditEventSchema>;
/** An audit event before the store places it in the chain. */
export type AuditDraft = Omit<AuditEvent, "seq" | "prevHash" | "hash">;
