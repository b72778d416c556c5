// `airlock/ai-sdk`: Airlock as the approval layer of the Vercel AI SDK (`ai` 7.x, an optional peer
// dependency). See `airlockToolApproval` in ai-sdk/tool-approval.ts.
export type { Answer } from "./ai-sdk/answer.js";
export type { ResponsesOptions, ResponsesResult } from "./ai-sdk/messages.js";
export { approvalKey, type ToolGate } from "./ai-sdk/request.js";
export {
  type AirlockApprovalFunction,
  type AirlockToolApproval,
  type AirlockToolApprovalOptions,
  type ApprovalMode,
  airlockToolApproval,
} from "./ai-sdk/tool-approval.js";
export type {
  ApplyDecisionsOptions,
  ApplyDecisionsResult,
  ChatMessage,
} from "./ai-sdk/ui-messages.js";
