// `airlock/langgraph`: Airlock as the approval layer of LangGraph.js (`@langchain/langgraph` 1.x, an
// optional peer dependency). See the README's "LangGraph" section and examples/adapters/langgraph.
export {
  airlockGate,
  type GateApi,
  type GateInput,
  type GateInterruptValue,
  type GateLocation,
  type GateResult,
  type GateResumeValue,
  gateKey,
  gateLocation,
  isGateInterrupt,
} from "./langgraph/gate.js";
export {
  airlockToHitlResponse,
  type HitlActionRequest,
  type HitlBridgeOptions,
  type HitlDecision,
  type HitlDecisionType,
  type HitlLocation,
  type HitlRequest,
  type HitlResponse,
  type HitlReviewConfig,
  type HitlToAirlockOptions,
  hitlKey,
  hitlToAirlock,
  isHitlRequest,
} from "./langgraph/hitl.js";
export {
  type ResumableGraph,
  type ResumeOnDecisionOptions,
  type Resumer,
  type ResumerApi,
  type ResumeThreadOptions,
  type ResumeThreadResult,
  resumeOnDecision,
  resumeThread,
} from "./langgraph/resumer.js";
