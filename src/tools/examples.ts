// The four example tools of pattern 3, with the seed's thresholds. Their bodies only describe what
// they would do; a real deployment wires its own effects in the same shape.
import { z } from "zod";
import type { HitlConfig } from "./config.js";
import { type HitlCall, hitlTool } from "./hitl-tool.js";

/** Options shared by every example tool: the gate, the audit sink, the mode. */
export type ExampleToolOptions = Pick<
  HitlConfig,
  "airlock" | "record" | "blocking" | "timeoutMs" | "approvers" | "requester"
>;

export interface SignContractArgs {
  contractId: string;
  amount: number;
}
export interface DeleteProjectArgs {
  projectId: string;
}
export interface ApproveExpenseArgs {
  expenseId: string;
  amount: number;
}
export interface SendBulkNotificationArgs {
  recipients: string[];
  message: string;
}

// Each tool's input schema: sent with its requests as `argsSchema`, so a reviewer's edit of the
// wrong type is refused wherever it is made, and the approved args are parsed with it.
const signContractSchema = z.object({ contractId: z.string().min(1), amount: z.number() });
const deleteProjectSchema = z.object({ projectId: z.string().min(1) });
const approveExpenseSchema = z.object({ expenseId: z.string().min(1), amount: z.number() });
const sendBulkNotificationSchema = z.object({
  recipients: z.array(z.string()),
  message: z.string(),
});

const approvedBy = (call: HitlCall) => call.decision?.reviewer ?? "auto";

export function createExampleTools(options: ExampleToolOptions = {}) {
  const signContract = hitlTool(
    async (args: SignContractArgs, call) => ({
      status: "signed" as const,
      contractId: args.contractId,
      amount: args.amount,
      approvedBy: approvedBy(call),
    }),
    {
      ...options,
      name: "sign_contract",
      schema: signContractSchema,
      approvalType: "contract",
      riskLevel: "high",
      autoThreshold: 95,
      quickThreshold: 70,
      requiresReason: true,
      descriptionTemplate: "Sign contract {contractId} for {amount} USD",
    },
  );
  const deleteProject = hitlTool(
    async (args: DeleteProjectArgs, call) => ({
      status: "deleted" as const,
      projectId: args.projectId,
      approvedBy: approvedBy(call),
    }),
    {
      ...options,
      name: "delete_project",
      schema: deleteProjectSchema,
      approvalType: "deletion",
      riskLevel: "high",
      autoThreshold: 90,
      quickThreshold: 60,
      requiresReason: true,
      approveLabel: "Delete",
      descriptionTemplate: "Delete project {projectId}",
    },
  );
  const approveExpense = hitlTool(
    async (args: ApproveExpenseArgs, call) => ({
      status: "approved" as const,
      expenseId: args.expenseId,
      amount: args.amount,
      approvedBy: approvedBy(call),
    }),
    {
      ...options,
      name: "approve_expense",
      schema: approveExpenseSchema,
      approvalType: "expense",
      riskLevel: "medium",
      autoThreshold: 85,
      quickThreshold: 65,
      requiresReason: false,
      descriptionTemplate: "Approve expense {expenseId} of {amount} USD",
    },
  );
  const sendBulkNotification = hitlTool(
    async (args: SendBulkNotificationArgs, call) => ({
      status: "sent" as const,
      recipients: args.recipients.length,
      approvedBy: approvedBy(call),
    }),
    {
      ...options,
      name: "send_bulk_notification",
      schema: sendBulkNotificationSchema,
      approvalType: "notification",
      riskLevel: "low",
      autoThreshold: 80,
      quickThreshold: 50,
      requiresReason: false,
      approveLabel: "Send",
      descriptionTemplate: "Send {message} to {recipients}",
    },
  );
  return { signContract, deleteProject, approveExpense, sendBulkNotification };
}

export type ExampleTools = ReturnType<typeof createExampleTools>;

/** The four example tools as a list, for registering with an agent. */
export function getHitlTools(options: ExampleToolOptions = {}): ExampleTools[keyof ExampleTools][] {
  const t = createExampleTools(options);
  return [t.signContract, t.deleteProject, t.approveExpense, t.sendBulkNotification];
}
