// `airlock-hitl/tools`: the types of wrapped tools beyond the root's (`hitlTool`, `HitlConfig`, the
// guards), and the example tools of pattern 3 (sign_contract, delete_project, approve_expense,
// send_bulk_notification). Named exports only.
export type { JsonSchema, StandardSchema, ToolSchema } from "./args-schema.js";
export type { HitlGate, PublicHitlConfig, ResolvedHitlConfig, RespondOption } from "./config.js";
export { createExampleTools, getHitlTools } from "./examples.js";
export type { HitlCall, HitlContext, HitlTool } from "./hitl-tool.js";
export type { HitlPending, HitlRejection, HitlResponse, HitlResult } from "./results.js";
export { isHitlResponse } from "./results.js";
