// How a request is shown, read in one place: its typed presentation fields (labels, question,
// command, progress, critiques, estimate, hitl), or, for requests stored before those fields existed,
// the metadata keys agents used then (camelCase, or the snake_case a Python-minded agent sent):
//   approveLabel, rejectLabel (or hitl.approveLabel/rejectLabel), itemsTitle, itemNoun,
//   mainQuery, command / operatorInput, progress, critiques / critique_points,
//   estimatedMinutes, estimatedCost, hitl { tool, ...config }, context (hitlTool's call context).
// Anything of the wrong type is ignored, never an error: a request can always be shown.
import type { ApprovalRequest, Critique, Estimate, HitlInfo, Labels, Progress } from "./schemas.js";

export interface RequestPresentation {
  labels: Labels;
  question?: string;
  command?: string;
  progress: Progress;
  critiques: Critique[];
  estimate: Estimate;
  hitl?: HitlInfo;
}

type Shown = Pick<
  ApprovalRequest,
  "labels" | "question" | "command" | "progress" | "critiques" | "estimate" | "hitl" | "metadata"
>;

export function presentationOf(request: Shown): RequestPresentation {
  const m = request.metadata ?? {};
  const oldHitl = record(m.hitl);
  const out: RequestPresentation = {
    labels: {
      ...definedText({
        approve: m.approveLabel ?? oldHitl?.approveLabel,
        reject: m.rejectLabel ?? oldHitl?.rejectLabel,
        items: m.itemsTitle,
        itemNoun: m.itemNoun,
      }),
      ...request.labels,
    },
    progress: request.progress ?? progressOf(m.progress),
    critiques: request.critiques ?? critiquesOf(m.critiques ?? m.critique_points),
    estimate: request.estimate ?? estimateOf(m),
  };
  const question = request.question ?? text(m.mainQuery ?? m.main_query);
  if (question !== undefined) out.question = question;
  const command = request.command ?? text(m.command ?? m.operatorInput ?? m.operator_input);
  if (command !== undefined) out.command = command;
  const hitl = request.hitl ?? hitlOf(oldHitl, m.context);
  if (hitl !== undefined) out.hitl = hitl;
  return out;
}

function record(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

function text(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
}

function finite(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined;
}

function definedText<K extends string>(values: Record<K, unknown>): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const [k, v] of Object.entries(values) as [K, unknown][]) {
    const t = text(v);
    if (t !== undefined) out[k] = t;
  }
  return out;
}

/** Pattern 1's progress keys, as the labels a reviewer reads. */
const PROGRESS_LABELS: Record<string, string> = {
  completedCount: "Sub-questions analyzed",
  completed_count: "Sub-questions analyzed",
  avgConfidence: "Average confidence",
  avg_confidence: "Average confidence",
  lowConfidenceCount: "Low confidence areas",
  low_confidence_count: "Low confidence areas",
};

/** Progress from metadata was keyed by field names: shown under readable labels. */
function progressOf(value: unknown): Progress {
  const out: Progress = {};
  for (const [k, v] of Object.entries(record(value) ?? {})) {
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") {
      out[PROGRESS_LABELS[k] ?? humanize(k)] = v;
    }
  }
  return out;
}

function humanize(key: string): string {
  const words = key
    .replace(/_/g, " ")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function critiquesOf(value: unknown): Critique[] {
  if (!Array.isArray(value)) return [];
  const out: Critique[] = [];
  for (const c of value) {
    const issue = text(record(c)?.issue);
    if (issue === undefined) continue;
    const importance = record(c)?.importance;
    const level = typeof importance === "string" ? importance.toLowerCase() : undefined;
    out.push(
      level === "high" || level === "medium" || level === "low"
        ? { issue, importance: level }
        : { issue },
    );
  }
  return out;
}

function estimateOf(m: Record<string, unknown>): Estimate {
  const out: Estimate = {};
  const minutes = finite(m.estimatedMinutes ?? m.estimated_minutes);
  if (minutes !== undefined) out.minutes = minutes;
  const cost = finite(m.estimatedCost ?? m.estimated_cost);
  if (cost !== undefined) out.cost = cost;
  return out;
}

function hitlOf(old: Record<string, unknown> | undefined, context: unknown): HitlInfo | undefined {
  const tool = text(old?.tool);
  if (!old || tool === undefined) return undefined;
  const out: HitlInfo = { tool };
  const approvalType = text(old.approvalType);
  if (approvalType !== undefined) out.approvalType = approvalType;
  if (typeof old.autoThreshold === "number") out.autoThreshold = old.autoThreshold;
  if (typeof old.quickThreshold === "number") out.quickThreshold = old.quickThreshold;
  if (typeof old.requiresReason === "boolean") out.requiresReason = old.requiresReason;
  const template = text(old.descriptionTemplate);
  if (template !== undefined) out.descriptionTemplate = template;
  const ctx = record(context);
  if (ctx !== undefined) out.context = ctx;
  return out;
}
