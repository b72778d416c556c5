// The registry the `airlock demo` command and `npm start` use, run end to end against a real HTTP
// server: the agents talk to it with an agent token through `createClient`, a reviewer approves
// every gate through the API with a reviewer token, and every example must reach its end.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient } from "../src/client/index.js";
import type { AirlockApi } from "../src/engine/api.js";
import type { Airlock } from "../src/engine/engine.js";
import { type AirlockServer, createServer } from "../src/server/server.js";
import { createToken, memoryTokenStore } from "../src/server/tokens.js";
import type { FileApprovalResult } from "./file-approval/index.js";
import { type HitlToolsResult, runHitlTools } from "./hitl-tools/index.js";
import { demoPolicy, EXAMPLES, exampleNames, findExample } from "./index.js";
import type { ResearchReflectionResult } from "./research-reflection/index.js";
import type { ResearchTwoPhaseResult } from "./research-two-phase/index.js";
import type { RobotPlanResult } from "./robot-plan/index.js";
import { captureLog, tempDir, testEngine } from "./shared/testing.js";

let engine: Airlock;
let server: AirlockServer;
let agent: AirlockApi;
let reviewer: AirlockApi;
let tmp: { dir: string; cleanup: () => void };

beforeEach(async () => {
  engine = await testEngine(demoPolicy());
  const tokens = memoryTokenStore();
  server = createServer({ airlock: engine, auth: { tokens }, rateLimit: false });
  const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
  const agentToken = (await createToken(tokens, { name: "demo-agent", roles: ["agent"] })).token;
  const reviewerToken = (await createToken(tokens, { name: "dana", roles: ["reviewer"] })).token;
  agent = createClient({ url, token: agentToken });
  reviewer = createClient({ url, token: reviewerToken });
  tmp = tempDir("airlock-demo-");
});
afterEach(async () => {
  await server.close();
  await engine.close();
  tmp.cleanup();
});

/** Approves every pending gate as it appears, until stopped. */
function approveEverything(): { stop: () => Promise<number> } {
  let running = true;
  let decided = 0;
  const loop = (async () => {
    while (running) {
      const page = await reviewer.list({ status: "pending" }).catch(() => ({ items: [] }));
      for (const r of page.items) {
        await reviewer.decide(r.id, { outcome: "approved", reviewer: "dana" }).then(
          () => decided++,
          () => undefined, // settled meanwhile
        );
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return decided;
    },
  };
}

describe("examples registry", () => {
  it("lists the five patterns by name, each with a description", () => {
    expect(exampleNames()).toEqual([
      "research-reflection",
      "robot-plan",
      "hitl-tools",
      "file-approval",
      "research-two-phase",
    ]);
    for (const e of EXAMPLES) expect(e.description.length).toBeGreaterThan(20);
    expect(findExample("robot-plan")?.name).toBe("robot-plan");
    expect(findExample("nope")).toBeUndefined();
  });

  it("runs all five against a real server through the HTTP client, decided through the API", async () => {
    const { log, lines } = captureLog();
    const approver = approveEverything();
    const run = (name: string) => {
      const example = findExample(name);
      if (!example) throw new Error(name);
      return example.run({ airlock: agent, log, workDir: tmp.dir, requester: "demo-agent" });
    };
    let decided = 0;
    let results: unknown[];
    try {
      results = await Promise.all(exampleNames().map(run));
    } finally {
      decided = await approver.stop();
    }
    const [reflection, robot, tools, files, twoPhase] = results as [
      ResearchReflectionResult,
      RobotPlanResult,
      HitlToolsResult,
      FileApprovalResult,
      ResearchTwoPhaseResult,
    ];

    expect(reflection?.approval).toMatchObject({
      approved: true,
      approvalMethod: "approve_all",
      reviewer: "dana",
    });
    expect(reflection?.state.reflection_metadata?.searches_performed).toHaveLength(3);
    expect(robot).toMatchObject({
      route: "verify",
      readyToExecute: true,
      humanDecision: "approved",
    });
    expect(tools?.counts).toEqual({ auto: 1, quick: 2, full: 3 });
    // Every call that needed a person ran once approved. (The auto call: see the test below.)
    expect(tools?.calls.slice(1).map((c) => c.outcome)).toEqual(Array(5).fill("executed"));
    expect(files?.steps.map((s) => s.status)).toEqual([
      "auto_executed",
      "executed",
      "executed",
      "executed",
      "refused",
    ]);
    expect(twoPhase?.session.status).toBe("completed");
    // 1 research + 1 plan + 5 tools + 3 files + 1 research plan
    expect(decided).toBe(11);
    for (const name of ["research-reflection", "robot-plan", "research-two-phase"]) {
      expect(lines.some((l) => l.startsWith(`[${name}] planner: offline rule-based`))).toBe(true);
    }
    expect(lines.some((l) => l.startsWith("[hitl-tools] done: 1 auto, 2 quick, 3 full"))).toBe(
      true,
    );
  });

  // KNOWN CONFLICT between src/tools and src/server, reported to the lead: over HTTP (no `record`),
  // The HTTP client has `record` (POST /v1/audit), so an auto call is audited on the server with
  // the agent token's name as actor, without asking the server to skip a human.
  it("an auto tool call over HTTP runs and leaves an audit trail", async () => {
    const result = await runHitlTools({
      airlock: agent,
      requester: "demo-agent",
      calls: [
        {
          why: "routine",
          tool: "update_task_status",
          args: { taskId: "T-1", status: "done" },
          context: {},
        },
      ],
    });
    expect(result.calls[0]).toMatchObject({ outcome: "auto_executed", level: "auto" });
    const trail = await engine.audit({});
    const auto = trail.filter((e) => e.type === "auto_executed");
    expect(auto).toHaveLength(1);
    expect(auto[0]).toMatchObject({ actor: "demo-agent", data: { tool: "update_task_status" } });
  });
});
