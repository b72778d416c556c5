// The five patterns as runnable examples, for `airlock demo NAME` and the `npm start` demo. Each `run`
// opens its gates through `airlock` (the engine or an HTTP client), waits for people to decide them, and
// prints one line per visible step through `log`.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import type { Policy } from "../src/core/policy.js";
import { fileApprovalPolicy, runFileApproval } from "./file-approval/index.js";
import { runHitlTools } from "./hitl-tools/index.js";
import { createPlanner, describePlanner, type Planner } from "./planner/index.js";
import { runResearchReflection } from "./research-reflection/index.js";
import { jsonFileSessionStore, runResearchTwoPhase } from "./research-two-phase/index.js";
import { runRobotPlan } from "./robot-plan/index.js";
import type { Gate, Log } from "./shared/gate.js";

export interface ExampleContext {
  airlock: Gate;
  log: Log;
  /** JSON log lines where a pattern has them (robot-plan's "Presenting plan for human review"...). */
  logger?: Logger;
  signal?: AbortSignal;
  /** @default createPlanner(process.env): offline unless AIRLOCK_LLM_URL is set */
  planner?: Planner;
  /** The name the agents' gates carry as requester. With an HTTP client it must be the agent
   * token's name, which the server insists on. @default one name per example ("robot-planner", ...) */
  requester?: string;
  /** Where examples that write files work (file-approval's sandbox, research sessions).
   * @default a new folder under the system's temporary directory, removed when the run ends */
  workDir?: string;
  /** How long robot-plan's reviews wait. @default HUMAN_REVIEW_TIMEOUT seconds, else 120 s */
  reviewTimeoutMs?: number;
}

export interface Example {
  name: string;
  description: string;
  /** Runs the example to its end and returns its final state. */
  run(ctx: ExampleContext): Promise<unknown>;
}

export const EXAMPLES: readonly Example[] = [
  {
    name: "research-reflection",
    description:
      "Research pipeline: the reflection step proposes extra searches; reply APPROVE ALL, SKIP or SELECT 1,3.",
    run: async (ctx) => runResearchReflection({ ...common(ctx, "research-reflection") }),
  },
  {
    name: "robot-plan",
    description:
      "Robot plan review: approve, revise (e.g. 'skip position 2') or decline a generated plan before it runs.",
    run: async (ctx) =>
      runRobotPlan({
        ...common(ctx, "robot-plan"),
        ...(ctx.logger ? { logger: ctx.logger } : {}),
        ...(ctx.reviewTimeoutMs ? { timeoutMs: ctx.reviewTimeoutMs } : {}),
      }),
  },
  {
    name: "hitl-tools",
    description:
      "HITL tools routed by confidence: one call runs at once (audited), the others wait for quick or full approval.",
    run: async (ctx) => runHitlTools({ ...common(ctx, "hitl-tools", false) }),
  },
  {
    name: "file-approval",
    description:
      "File writes in a sandbox: each change waits for approval with a unified diff; small writes pass by rule.",
    run: (ctx) =>
      inWorkDir(ctx, "airlock-demo-files-", (dir) => {
        ctx.log(`[file-approval] sandbox: ${dir}`);
        return runFileApproval({ ...common(ctx, "file-approval", false), dir });
      }),
  },
  {
    name: "research-two-phase",
    description:
      "Two-phase research: approve the plan first; only then does it search, read sources and write the report.",
    run: (ctx) =>
      inWorkDir(ctx, "airlock-demo-research-", (dir) => {
        const file = join(dir, "research-sessions.json");
        ctx.log(`[research-two-phase] sessions: ${file}`);
        return runResearchTwoPhase({
          ...common(ctx, "research-two-phase"),
          sessions: jsonFileSessionStore(file),
        });
      }),
  },
];

/** The policy a demo engine or server should run with: small file writes (at most 100 bytes) pass
 * by rule. Without it, every file write waits for a person. */
export function demoPolicy(): Policy {
  return fileApprovalPolicy();
}

export function findExample(name: string): Example | undefined {
  return EXAMPLES.find((e) => e.name === name);
}

export function exampleNames(): string[] {
  return EXAMPLES.map((e) => e.name);
}

/** Runs `fn` in `ctx.workDir`, or in a new folder under the system's temporary directory that is
 * removed when the run ends. */
async function inWorkDir<T>(
  ctx: ExampleContext,
  prefix: string,
  fn: (dir: string) => Promise<T>,
): Promise<T> {
  if (ctx.workDir) return fn(ctx.workDir);
  const dir = await mkdtemp(join(tmpdir(), prefix));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** What every example gets: the gate, a log prefixed with its name, the planner, the signal. */
function common(ctx: ExampleContext, name: string, reasons = true) {
  const log: Log = (line) => ctx.log(`[${name}] ${line}`);
  const planner =
    ctx.planner ??
    createPlanner(process.env, { onFallback: (err) => log(`planner: ${err.message}`) });
  if (reasons) log(describePlanner(planner));
  return {
    airlock: ctx.airlock,
    log,
    planner,
    ...(ctx.requester ? { requester: ctx.requester } : {}),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  };
}
