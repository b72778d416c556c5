// `airlock/openai-agents`: Airlock as the approval layer of the OpenAI Agents SDK (`@openai/agents`, an
// optional peer dependency). See src/adapters/openai-agents/ for each part.
export {
  DEFAULT_KEY_PREFIX,
  DEFAULT_REQUESTER,
  type GateMetadata,
  type GateOptions,
  type ToolCall,
} from "./openai-agents/gate.js";
export {
  type AirlockApprovalFunction,
  airlockNeedsApproval,
  type NeedsApprovalOptions,
} from "./openai-agents/needs-approval.js";
export {
  DEFAULT_MAX_STATE_BYTES,
  type ParkedTurn,
  type ParkOptions,
  parkInterruptions,
} from "./openai-agents/park.js";
export {
  type ApproveOptions,
  approveInterruptions,
  RESUME_KEY_PREFIX,
  type ResumeOptions,
  type ResumeOutcome,
  resumeRun,
} from "./openai-agents/resume.js";
export {
  type ResumeOnDecisionOptions,
  type Resumer,
  type ResumerApi,
  resumeOnDecision,
} from "./openai-agents/resumer.js";
