// What a message shows besides the request's own fields: its presentation fields (question, command,
// progress, critiques, estimate, item labels), read by `presentationOf`, which also understands the
// metadata keys of requests stored before those fields existed. Only `high` critiques are shown.
import { presentationOf } from "../core/presentation.js";
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

export function messageDetails(request: ApprovalRequest): MessageDetails {
  const p = presentationOf(request);
  const details: MessageDetails = {
    progress: Object.entries(p.progress).map(([label, v]) => [label, String(v)]),
    highPriorityCritiques: p.critiques.filter((c) => c.importance === "high").map((c) => c.issue),
    itemsTitle: p.labels.items ?? "Proposed items",
    itemNoun: p.labels.itemNoun ?? "items",
  };
  if (p.question !== undefined) details.mainQuery = p.question;
  if (p.command !== undefined) details.command = p.command;
  if (p.estimate.minutes !== undefined) details.estimatedMinutes = p.estimate.minutes;
  if (p.estimate.cost !== undefined) {
    details.estimatedCost = `$${p.estimate.cost.toFixed(2)}`;
  } else {
    // Old requests may have said it in words ("about $5"): shown as is.
    const m = request.metadata;
    const said = m.estimatedCost ?? m.estimated_cost;
    if (typeof said === "string" && said.trim() !== "") details.estimatedCost = said.trim();
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
