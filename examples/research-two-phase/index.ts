// Pattern 5: the two-phase research workflow (see workflow.ts).
export {
  CORPUS_DIR,
  type Collection,
  openCollection,
  parseContent,
} from "./collection.js";
export { chunkText, reportSkeleton, updateReport } from "./report.js";
export type {
  ResearchEvent,
  ResearchSession,
  ResearchSettings,
  SessionStatus,
} from "./session.js";
export {
  jsonFileSessionStore,
  memorySessionStore,
  RESEARCH_COLLECTION,
  type SessionStore,
} from "./session-store.js";
export { ApprovalRequiredError, createExecutionTools } from "./tools.js";
export {
  DEFAULT_QUERY,
  DEFAULT_SETTINGS,
  PLAN_ACTION,
  type ResearchTwoPhaseOptions,
  type ResearchTwoPhaseResult,
  runResearchTwoPhase,
} from "./workflow.js";
