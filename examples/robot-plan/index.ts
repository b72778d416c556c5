// Pattern 2: an operator's command becomes an intent, then plan steps; a blocking gate holds the plan
// until a human approves, asks for a revision, declines, or the deadline passes.
//   approved → verifier;  revise → re-plan with the comments (a new request, `revisionOf` the old);
//   declined, timed out, cancelled → fallback with a clear message.
import type { Logger } from "pino";
import { reviewTimeoutMs } from "../../src/channels/console.js";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { createPlanner, isPlannerError, type Planner, type RobotIntent } from "../planner/index.js";
import { type Gate, type Log, newRunId, quiet } from "../shared/gate.js";
import { buildPlan, CELL_POSITIONS, type PlanStep } from "./cell.js";
import type { PlanReviewer } from "./review.js";
import { type Verification, verifyPlan } from "./verifier.js";

export { buildPlan, CELL_POSITIONS, type PlanStep } from "./cell.js";
export { type ConsoleReviewerOptions, consoleReviewer, type PlanReviewer } from "./review.js";
export { type Verification, verifyPlan } from "./verifier.js";

export const PLAN_ACTION = "robot.execute_plan";

export type HumanDecision = "approved" | "revision" | "declined" | "timeout" | "cancelled";

export interface RobotPlanOptions {
  airlock: Gate;
  planner?: Planner;
  log?: Log;
  signal?: AbortSignal;
  /** @default "weld at position 1 and 2" */
  command?: string;
  /** Decides each plan in-process (e.g. `consoleReviewer`); without it, the inbox or CLI decides. */
  reviewer?: PlanReviewer;
  /** Each review's deadline. @default HUMAN_REVIEW_TIMEOUT seconds, else 120 s */
  timeoutMs?: number;
  /** Revisions allowed before giving up. @default 3 */
  maxRevisions?: number;
  /** JSON log lines of the human_review node, with `correlation_id`. */
  logger?: Logger;
  correlationId?: string;
  /** Part of the gates' idempotency keys. @default random */
  runId?: string;
  /** Who the gates name as requester. Against a server it must be the agent token's name (the
   * server refuses any other). @default "robot-planner" */
  requester?: string;
}

export interface ReviewRecord {
  requestId: string;
  revisionOf?: string;
  decision: HumanDecision;
  comments: string | null;
  steps: number;
  durationMs: number;
}

export interface ReviewMetrics {
  reviews: number;
  /** approved / (approved + declined), null when neither happened. */
  approvalRate: number | null;
  revisionRate: number;
  timeoutRate: number;
  meanReviewMs: number;
}

export interface RobotPlanResult {
  correlationId: string;
  command: string;
  /** Where the workflow went: the verifier (approved), or the fallback. */
  route: "verify" | "fallback";
  /** True only when a human approved and the verifier passed: the plan may run. */
  readyToExecute: boolean;
  humanDecision: HumanDecision | null;
  humanComments: string | null;
  intent?: RobotIntent;
  plan: PlanStep[];
  verification?: Verification;
  message: string;
  reviews: ReviewRecord[];
  metrics: ReviewMetrics;
}

const DECISION_BY_STATUS: Record<string, HumanDecision> = {
  approved: "approved",
  revise: "revision",
  rejected: "declined",
  timed_out: "timeout",
  cancelled: "cancelled",
};

export async function runRobotPlan(opts: RobotPlanOptions): Promise<RobotPlanResult> {
  const log = opts.log ?? quiet;
  const planner = opts.planner ?? createPlanner();
  const command = opts.command ?? "weld at position 1 and 2";
  const timeoutMs = opts.timeoutMs ?? reviewTimeoutMs(process.env);
  const maxRevisions = opts.maxRevisions ?? 3;
  const runId = opts.runId ?? newRunId();
  const correlationId = opts.correlationId ?? `robot-${runId}`;
  const jlog = opts.logger?.child({ service: "human_review" });
  const reviews: ReviewRecord[] = [];
  const feedback: string[] = [];
  let previous: ApprovalRequest | undefined;
  let intent: RobotIntent | undefined;
  let plan: PlanStep[] = [];

  const finish = (
    route: RobotPlanResult["route"],
    message: string,
    extra: Partial<RobotPlanResult> = {},
  ): RobotPlanResult => {
    log(`${route}: ${message}`);
    const last = reviews[reviews.length - 1];
    const result: RobotPlanResult = {
      correlationId,
      command,
      route,
      readyToExecute: false,
      humanDecision: last?.decision ?? null,
      humanComments: last?.comments ?? null,
      plan,
      message,
      reviews,
      metrics: metricsOf(reviews),
      ...extra,
    };
    if (intent) result.intent = intent;
    return result;
  };

  log(`command: "${command}" (correlation id ${correlationId})`);
  for (let revision = 0; ; revision++) {
    try {
      intent = await planner.parseIntent({
        command,
        feedback,
        knownPositions: [...CELL_POSITIONS],
      });
    } catch (err) {
      if (!isPlannerError(err)) throw err;
      return finish("fallback", `Could not understand the command: ${err.message}`);
    }
    const before = plan;
    plan = buildPlan(intent);
    // A revision whose comments the planner could not turn into a change gives the same plan: say so
    // rather than claim to have re-planned.
    const unchanged = revision > 0 && samePlan(before, plan);
    log(
      `plan${revision ? ` (revision ${revision})` : ""}: ${intent.task} at ${intent.positions.map((p) => `Pos_${p}`).join(", ") || "no position"}, ${plan.length} steps${unchanged ? ` (unchanged: the ${planner.name} planner found nothing to change in "${feedback[feedback.length - 1] ?? ""}")` : ""}`,
    );

    const request = await opts.airlock.request({
      key: `robot-plan:${runId}:${revision}`,
      action: PLAN_ACTION,
      title: `Robot plan: ${command}${revision ? ` (revision ${revision})` : ""}`,
      summary: unchanged
        ? `The ${planner.name} planner found nothing to change in the operator's comment "${feedback[feedback.length - 1] ?? ""}": this is the same plan as before. Approve it, decline it, or revise with another wording (e.g. "skip position 2").`
        : feedback.length
          ? `Re-planned after the operator's comments: ${feedback.map((f) => `"${f}"`).join(", ")}.`
          : `Plan generated by the ${planner.name} planner.`,
      items: plan.map((s) => ({ id: `step-${s.id}`, label: s.name })),
      args: { command, intent, plan },
      allowed: ["approve", "revise", "reject"],
      risk: "high",
      requester: opts.requester ?? "robot-planner",
      timeoutMs,
      correlationId,
      metadata: { command, revision, feedback },
      ...(previous ? { revisionOf: previous.id } : {}),
    });
    jlog?.info(
      {
        correlation_id: correlationId,
        request_id: request.id,
        timeout_seconds: Math.round(timeoutMs / 1000),
      },
      "Presenting plan for human review",
    );
    log(
      `review: waiting on request ${request.id}${previous ? ` (revision of ${previous.id})` : ""}, timeout ${seconds(timeoutMs)} s`,
    );
    // An in-process reviewer (the console) runs beside the wait and is waited for too, so the
    // terminal has finished its exchange (or printed its timeout) before the next plan is shown.
    // The gate's deadline bounds both.
    const reviewing = opts.reviewer?.(request, opts.airlock).catch((err: unknown) => {
      log(`review: the in-process reviewer failed: ${err instanceof Error ? err.message : err}`);
    });
    const [settled] = await Promise.all([
      opts.airlock.waitFor(request.id, opts.signal ? { signal: opts.signal } : {}),
      reviewing,
    ]);
    const decision = DECISION_BY_STATUS[settled.status] ?? "cancelled";
    const comments = settled.decision?.comment ?? null;
    const record: ReviewRecord = {
      requestId: settled.id,
      decision,
      comments: decision === "revision" ? (comments ?? "") : null,
      steps: plan.length,
      durationMs: (settled.decision?.decidedAt ?? Date.now()) - settled.createdAt,
    };
    if (settled.revisionOf) record.revisionOf = settled.revisionOf;
    reviews.push(record);
    if (decision === "timeout") {
      jlog?.warn({ correlation_id: correlationId, request_id: settled.id }, "Human review timeout");
    } else {
      jlog?.info(
        {
          correlation_id: correlationId,
          request_id: settled.id,
          decision,
          review_duration_ms: record.durationMs,
        },
        "Human decision recorded",
      );
    }
    log(
      `review: ${decision}${record.comments ? ` ("${record.comments}")` : ""}${settled.decision?.reviewer && decision !== "timeout" ? ` by ${settled.decision.reviewer}` : ""}`,
    );

    switch (decision) {
      case "approved": {
        const verification = verifyPlan(plan);
        if (!verification.ok) {
          return finish("fallback", `Plan failed verification: ${verification.errors.join("; ")}`, {
            verification,
          });
        }
        log(`verify: ${plan.length} steps pass the cell's constraints`);
        return finish(
          "verify",
          `Plan approved and verified: ${plan.length} steps ready to execute`,
          {
            verification,
            readyToExecute: true,
          },
        );
      }
      case "revision":
        if (revision + 1 > maxRevisions) {
          return finish(
            "fallback",
            `Gave up after ${maxRevisions} revisions without an approved plan; the task was not executed`,
          );
        }
        feedback.push(record.comments ?? "");
        previous = settled;
        continue;
      case "declined":
        return finish("fallback", "Task declined by operator; nothing was executed");
      case "timeout":
        return finish(
          "fallback",
          `Human review timed out after ${seconds(timeoutMs)} seconds with no response; the task was not executed`,
        );
      default:
        return finish("fallback", "The review was cancelled; the task was not executed");
    }
  }
}

function seconds(ms: number): number {
  return Number((ms / 1000).toFixed(ms < 10_000 ? 1 : 0));
}

export function metricsOf(reviews: readonly ReviewRecord[]): ReviewMetrics {
  const count = (d: HumanDecision) => reviews.filter((r) => r.decision === d).length;
  const approved = count("approved");
  const declined = count("declined");
  const n = reviews.length;
  const rate = (k: number) => (n ? Math.round((k / n) * 100) / 100 : 0);
  return {
    reviews: n,
    approvalRate:
      approved + declined ? Math.round((approved / (approved + declined)) * 100) / 100 : null,
    revisionRate: rate(count("revision")),
    timeoutRate: rate(count("timeout")),
    meanReviewMs: n ? Math.round(reviews.reduce((s, r) => s + r.durationMs, 0) / n) : 0,
  };
}

function samePlan(a: PlanStep[], b: PlanStep[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
