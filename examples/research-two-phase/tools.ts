// The research tools. Phase A has one, `decompose_query`, which never searches. Phase B's tools
// (`web_search`, `fetch_url`, `parse_content`, `update_report`) can only be created from an approved
// plan request, checked with `verifyApproval`: before approval they do not exist.
import { verifyApproval } from "../../src/core/binding.js";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import type { Clarification, Planner, ResearchPlan } from "../planner/index.js";
import type { SearchHit } from "../shared/search-index.js";
import { type Collection, type Fetched, type Parsed, parseContent } from "./collection.js";
import { updateReport } from "./report.js";

/** Plans the research (no search); with the reviewer's answers to the clarifying questions, plans
 * for them. */
export function decomposeQuery(
  planner: Planner,
  query: string,
  maxQueries: number,
  clarifications: Clarification[] = [],
): Promise<ResearchPlan> {
  return planner.planResearch({
    query,
    maxQueries,
    ...(clarifications.length ? { clarifications } : {}),
  });
}

export class ApprovalRequiredError extends Error {
  constructor(detail: string) {
    super(`phase B needs an approved plan: ${detail}`);
    this.name = "ApprovalRequiredError";
  }
}

export interface ExecutionTools {
  /** The queries the reviewer approved (all of them, or the selected ones). */
  readonly approvedQueries: readonly string[];
  webSearch(query: string, maxResults: number): SearchHit[];
  fetchUrl(url: string): Fetched;
  parseContent(fetched: Fetched): Parsed;
  updateReport(report: string, heading: string, text: string, maxUpdateSize: number): string;
}

export function createExecutionTools(
  approval: ApprovalRequest,
  collection: Collection,
): ExecutionTools {
  const check = verifyApproval(approval);
  if (!check.ok) throw new ApprovalRequiredError(check.detail);
  const approvedQueries = approvedQueriesOf(approval, check.args);
  return {
    approvedQueries,
    webSearch(query, maxResults) {
      if (!approvedQueries.includes(query)) {
        throw new ApprovalRequiredError(`the query "${query}" was not approved`);
      }
      return collection.index.search(query, maxResults);
    },
    fetchUrl: (url) => collection.fetch(url),
    parseContent: (fetched) => parseContent(fetched.text, fetched.content_type),
    updateReport,
  };
}

/** The selected items' labels, in plan order; all of the plan's queries when nothing was selected. */
function approvedQueriesOf(approval: ApprovalRequest, args: Record<string, unknown>): string[] {
  const plan = args.plan as { expanded_queries?: unknown } | undefined;
  const planned = Array.isArray(plan?.expanded_queries)
    ? plan.expanded_queries.filter((q): q is string => typeof q === "string")
    : [];
  const selected = approval.decision?.selected;
  if (!selected) return planned;
  const labels = new Set(approval.items.filter((i) => selected.includes(i.id)).map((i) => i.label));
  return planned.filter((q) => labels.has(q));
}
