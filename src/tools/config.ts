// `HitlConfig`: what a wrapped tool needs to know, resolved in one place into `ResolvedHitlConfig`
// with defaults from one object, and validated with messages that name the option, what was expected
// and what came.

import { InvalidInputError } from "../core/errors.js";
import { RISKS, type Risk } from "../core/schemas.js";
import { invalidOption } from "../core/validate.js";
import type { AirlockApi } from "../engine/api.js";
import type { Airlock } from "../engine/engine.js";
import { type ConfidenceContext, DEFAULT_THRESHOLDS } from "../policy/confidence.js";
import { argsSchemaFor, type JsonSchema, type ToolSchema } from "./args-schema.js";

/** Appends an audit event (the engine's `record`). */
export type AuditRecorder = Airlock["record"];

/** Where gated calls go: the engine, or anything with the same API (the HTTP client). Auto-executed
 * calls are audited through its `record`; approved calls are claimed with its `claimExecution`, so a
 * tool never runs twice on one approval, even when resumed twice. */
export type HitlGate = AirlockApi;

export type ConfidenceScorer = (
  toolName: string,
  args: Record<string, unknown>,
  context: ConfidenceContext,
) => number;

export interface HitlConfig {
  /** The tool's name, used for scoring, the audit and the request's action. @default the function's name */
  name?: string;
  /** Confidence (0..100) from which a call runs without a human. Must be >= `quickThreshold`.
   * @default 85, or `quickThreshold` when that is given and higher */
  autoThreshold?: number;
  /** Confidence from which a quick approval is enough; below it, full review.
   * @default 60, or `autoThreshold` when that is given and lower */
  quickThreshold?: number;
  /** What kind of approval this is (contract, expense, ...), shown to reviewers. @default "general" */
  approvalType?: string;
  /** @default "medium" */
  riskLevel?: Risk;
  /** Decisions on this tool's calls should come with a reason: its requests need a comment with every
   * revision request (`revisionCommentRequired`, enforced in every channel), and approval UIs are
   * told to ask for one with other decisions too. @default false */
  requiresReason?: boolean;
  /** @default "Approve" */
  approveLabel?: string;
  /** @default "Reject" */
  rejectLabel?: string;
  /** The request's title, with `{arg}` placeholders filled from the call's arguments,
   * e.g. "Sign contract {contractId} for {amount}". @default "Approve <name>" */
  descriptionTemplate?: string;
  /** Where quick and full approvals are requested. Without it, non-auto calls return a pending marker
   * with no `approvalId`, and auto calls are not audited unless `record` is given. Auto calls are
   * audited through the gate's `record` (a gate from plain JavaScript that lacks one audits them as
   * auto-approved requests). */
  airlock?: HitlGate;
  /** Audit sink for auto-executed calls. @default `airlock.record` */
  record?: AuditRecorder;
  /** Wait for the human, then execute (or return a rejection), instead of returning a pending marker.
   * Needs `airlock`. @default false */
  blocking?: boolean;
  /** The gate's deadline for quick/full approvals; on timeout the call is not executed. @default none */
  timeoutMs?: number;
  /** Users or groups allowed to decide. @default [] (anyone but the requester) */
  approvers?: string[];
  /** Who asks. @default "agent" */
  requester?: string;
  /** The request's action. @default the tool's name */
  action?: string;
  /** Replaces `calculateConfidence`. */
  confidence?: ConfidenceScorer;
  /** The tool's input schema: a zod (or other Standard Schema) schema, or a JSON Schema. Its JSON
   * Schema goes with every request as `argsSchema`, so an edit that does not fit is refused (422)
   * wherever it is made; the call's args and the approved args are parsed with it, and the wrapped
   * function gets the parsed value (its type is the schema's output). */
  schema?: ToolSchema;
  /** Lets a reviewer answer the call instead of approving it ("the person acts as the tool", the
   * `respond` decision): `true`, or `{ schema }`, the JSON Schema the answer must fit (e.g. the
   * tool's output). The call then returns a `HitlResponse` carrying the answer, for the agent to use
   * as the tool's result, and the wrapped function does not run. @default false */
  respond?: RespondOption;
}

/** See `HitlConfig.respond`. */
export type RespondOption = boolean | { schema?: JsonSchema };

export interface ResolvedHitlConfig {
  readonly name: string;
  readonly autoThreshold: number;
  readonly quickThreshold: number;
  readonly approvalType: string;
  readonly riskLevel: Risk;
  readonly requiresReason: boolean;
  readonly approveLabel: string;
  readonly rejectLabel: string;
  readonly descriptionTemplate: string | undefined;
  readonly airlock: HitlGate | undefined;
  readonly record: AuditRecorder | undefined;
  readonly blocking: boolean;
  readonly timeoutMs: number | undefined;
  readonly approvers: readonly string[];
  readonly requester: string;
  readonly action: string;
  readonly confidence: ConfidenceScorer | undefined;
  readonly schema: ToolSchema | undefined;
  /** The JSON Schema the requests carry (`schema`'s), when it can be carried. */
  readonly argsSchema: JsonSchema | undefined;
  /** A reviewer may answer instead of deciding (`respond`). */
  readonly respond: boolean;
  /** The JSON Schema such an answer must fit. */
  readonly responseSchema: JsonSchema | undefined;
}

/** The part of the configuration that is plain data: shown to UIs and put in pending markers. */
export interface PublicHitlConfig {
  autoThreshold: number;
  quickThreshold: number;
  approvalType: string;
  riskLevel: Risk;
  requiresReason: boolean;
  approveLabel: string;
  rejectLabel: string;
  descriptionTemplate?: string;
  /** A reviewer may answer the call instead of approving it (`respond`); absent otherwise. */
  respond?: true;
}

export const HITL_DEFAULTS = {
  autoThreshold: DEFAULT_THRESHOLDS.autoThreshold,
  quickThreshold: DEFAULT_THRESHOLDS.quickThreshold,
  approvalType: "general",
  riskLevel: "medium",
  requiresReason: false,
  approveLabel: "Approve",
  rejectLabel: "Reject",
  blocking: false,
  requester: "agent",
} as const satisfies Partial<ResolvedHitlConfig>;

const KNOWN_OPTIONS: ReadonlySet<string> = new Set<keyof HitlConfig>([
  "name",
  "autoThreshold",
  "quickThreshold",
  "approvalType",
  "riskLevel",
  "requiresReason",
  "approveLabel",
  "rejectLabel",
  "descriptionTemplate",
  "airlock",
  "record",
  "blocking",
  "timeoutMs",
  "approvers",
  "requester",
  "action",
  "confidence",
  "schema",
  "respond",
]);

/** Validates `config` and fills in the defaults. Throws InvalidInputError naming the option. */
export function resolveHitlConfig(config: HitlConfig, fnName: string): ResolvedHitlConfig {
  if (config === null || typeof config !== "object") {
    throw invalidOption("config", "an object", config);
  }
  for (const key of Object.keys(config)) {
    if (!KNOWN_OPTIONS.has(key)) {
      throw new InvalidInputError(
        `Unknown option \`${key}\` (known options: ${[...KNOWN_OPTIONS].join(", ")})`,
        key,
      );
    }
  }
  const name = config.name ?? (fnName || undefined);
  if (typeof name !== "string" || name.trim() === "") {
    throw invalidOption(
      "name",
      "a non-empty string (the function is anonymous, so name the tool)",
      name,
    );
  }
  // A default yields to an explicit threshold (`{ autoThreshold: 50 }` means quick from 50 too);
  // only two explicit thresholds can contradict each other.
  let autoThreshold = threshold(config, "autoThreshold");
  let quickThreshold = threshold(config, "quickThreshold");
  if (config.quickThreshold === undefined) quickThreshold = Math.min(quickThreshold, autoThreshold);
  if (config.autoThreshold === undefined) autoThreshold = Math.max(autoThreshold, quickThreshold);
  if (autoThreshold < quickThreshold) {
    throw new InvalidInputError(
      `Expected \`autoThreshold\` to be at least \`quickThreshold\` (${quickThreshold}), got \`${autoThreshold}\``,
      "autoThreshold",
    );
  }
  const riskLevel = config.riskLevel ?? HITL_DEFAULTS.riskLevel;
  if (!RISKS.includes(riskLevel)) {
    throw invalidOption("riskLevel", `one of ${RISKS.map((r) => `"${r}"`).join(", ")}`, riskLevel);
  }
  const airlock = config.airlock;
  if (airlock !== undefined && !isGate(airlock)) {
    throw invalidOption(
      "airlock",
      "an Airlock engine or client (with request, get and waitFor)",
      airlock,
    );
  }
  const blocking = bool(config, "blocking", HITL_DEFAULTS.blocking);
  if (blocking && airlock === undefined) {
    throw invalidOption("airlock", "an Airlock engine or client when `blocking` is true", airlock);
  }
  const record = config.record ?? airlock?.record?.bind(airlock);
  if (record !== undefined && typeof record !== "function") {
    throw invalidOption("record", "a function (the engine's `record`)", record);
  }
  if (config.confidence !== undefined && typeof config.confidence !== "function") {
    throw invalidOption(
      "confidence",
      "a function returning a score from 0 to 100",
      config.confidence,
    );
  }
  const timeoutMs = config.timeoutMs;
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0)) {
    throw invalidOption("timeoutMs", "an integer from 1 and up", timeoutMs);
  }
  const approvers = config.approvers ?? [];
  if (!Array.isArray(approvers) || approvers.some((a) => typeof a !== "string" || a === "")) {
    throw invalidOption("approvers", "an array of non-empty strings", approvers);
  }
  const descriptionTemplate = config.descriptionTemplate;
  if (descriptionTemplate !== undefined && typeof descriptionTemplate !== "string") {
    throw invalidOption("descriptionTemplate", "a string", descriptionTemplate);
  }
  const schema = config.schema;
  if (schema !== undefined && (schema === null || typeof schema !== "object")) {
    throw invalidOption("schema", "a zod schema or a JSON Schema object", schema);
  }
  const respond = config.respond ?? false;
  if (
    typeof respond !== "boolean" &&
    (respond === null ||
      typeof respond !== "object" ||
      Array.isArray(respond) ||
      (respond.schema !== undefined &&
        (respond.schema === null ||
          typeof respond.schema !== "object" ||
          Array.isArray(respond.schema))))
  ) {
    throw invalidOption("respond", "true, false or { schema: <a JSON Schema object> }", respond);
  }
  return Object.freeze({
    name,
    autoThreshold,
    quickThreshold,
    approvalType: text(config, "approvalType", HITL_DEFAULTS.approvalType),
    riskLevel,
    requiresReason: bool(config, "requiresReason", HITL_DEFAULTS.requiresReason),
    approveLabel: text(config, "approveLabel", HITL_DEFAULTS.approveLabel),
    rejectLabel: text(config, "rejectLabel", HITL_DEFAULTS.rejectLabel),
    descriptionTemplate,
    airlock,
    record,
    blocking,
    timeoutMs,
    approvers: Object.freeze([...approvers]),
    requester: text(config, "requester", HITL_DEFAULTS.requester),
    action: text(config, "action", name),
    confidence: config.confidence,
    schema,
    argsSchema: argsSchemaFor(schema, name),
    respond: respond !== false,
    responseSchema: typeof respond === "object" ? respond.schema : undefined,
  });
}

export function publicConfig(c: ResolvedHitlConfig): PublicHitlConfig {
  const out: PublicHitlConfig = {
    autoThreshold: c.autoThreshold,
    quickThreshold: c.quickThreshold,
    approvalType: c.approvalType,
    riskLevel: c.riskLevel,
    requiresReason: c.requiresReason,
    approveLabel: c.approveLabel,
    rejectLabel: c.rejectLabel,
  };
  if (c.descriptionTemplate !== undefined) out.descriptionTemplate = c.descriptionTemplate;
  if (c.respond) out.respond = true;
  return out;
}

function threshold(config: HitlConfig, key: "autoThreshold" | "quickThreshold"): number {
  const v = config[key] ?? HITL_DEFAULTS[key];
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > 100) {
    throw invalidOption(key, "a number from 0 to 100", v);
  }
  return v;
}

function bool(config: HitlConfig, key: "blocking" | "requiresReason", fallback: boolean): boolean {
  const v = config[key] ?? fallback;
  if (typeof v !== "boolean") throw invalidOption(key, "a boolean", v);
  return v;
}

function text(
  config: HitlConfig,
  key: "approvalType" | "approveLabel" | "rejectLabel" | "requester" | "action",
  fallback: string,
): string {
  const v = config[key] ?? fallback;
  if (typeof v !== "string" || v.trim() === "") throw invalidOption(key, "a non-empty string", v);
  return v;
}

function isGate(value: unknown): value is HitlGate {
  if (value === null || typeof value !== "object") return false;
  const g = value as Record<string, unknown>;
  return (
    typeof g.request === "function" &&
    typeof g.get === "function" &&
    typeof g.waitFor === "function"
  );
}
