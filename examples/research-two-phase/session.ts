// The research session: the workflow's state (the authoritative context during a run), what is
// persisted, and the events streamed to the UI.

export type SessionStatus =
  | "planning"
  | "awaiting_approval"
  | "running"
  | "completed"
  | "declined"
  | "cancelled"
  | "failed";

export interface ResearchSettings {
  /** The largest single change to the report, in characters. */
  max_update_size: number;
  max_search_results_per_query: number;
  max_sources: number;
}

export interface ResearchPlanRecord {
  clarifying_questions: string[];
  expanded_queries: string[];
  outline: string[];
}

/** A clarifying question of the plan and the reviewer's answer (their `respond` decision). */
export interface ClarificationRecord {
  question: string;
  answer: string;
}

export interface SourceRecord {
  ref: number;
  url: string;
  title: string;
  retrieved_at: string;
  snippet: string;
  /** The queries that found it. */
  found_by: string[];
}

export interface ArtifactRecord {
  name: string;
  kind: "markdown" | "text";
  source_url: string;
  bytes: number;
  sections: number;
}

export interface ResearchSession {
  research_id: string;
  status: SessionStatus;
  initial_query: string;
  settings: ResearchSettings;
  plan: ResearchPlanRecord | null;
  /** The reviewer's answers to the plan's clarifying questions, when they answered them: the plan
   * and the report were made for these. */
  clarifications?: ClarificationRecord[];
  /** The gate the questions were answered on, and who answered. */
  questions?: { request_id: string; answered_by?: string };
  approval: {
    request_id: string;
    status: string;
    approved_queries: string[];
    reviewer?: string;
    comment?: string;
  } | null;
  sources: SourceRecord[];
  artifacts: ArtifactRecord[];
  report_markdown: string;
  /** The event stream in short: types and tools, without the report bodies. */
  events: { seq: number; type: ResearchEvent["type"]; tool?: string }[];
  updated_at: string;
}

interface EventBase {
  research_id: string;
  seq: number;
  at: number;
}

export type ResearchEvent = EventBase &
  (
    | { type: "tool_call"; tool: string; args: Record<string, unknown> }
    | { type: "tool_result"; tool: string; result: Record<string, unknown> }
    | { type: "report_updated"; section: string; chunk: number; report_markdown: string }
    | { type: "stop"; status: SessionStatus; message: string; report_markdown: string }
    | { type: "cancelled"; reason: string }
  );

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An event as it is emitted, before the stream numbers and stamps it. */
export type ResearchEventInput = DistributiveOmit<ResearchEvent, keyof EventBase>;
