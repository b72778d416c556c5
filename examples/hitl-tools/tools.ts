// The tools the pattern-3 agent may call: the four example tools of src/tools, plus a routine
// `update_task_status`. The four example tools cannot run without a human under the seed's scores (the
// best case, `send_bulk_notification` by a verified admin, scores 75 against its auto threshold of 80),
// so the routine tool (base score 85, default thresholds) shows auto-execution with audit.
import type { ExampleToolOptions } from "../../src/tools/examples.js";
import { createExampleTools } from "../../src/tools/examples.js";
import { type HitlCall, hitlTool } from "../../src/tools/hitl-tool.js";

export interface UpdateTaskStatusArgs {
  taskId: string;
  status: string;
}

export function createAgentTools(options: ExampleToolOptions) {
  const updateTaskStatus = hitlTool(
    async (args: UpdateTaskStatusArgs, call: HitlCall) => ({
      status: "updated" as const,
      taskId: args.taskId,
      newStatus: args.status,
      approvedBy: call.decision?.reviewer ?? "auto",
    }),
    {
      ...options,
      name: "update_task_status",
      approvalType: "task",
      riskLevel: "low",
      descriptionTemplate: "Set task {taskId} to {status}",
    },
  );
  return { ...createExampleTools(options), updateTaskStatus };
}

export type AgentTools = ReturnType<typeof createAgentTools>;
