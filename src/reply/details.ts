// What a message shows besides the request's own fields, read leniently from `request.metadata`.
// The conventions (camelCase, or the snake_case a Python-minded agent may send):
//   mainQuery            the question being researched (pattern 1)
//   command              the operator's original command (pattern 2; also `operatorInput`)
//   progress             { completedCount, avgConfidence, lowConfidenceCount, ...any label: value }
//   critiques            [{ issue, importance }] - only `importance: "high"` ones are shown
//   estimatedMinutes     estimated additional time
//   estimatedCost        estimated additional cost (a number is shown in dollars, a string as is)
//   itemsTitle, itemNoun how the items are introduced ("Proposed Additional Research", "queries")
// Anything of the wrong type is ignored, never an error: a message is still sent.
import type { ApprovalRequest } from "../core/schemas.js";

export interface MessageDetails {
  mainQuery?: string;
  command?: string;
  progress: [label: string, value: string][];
  highPriorityCritiques: string[];
  estimatedMinutes?: number;
  estimatedCost?: string;
  itemsTitle: string;
  itemNoun: string;
}

const PROGRESS_LABELS: Record<string, string> = {
  completedCount: "Sub-questions analyzed",
  completed_count: "Sub-questions analyzed",
  avgConfidence: "Average confidence",
  avg_confidence: "Average confidence",
  lowConfidenceCount: "Low confidence areas",
  low_confidence_count: "Low confidence areas",
};

export function messageDetails(request: ApprovalRequest): MessageDetails {
  const m = request.metadata;
  const details: MessageDetails = {
    progress: progressOf(m.progress),
    highPriorityCritiques: critiquesOf(m.critiques ?? m.critique_points),
    itemsTitle: str(m.itemsTitle) ?? "Proposed items",
    itemNoun: str(m.itemNoun) ?? "items",
  };
  const mainQuery = str(m.mainQuery ?? m.main_query);
  if (mainQuery) details.mainQuery = mainQuery;
  const command = str(m.command ?? m.operatorInput ?? m.operator_input);
  if (command) details.command = command;
  const minutes = m.estimatedMinutes ?? m.estimated_minutes;
  if (typeof minutes === "number" && Number.isFinite(minutes) && minutes >= 0) {
    details.estimatedMinutes = minutes;
  }
  const cost = m.estimatedCost ?? m.estimated_cost;
  if (typeof cost === "number" && Number.isFinite(cost) && cost >= 0) {
    details.estimatedCost = `$${cost.toFixed(2)}`;
  } else if (str(cost)) {
    details.estimatedCost = str(cost);
  }
  return details;
}

/** "1 query" / "2 queries". */
export function countOf(n: number, plural: string): string {
  if (n !== 1) return `${n} ${plural}`;
  if (plural.endsWith("ies")) return `1 ${plural.slice(0, -3)}y`;
  if (plural.endsWith("s")) return `1 ${plural.slice(0, -1)}`;
  return `1 ${plural}`;
}

function progressOf(value: unknown): [string, string][] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
  const out: [string, string][] = [];
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") continue;
    out.push([PROGRESS_LABELS[key] ?? humanize(key), String(v)]);
  }
  return out;
}

function critiquesOf(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const out: string[] = [];
  for (const c of value) {
    if (c === null || typeof c !== "object") continue;
    const { issue, importance } = c as Record<string, unknown>;
    if (typeof issue === "string" && typeof importance === "string") {
      if (importance.toLowerCase() === "high" && issue.trim()) out.push(issue.trim());
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

function str(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
}
