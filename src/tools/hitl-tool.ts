// `hitlTool(fn, config)`: wraps an agent tool so that each call is scored, and either runs at once
// (auto, audited), or waits for a human through an Airlock gate (quick/full). The wrapped function
// runs only with arguments a human approved (checked with `verifyApproval` against the decision's
// args hash) and never after a rejection, revision request, timeout or cancellation. A tool with
// `respond` set lets the reviewer answer instead ("the person acts as the tool"): the call then
// returns a `HitlResponse` with the answer, and the function does not run.
import { redactorOf } from "../audit/redact.js";
import { InvalidInputError } from "../core/errors.js";
import { hashArgs } from "../core/hash.js";
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "../core/limits.js";
import { presentationOf } from "../core/presentation.js";
import type { ApprovalRequest, Decision, HitlInfo, Level, RequestInput } from "../core/schemas.js";
import { isPending } from "../core/state.js";
import { clip } from "../core/text.js";
import { invalidOption } from "../core/validate.js";
import { runApproved } from "../engine/run-approved.js";
import {
  type ConfidenceContext,
  calculateConfidence,
  clampScore,
  determineApprovalLevel,
} from "../policy/confidence.js";
import { parseToolArgs, type StandardSchema } from "./args-schema.js";
import {
  type HitlConfig,
  type HitlGate,
  publicConfig,
  type ResolvedHitlConfig,
  resolveHitlConfig,
} from "./config.js";
import type { HitlPending, HitlRejection, HitlResponse, RejectionCode } from "./results.js";

/** Where the configuration lives on a wrapped function. A registered symbol, so `isHitlTool` works
 * across duplicated copies of this package. */
const HITL_CONFIG = Symbol.for("airlock.hitlConfig");

/** What the agent knows about the call, passed as `_hitlContext` next to the arguments. It is used
 * for scoring, stored (redacted) with the request, and handed to the wrapped function. */
export interface HitlContext extends ConfidenceContext {
  /** Idempotency key of the gate: replaying a call with the same key reuses the same request. */
  key?: string;
  correlationId?: string;
  /** Overrides the configured requester for this call. */
  requester?: string;
}

/** The second argument the wrapped function receives. */
export interface HitlCall {
  toolName: string;
  context: HitlContext;
  level: Level;
  confidence: number;
  /** The request a human approved; absent for auto-executed calls. */
  approvalId?: string;
  decision?: Decision;
}

export type HitlToolFn<A extends object, R> = (args: A, call: HitlCall) => R | Promise<R>;

export type HitlArgs<A extends object> = A & { _hitlContext?: HitlContext };

export interface ResumeOptions {
  /** Wait while the request is pending instead of returning the marker again. @default config.blocking */
  wait?: boolean;
  signal?: AbortSignal;
}

export interface HitlTool<A extends object, R, Out> {
  (args: HitlArgs<A>): Promise<Out>;
  /** Finishes a call that returned a pending marker: executes it with the approved arguments once a
   * human approved, returns the reviewer's answer when they responded (a tool with `respond`), a
   * rejection otherwise, or the marker again while still pending. */
  resume(
    approvalId: string,
    options?: ResumeOptions,
  ): Promise<R | Out | HitlPending | HitlRejection>;
  readonly toolName: string;
}

/** A configuration that lets a reviewer answer (`respond: true` or `{ schema }`): the tool's result
 * type then includes `HitlResponse`, so the caller must handle the answer. */
type Responding = { respond: true | { schema?: Record<string, unknown> } };

/** With a zod (or other Standard Schema) `schema`: the tool takes the schema's input, and the
 * wrapped function gets the schema's output, parsed from the approved args (never cast). With
 * `respond`, the result may be a `HitlResponse` too. */
export function hitlTool<I extends object, O extends object, R>(
  fn: HitlToolFn<O, R>,
  config: HitlConfig & Responding & { schema: StandardSchema<I, O>; blocking: true },
): HitlTool<I, R, R | HitlRejection | HitlResponse>;
export function hitlTool<I extends object, O extends object, R>(
  fn: HitlToolFn<O, R>,
  config: HitlConfig & Responding & { schema: StandardSchema<I, O> },
): HitlTool<I, R, R | HitlPending | HitlRejection | HitlResponse>;
export function hitlTool<A extends object, R>(
  fn: HitlToolFn<A, R>,
  config: HitlConfig & Responding & { blocking: true },
): HitlTool<A, R, R | HitlRejection | HitlResponse>;
export function hitlTool<A extends object, R>(
  fn: HitlToolFn<A, R>,
  config: HitlConfig & Responding,
): HitlTool<A, R, R | HitlPending | HitlRejection | HitlResponse>;
export function hitlTool<I extends object, O extends object, R>(
  fn: HitlToolFn<O, R>,
  config: HitlConfig & { schema: StandardSchema<I, O>; blocking: true },
): HitlTool<I, R, R | HitlRejection>;
export function hitlTool<I extends object, O extends object, R>(
  fn: HitlToolFn<O, R>,
  config: HitlConfig & { schema: StandardSchema<I, O> },
): HitlTool<I, R, R | HitlPending | HitlRejection>;
export function hitlTool<A extends object, R>(
  fn: HitlToolFn<A, R>,
  config: HitlConfig & { blocking: true },
): HitlTool<A, R, R | HitlRejection>;
export function hitlTool<A extends object, R>(
  fn: HitlToolFn<A, R>,
  config?: HitlConfig,
): HitlTool<A, R, R | HitlPending | HitlRejection>;
export function hitlTool<A extends object, R>(
  fn: HitlToolFn<A, R>,
  config: HitlConfig = {},
): HitlTool<A, R, R | HitlPending | HitlRejection | HitlResponse> {
  if (typeof fn !== "function") {
    throw invalidOption("fn", "a function", fn);
  }
  const cfg = resolveHitlConfig(config, fn.name);

  async function call(
    callArgs: HitlArgs<A>,
  ): Promise<R | HitlPending | HitlRejection | HitlResponse> {
    const { args, context } = splitArgs(callArgs);
    // The call as the model made it must fit the tool's schema; what runs is the parsed value.
    const parsed = await typedArgs(cfg, args, "args");
    const confidence = clampScore((cfg.confidence ?? calculateConfidence)(cfg.name, args, context));
    const level = determineApprovalLevel(confidence, cfg);
    if (level === "auto") {
      // Audited before it runs: a record that cannot be written stops the call, so no automatic
      // execution ever goes unrecorded.
      if (cfg.record) {
        await cfg.record(autoExecution(cfg, args, context, confidence));
      } else if (cfg.airlock) {
        // A gate without `record` (plain JavaScript, older gates): the audit trail is an
        // auto-approved request.
        await cfg.airlock.request({
          ...requestInput(cfg, args, context, level, confidence),
          requireApproval: false,
        });
      }
      return fn(parsed as A, { toolName: cfg.name, context, level, confidence });
    }
    const gate = cfg.airlock;
    if (!gate) return pendingMarker(cfg, args, level, confidence, undefined);
    const request = await gate.request(requestInput(cfg, args, context, level, confidence));
    if (isPending(request) && !cfg.blocking) {
      // The engine's own policy may have set another level than ours: report what was stored.
      const stored = request.level === "full" ? "full" : "quick";
      return pendingMarker(cfg, request.args, stored, request.confidence ?? confidence, request.id);
    }
    return settle(isPending(request) ? await gate.waitFor(request.id) : request, context);
  }

  async function resume(
    approvalId: string,
    options: ResumeOptions = {},
  ): Promise<R | HitlPending | HitlRejection | HitlResponse> {
    const gate = requireGate(cfg);
    let request = await gate.get(approvalId);
    if (requestTool(request) !== cfg.name || request.action !== cfg.action) {
      throw new InvalidInputError(
        `request ${approvalId} is not a call to the tool \`${cfg.name}\` (its action is \`${request.action}\`)`,
        "approvalId",
      );
    }
    if (isPending(request)) {
      if (!(options.wait ?? cfg.blocking)) {
        return pendingMarker(
          cfg,
          request.args,
          request.level === "full" ? "full" : "quick",
          request.confidence ?? 0,
          request.id,
        );
      }
      request = await gate.waitFor(approvalId, options.signal ? { signal: options.signal } : {});
    }
    return settle(request);
  }

  /** The only place the wrapped function runs after a human: approved, bound to its arguments, and
   * claimed once (`runApproved`), so a second resume (or a replayed job) is refused. A response
   * never runs it: the reviewer's answer is the call's result. */
  async function settle(
    request: ApprovalRequest,
    context: HitlContext = requestContext(request),
  ): Promise<R | HitlRejection | HitlResponse> {
    const gate = requireGate(cfg);
    if (cfg.schema && request.status === "approved") {
      // Checked before the execution is claimed, so approved args the tool cannot take (an edit
      // made where no argsSchema was checked) never run and never spend the approval.
      const approved = request.decision?.editedArgs ?? request.args;
      const fits = await parseToolArgs(cfg.schema, approved, cfg.argsSchema);
      if (!fits.ok) {
        return rejection(
          cfg,
          request,
          "invalid_args",
          `the approved arguments do not fit the tool's schema: ${fits.detail}`,
        );
      }
    }
    const result = await runApproved(
      gate,
      request,
      async (args, claimed) => {
        const hitlCall: HitlCall = {
          toolName: cfg.name,
          context,
          level: claimed.level,
          confidence: claimed.confidence ?? 0,
          approvalId: claimed.id,
        };
        if (claimed.decision) hitlCall.decision = claimed.decision;
        return fn((await typedArgs(cfg, args, "editedArgs")) as A, hitlCall);
      },
      { by: context.requester ?? cfg.requester },
    );
    if (result.ok) return result.value;
    if (result.reason === "responded") return responseOf(cfg, result.request, result.response);
    switch (result.reason) {
      case "not_approved":
      case "args_mismatch":
      case "expired":
      case "already_executed":
        return rejection(cfg, result.request, result.reason, result.detail);
      default:
        return rejectionFor(cfg, result.request);
    }
  }

  const wrapped = call as HitlTool<A, R, R | HitlPending | HitlRejection | HitlResponse>;
  Object.defineProperty(wrapped, "name", { value: cfg.name });
  Object.defineProperty(wrapped, "length", { value: fn.length });
  Object.defineProperty(wrapped, "toolName", { value: cfg.name, enumerable: true });
  Object.defineProperty(wrapped, "resume", { value: resume });
  Object.defineProperty(wrapped, HITL_CONFIG, { value: cfg });
  return wrapped;
}

export function isHitlTool(value: unknown): value is HitlTool<object, unknown, unknown> {
  return typeof value === "function" && HITL_CONFIG in value;
}

/** The resolved configuration of a wrapped tool, or undefined for anything else. */
export function getHitlConfig(value: unknown): ResolvedHitlConfig | undefined {
  if (!isHitlTool(value)) return undefined;
  return (value as unknown as Record<symbol, ResolvedHitlConfig>)[HITL_CONFIG];
}

/** The args as the tool's schema parses them (the args themselves without a schema); throws
 * invalid_input with a sentence naming the field when they do not fit. */
async function typedArgs(
  cfg: ResolvedHitlConfig,
  args: Record<string, unknown>,
  field: "args" | "editedArgs",
): Promise<unknown> {
  if (!cfg.schema) return args;
  const parsed = await parseToolArgs(cfg.schema, args, cfg.argsSchema);
  if (parsed.ok) return parsed.value;
  throw new InvalidInputError(
    `The arguments of ${cfg.name} do not fit its schema: ${parsed.detail}`,
    field,
  );
}

/** The audit record of an auto-executed call: what ran (redacted, plus the hash of the exact args)
 * and why no human was asked. Kept lean: it is written on every automatic call. */
function autoExecution(
  cfg: ResolvedHitlConfig,
  args: Record<string, unknown>,
  context: HitlContext,
  confidence: number,
) {
  const data: Record<string, unknown> = {
    tool: cfg.name,
    args: redactorOf(cfg.airlock).redact(args),
    argsHash: hashArgs(args),
    confidence,
    autoThreshold: cfg.autoThreshold,
  };
  if (cfg.action !== cfg.name) data.action = cfg.action;
  if (Object.keys(context).length > 0) data.context = redactorOf(cfg.airlock).redact(context);
  return { type: "auto_executed" as const, actor: context.requester ?? cfg.requester, data };
}

function splitArgs<A extends object>(
  callArgs: HitlArgs<A>,
): { args: Record<string, unknown>; context: HitlContext } {
  if (callArgs === null || typeof callArgs !== "object" || Array.isArray(callArgs)) {
    throw new InvalidInputError(
      `Expected the tool's arguments to be an object, got \`${String(callArgs)}\``,
      "args",
    );
  }
  // Scored, redacted and hashed before any gate sees them: refuse what would overflow those walks.
  if (jsonDepthExceeds(callArgs)) {
    throw new InvalidInputError(
      `the tool's arguments nest objects and arrays deeper than ${MAX_JSON_DEPTH} levels, the most Airlock accepts`,
      "args",
    );
  }
  const { _hitlContext, ...args } = callArgs as Record<string, unknown>;
  if (_hitlContext !== undefined && (_hitlContext === null || typeof _hitlContext !== "object")) {
    throw invalidOption("_hitlContext", "an object", _hitlContext);
  }
  return { args, context: (_hitlContext ?? {}) as HitlContext };
}

function requestInput(
  cfg: ResolvedHitlConfig,
  args: Record<string, unknown>,
  context: HitlContext,
  level: Level,
  confidence: number,
): RequestInput {
  const shown = redactorOf(cfg.airlock).redact(args);
  const input: RequestInput = {
    action: cfg.action,
    title: describeCall(cfg, shown),
    summary: [
      `**Tool:** \`${cfg.name}\` (${cfg.approvalType}, risk ${cfg.riskLevel})`,
      `**Confidence:** ${confidence} → ${level} review`,
      "",
      "```json",
      JSON.stringify(shown, null, 2),
      "```",
    ].join("\n"),
    args,
    risk: cfg.riskLevel,
    confidence,
    level,
    requester: context.requester ?? cfg.requester,
    approvers: [...cfg.approvers],
    allowed: cfg.respond
      ? ["approve", "reject", "revise", "edit", "respond"]
      : ["approve", "reject", "revise", "edit"],
    hitl: hitlInfo(cfg, context),
    // The tool's own schema: an edit that does not fit is refused wherever it is made.
    ...(cfg.argsSchema ? { argsSchema: cfg.argsSchema } : {}),
    labels: { approve: cfg.approveLabel, reject: cfg.rejectLabel },
  };
  if (cfg.responseSchema !== undefined) input.responseSchema = cfg.responseSchema;
  if (cfg.timeoutMs !== undefined) input.timeoutMs = cfg.timeoutMs;
  // A tool that wants reasons gets them where the engine can enforce one: with a revision request.
  if (cfg.requiresReason) input.revisionCommentRequired = true;
  if (context.key !== undefined) input.key = context.key;
  if (context.correlationId !== undefined) input.correlationId = context.correlationId;
  return input;
}

/** The title reviewers see: the template with `{arg}` filled from the (redacted) arguments. */
export function describeCall(cfg: ResolvedHitlConfig, shownArgs: Record<string, unknown>): string {
  const text = cfg.descriptionTemplate
    ? cfg.descriptionTemplate.replace(/\{(\w+)\}/g, (whole, key: string) =>
        Object.hasOwn(shownArgs, key) ? display(shownArgs[key]) : whole,
      )
    : `Approve ${cfg.name}`;
  const trimmed = text.trim() || `Approve ${cfg.name}`;
  return clip(trimmed, 500);
}

/** An argument as a title shows it: text as is, a list of plain values as words (`team-a, team-b`,
 * not `["team-a","team-b"]`), anything else as JSON. */
function display(v: unknown): string {
  if (typeof v === "string") return v;
  const plain = (x: unknown) =>
    typeof x === "string" || typeof x === "number" || typeof x === "boolean";
  if (Array.isArray(v) && v.length > 0 && v.every(plain)) return v.map(String).join(", ");
  return JSON.stringify(v) ?? String(v);
}

function pendingMarker(
  cfg: ResolvedHitlConfig,
  args: Record<string, unknown>,
  level: "quick" | "full",
  confidence: number,
  approvalId: string | undefined,
): HitlPending {
  const shown = redactorOf(cfg.airlock).redact(args);
  const marker: HitlPending = {
    __hitl_pending__: true,
    hitl_result: {
      requiresApproval: true,
      approvalLevel: level,
      confidenceScore: confidence,
      toolName: cfg.name,
      toolArgs: shown,
      config: publicConfig(cfg),
      description: describeCall(cfg, shown),
    },
  };
  if (approvalId !== undefined) marker.hitl_result.approvalId = approvalId;
  return marker;
}

function rejectionFor(cfg: ResolvedHitlConfig, request: ApprovalRequest): HitlRejection {
  const d = request.decision;
  const by = d?.reviewer ? ` by ${d.reviewer}` : "";
  const said = d?.comment ? `: "${d.comment}"` : "";
  switch (request.status) {
    case "revise":
      return rejection(
        cfg,
        request,
        "revise",
        `A human asked for changes to this ${cfg.name} call${by}${said}. It was not executed; change the call as asked instead of repeating it.`,
      );
    case "timed_out":
      return rejection(
        cfg,
        request,
        "timed_out",
        `Nobody approved this ${cfg.name} call before the deadline, so it was not executed. Do not retry the same call.`,
      );
    case "cancelled":
      return rejection(
        cfg,
        request,
        "cancelled",
        `The approval of this ${cfg.name} call was cancelled${by}${said}. It was not executed. Do not retry the same call.`,
      );
    default:
      return rejection(
        cfg,
        request,
        "rejected",
        `A human rejected this ${cfg.name} call${by}${said}. It was not executed. Do not retry the same call.`,
      );
  }
}

function rejection(
  cfg: ResolvedHitlConfig,
  request: ApprovalRequest,
  code: RejectionCode,
  reason: string,
): HitlRejection {
  const out: HitlRejection = {
    rejected: true,
    retry: false,
    reason:
      code === "args_mismatch" ||
      code === "expired" ||
      code === "not_approved" ||
      code === "invalid_args"
        ? `The approval cannot be used (${reason}); the ${cfg.name} call was not executed. Do not retry the same call.`
        : reason,
    code,
    toolName: cfg.name,
    approvalId: request.id,
  };
  const d = request.decision;
  if (d?.comment !== undefined) out.comment = d.comment;
  if (d?.reviewer !== undefined) out.reviewer = d.reviewer;
  return out;
}

/** The reviewer's answer as the call's result (the function did not run). */
function responseOf(
  cfg: ResolvedHitlConfig,
  request: ApprovalRequest,
  response: unknown,
): HitlResponse {
  const out: HitlResponse = {
    responded: true,
    response,
    toolName: cfg.name,
    approvalId: request.id,
  };
  const d = request.decision;
  if (d?.reviewer !== undefined) out.reviewer = d.reviewer;
  if (d?.comment !== undefined) out.comment = d.comment;
  return out;
}

function requireGate(cfg: ResolvedHitlConfig): HitlGate {
  if (!cfg.airlock) {
    throw new InvalidInputError(
      `the tool \`${cfg.name}\` has no \`airlock\` gate configured, so there is no request to resume`,
      "airlock",
    );
  }
  return cfg.airlock;
}

/** What the request keeps of the tool and the call (`hitl`), for `resume`. */
function hitlInfo(cfg: ResolvedHitlConfig, context: HitlContext): HitlInfo {
  const info: HitlInfo = {
    tool: cfg.name,
    approvalType: cfg.approvalType,
    autoThreshold: cfg.autoThreshold,
    quickThreshold: cfg.quickThreshold,
    requiresReason: cfg.requiresReason,
    context: redactorOf(cfg.airlock).redact(context),
  };
  if (cfg.descriptionTemplate !== undefined) info.descriptionTemplate = cfg.descriptionTemplate;
  return info;
}

/** The tool a request was opened for (also on requests stored with the old metadata keys). */
function requestTool(request: ApprovalRequest): string | undefined {
  return presentationOf(request).hitl?.tool;
}

function requestContext(request: ApprovalRequest): HitlContext {
  return (presentationOf(request).hitl?.context ?? {}) as HitlContext;
}
