// Pattern 3: an agent loop calling HITL-wrapped tools with different contexts. Each call is scored
// (base score per tool, admin +10, verified workspace +5, amount > 1000 −15, bulk −10) and routed:
// auto runs at once and is audited; quick and full return a pending marker with the gate's id, and the
// agent resumes each marker once a human decided (executed with the approved arguments, or a
// rejection the model must not retry).
import { calculateConfidence, determineApprovalLevel } from "../../src/policy/confidence.js";
import type {
  ApproveExpenseArgs,
  DeleteProjectArgs,
  SendBulkNotificationArgs,
  SignContractArgs,
} from "../../src/tools/examples.js";
import { getHitlConfig, type HitlContext } from "../../src/tools/hitl-tool.js";
import { type HitlPending, isHitlPending, isHitlRejection } from "../../src/tools/results.js";
import { errorMessage, type Gate, type Log, newRunId, quiet } from "../shared/gate.js";
import { type AgentTools, createAgentTools, type UpdateTaskStatusArgs } from "./tools.js";

export { type AgentTools, createAgentTools, type UpdateTaskStatusArgs } from "./tools.js";

export type ToolName =
  | "update_task_status"
  | "send_bulk_notification"
  | "approve_expense"
  | "sign_contract"
  | "delete_project";

/** One tool call the agent makes: the tool, its arguments (typed per tool), and the caller's context. */
export type PlannedCall = {
  context: HitlContext;
  /** Why the agent makes this call, for the log. */
  why: string;
} & (
  | { tool: "update_task_status"; args: UpdateTaskStatusArgs }
  | { tool: "send_bulk_notification"; args: SendBulkNotificationArgs }
  | { tool: "approve_expense"; args: ApproveExpenseArgs }
  | { tool: "sign_contract"; args: SignContractArgs }
  | { tool: "delete_project"; args: DeleteProjectArgs }
);

/** Six calls covering every level: one auto, two quick, three full. */
export function defaultCalls(): PlannedCall[] {
  return [
    {
      why: "routine status change by a team member",
      tool: "update_task_status",
      args: { taskId: "T-118", status: "done" },
      context: { userId: "u-7", userRole: "member", sessionToken: "tok-example-7f3a" },
    },
    {
      why: "announcement by a verified admin",
      tool: "send_bulk_notification",
      args: { recipients: ["team-a", "team-b", "team-c"], message: "Release 2.4 ships Friday" },
      context: { userId: "u-1", userRole: "admin", workspaceVerified: true },
    },
    {
      why: "small expense in a verified workspace",
      tool: "approve_expense",
      args: { expenseId: "EXP-310", amount: 240 },
      context: { userId: "u-7", userRole: "member", workspaceVerified: true },
    },
    {
      why: "large expense, unknown role",
      tool: "approve_expense",
      args: { expenseId: "EXP-311", amount: 4800 },
      context: { userId: "u-9" },
    },
    {
      why: "large contract signed by an admin",
      tool: "sign_contract",
      args: { contractId: "C-2025-044", amount: 12_000 },
      context: { userId: "u-1", userRole: "admin" },
    },
    {
      why: "destructive action in a verified workspace",
      tool: "delete_project",
      args: { projectId: "P-legacy-crm" },
      context: { userId: "u-1", userRole: "admin", workspaceVerified: true },
    },
  ];
}

export type CallOutcome = "auto_executed" | "executed" | "rejected" | "failed";

export interface CallReport {
  tool: ToolName;
  args: PlannedCall["args"];
  level: "auto" | "quick" | "full";
  confidence: number;
  outcome: CallOutcome;
  /** What the tool returned first: its result (auto) or the pending marker (quick, full). */
  first: unknown;
  /** The final result: the tool's output, or the rejection. */
  result?: unknown;
  approvalId?: string;
  error?: string;
}

export interface HitlToolsOptions {
  airlock: Gate;
  log?: Log;
  signal?: AbortSignal;
  calls?: PlannedCall[];
  /** The gates' deadline. @default none */
  timeoutMs?: number;
  /** Part of the gates' idempotency keys. @default random */
  runId?: string;
  /** Who the gates name as requester. Against a server it must be the agent token's name (the
   * server refuses any other). @default "hitl-agent" */
  requester?: string;
}

export interface HitlToolsResult {
  calls: CallReport[];
  counts: Record<"auto" | "quick" | "full", number>;
}

export async function runHitlTools(opts: HitlToolsOptions): Promise<HitlToolsResult> {
  const log = opts.log ?? quiet;
  const runId = opts.runId ?? newRunId();
  const tools = createAgentTools({
    airlock: opts.airlock,
    requester: opts.requester ?? "hitl-agent",
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
  });
  const calls = opts.calls ?? defaultCalls();

  // Round 1: the agent calls every tool; auto calls run now, the others come back as markers.
  const reports: CallReport[] = [];
  for (const [i, call] of calls.entries()) {
    const context: HitlContext = { ...call.context, key: `hitl-tools:${runId}:${i}` };
    let first: unknown;
    try {
      first = await invoke(tools, call, context);
    } catch (err) {
      // One failing tool does not stop the agent: it is reported, and the loop goes on.
      const report = failedReport(call, errorMessage(err), tools);
      reports.push(report);
      log(`${call.tool}: failed: ${report.error}`);
      continue;
    }
    const report = firstReport(call, first, tools);
    reports.push(report);
    log(
      report.outcome === "auto_executed"
        ? `${call.tool}: confidence ${report.confidence} → auto, executed and audited (${call.why})`
        : `${call.tool}: confidence ${report.confidence} → ${report.level} approval, pending marker for request ${report.approvalId} (${call.why})`,
    );
  }

  // Round 2: resume every pending call as its decision arrives, in whatever order humans decide.
  await Promise.all(
    reports.map(async (report) => {
      if (!report.approvalId) return;
      const tool = toolByName(tools, report.tool);
      try {
        const result: unknown = await tool.resume(report.approvalId, {
          wait: true,
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        report.result = result;
        if (isHitlRejection(result)) {
          report.outcome = "rejected";
          log(`${report.tool}: not executed: ${result.reason}`);
        } else {
          report.outcome = "executed";
          log(`${report.tool}: approved and executed → ${JSON.stringify(result)}`);
        }
      } catch (err) {
        report.outcome = "failed";
        report.error = errorMessage(err);
        log(`${report.tool}: failed: ${report.error}`);
      }
    }),
  );

  const counts = { auto: 0, quick: 0, full: 0 };
  for (const r of reports) counts[r.level]++;
  const failed = reports.filter((r) => r.outcome === "failed").length;
  log(
    `done: ${counts.auto} auto, ${counts.quick} quick, ${counts.full} full${failed ? ` (${failed} failed)` : ""}`,
  );
  return { calls: reports, counts };
}

function failedReport(call: PlannedCall, error: string, tools: AgentTools): CallReport {
  return {
    tool: call.tool,
    args: call.args,
    ...scoreOf(call, tools),
    outcome: "failed",
    first: undefined,
    error,
  };
}

/** The score and level the tool's wrapper gives this call, to show why it went where it went. */
function scoreOf(call: PlannedCall, tools: AgentTools): Pick<CallReport, "confidence" | "level"> {
  const cfg = getHitlConfig(toolByName(tools, call.tool));
  const confidence = calculateConfidence(call.tool, { ...call.args }, call.context);
  return { confidence, level: determineApprovalLevel(confidence, cfg) };
}

function firstReport(call: PlannedCall, first: unknown, tools: AgentTools): CallReport {
  if (isHitlPending(first)) {
    const marker: HitlPending = first;
    const report: CallReport = {
      tool: call.tool,
      args: call.args,
      level: marker.hitl_result.approvalLevel,
      confidence: marker.hitl_result.confidenceScore,
      outcome: "failed",
      first,
    };
    if (marker.hitl_result.approvalId) report.approvalId = marker.hitl_result.approvalId;
    else report.error = "pending marker without an approval id";
    return report;
  }
  // The tool ran at once.
  return {
    tool: call.tool,
    args: call.args,
    ...scoreOf(call, tools),
    outcome: "auto_executed",
    first,
    result: first,
  };
}

type AnyTool = AgentTools[keyof AgentTools];

/** Calls the tool with its own argument type (the union narrows per case). */
function invoke(tools: AgentTools, call: PlannedCall, context: HitlContext): Promise<unknown> {
  switch (call.tool) {
    case "update_task_status":
      return tools.updateTaskStatus({ ...call.args, _hitlContext: context });
    case "send_bulk_notification":
      return tools.sendBulkNotification({ ...call.args, _hitlContext: context });
    case "approve_expense":
      return tools.approveExpense({ ...call.args, _hitlContext: context });
    case "sign_contract":
      return tools.signContract({ ...call.args, _hitlContext: context });
    case "delete_project":
      return tools.deleteProject({ ...call.args, _hitlContext: context });
  }
}

function toolByName(tools: AgentTools, name: ToolName): AnyTool {
  switch (name) {
    case "update_task_status":
      return tools.updateTaskStatus;
    case "send_bulk_notification":
      return tools.sendBulkNotification;
    case "approve_expense":
      return tools.approveExpense;
    case "sign_contract":
      return tools.signContract;
    case "delete_project":
      return tools.deleteProject;
  }
}
