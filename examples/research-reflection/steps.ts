// The pipeline's fixed steps around the approval gate (pattern 1): analyse the sub-questions, generate
// a reflection (no searches yet), and execute only the searches a human approved.
import type { Finding, Planner, Reflection } from "../planner/index.js";
import { LOW_CONFIDENCE } from "../planner/rule-based.js";
import type { SearchIndex } from "../shared/search-index.js";
import type { ApprovalDecision } from "./approval.js";

export interface ResearchState {
  main_query: string;
  findings: Finding[];
  reflection_metadata?: ReflectionMetadata;
}

/** What the reflection leaves in the final state (the seed's `ReflectionMetadata`). */
export interface ReflectionMetadata {
  critique_summary: string[];
  additional_questions_identified: string[];
  /** The queries actually searched: only approved ones. */
  searches_performed: string[];
  /** Findings that gained a source or confidence. */
  improvements_made: number;
  /** The decision's method: approve_all, select, skip, auto, no_items, error, parse_error, timeout... */
  user_decision: string;
  reviewer_notes: string;
}

export interface ReflectionOutput {
  state: ResearchState;
  reflection: Reflection;
}

/** Below this confidence a finding counts as a low-confidence area (the offline planner's threshold). */
export { LOW_CONFIDENCE };

/** Answers each sub-question from the collection; confidence is how much of the question the best
 * document covers. */
export function analyse(
  mainQuery: string,
  subQuestions: readonly string[],
  index: SearchIndex,
  resultsPerQuestion = 2,
): ResearchState {
  const findings = subQuestions.map((question): Finding => {
    const hits = index.search(question, resultsPerQuestion);
    const best = hits[0];
    return {
      question,
      answer: best ? best.snippet : "No source found.",
      confidence: best ? best.coverage : 0,
      sources: hits.map((h) => h.url),
    };
  });
  return { main_query: mainQuery, findings };
}

export async function generateReflection(
  state: ResearchState,
  planner: Planner,
  maxQueries: number,
): Promise<ReflectionOutput> {
  const reflection = await planner.reflect({
    mainQuery: state.main_query,
    findings: state.findings,
    maxQueries,
  });
  return { state, reflection };
}

export interface ProgressSummary {
  completedCount: number;
  avgConfidence: number;
  lowConfidenceCount: number;
}

export function summarizeProgress(state: ResearchState): ProgressSummary {
  const n = state.findings.length;
  const avg = n ? state.findings.reduce((s, f) => s + f.confidence, 0) / n : 0;
  return {
    completedCount: n,
    avgConfidence: Math.round(avg * 100) / 100,
    lowConfidenceCount: state.findings.filter((f) => f.confidence < LOW_CONFIDENCE).length,
  };
}

/** Runs the approved searches (none when not approved) and records the decision in the state. */
export function executeApprovedSearches(
  output: ReflectionOutput,
  decision: ApprovalDecision,
  index: SearchIndex,
  resultsPerSearch: number,
  log: (line: string) => void,
): ResearchState {
  const findings = output.state.findings.map((f) => ({ ...f, sources: [...f.sources] }));
  const improved = new Set<number>();
  const performed: string[] = [];
  const queries = decision.approved ? decision.selectedQueries : [];
  for (const query of queries) {
    const hits = index.search(query, resultsPerSearch);
    performed.push(query);
    log(`search: "${query}" → ${hits.length} result${hits.length === 1 ? "" : "s"}`);
    const target = closestFinding(findings, query);
    if (target === undefined) continue;
    const finding = findings[target];
    if (!finding) continue;
    for (const hit of hits) {
      if (finding.sources.includes(hit.url)) continue;
      finding.sources.push(hit.url);
      finding.answer = `${finding.answer} ${hit.snippet}`;
      improved.add(target);
    }
    // Confidence is measured against the question itself, whatever words the follow-up used.
    const bestCoverage = Math.max(
      0,
      ...finding.sources.map((url) => index.coverage(url, finding.question)),
    );
    if (bestCoverage > finding.confidence) {
      finding.confidence = bestCoverage;
      improved.add(target);
    }
  }
  if (queries.length === 0) log("search: no additional searches approved");
  return {
    main_query: output.state.main_query,
    findings,
    reflection_metadata: {
      critique_summary: output.reflection.critique.map((c) => c.issue),
      additional_questions_identified: output.reflection.additionalQuestions,
      searches_performed: performed,
      improvements_made: improved.size,
      user_decision: decision.approvalMethod,
      reviewer_notes: decision.reviewerNotes,
    },
  };
}

/** The finding a follow-up query is about: the one sharing the most words with it. */
function closestFinding(findings: readonly Finding[], query: string): number | undefined {
  const words = new Set(query.toLowerCase().split(/\W+/));
  let best: number | undefined;
  let bestShared = 0;
  findings.forEach((f, i) => {
    const shared = f.question
      .toLowerCase()
      .split(/\W+/)
      .filter((w) => w.length > 3 && words.has(w)).length;
    if (shared > bestShared) {
      best = i;
      bestShared = shared;
    }
  });
  return best;
}
