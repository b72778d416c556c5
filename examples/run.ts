// Runs one example in this process, on an in-memory SQLite store, with you as the reviewer in this
// terminal:  npx tsx examples/run.ts NAME
// Each gate is shown in the text format; answer APPROVE ALL, APPROVE, SKIP, SELECT 1,3, REJECT <why>
// or REVISE <comment>, and where the gate allows a response, ANSWER <json or text> (research-two-phase's
// clarifying questions: ANSWER {"answer_1": "..."}). robot-plan uses its own operator console
// ([a]pprove [r]evise [d]ecline).

import { readLines } from "../src/channels/lines.js";
import type { ApprovalRequest } from "../src/core/schemas.js";
import { createAirlock } from "../src/engine/engine.js";
import { formatRequest } from "../src/reply/format.js";
import { parseReply, replyToDecision } from "../src/reply/parse.js";
import { sqliteStore } from "../src/store/sqlite.js";
import { demoPolicy, exampleNames, findExample } from "./index.js";
import { createPlanner, describePlanner } from "./planner/index.js";
import { consoleReviewer, runRobotPlan } from "./robot-plan/index.js";

const REVIEWER = "you";

async function main(): Promise<number> {
  const name = process.argv[2] ?? "";
  const example = findExample(name);
  if (!example) {
    process.stderr.write(
      `usage: npx tsx examples/run.ts NAME\nNAME is one of: ${exampleNames().join(", ")}\n`,
    );
    return 2;
  }
  const engine = await createAirlock({ store: sqliteStore(":memory:"), policy: demoPolicy() });
  const log = (line: string) => process.stdout.write(`${line}\n`);
  try {
    let done = false;
    const running = (
      name === "robot-plan"
        ? (() => {
            const planner = createPlanner();
            log(`[robot-plan] ${describePlanner(planner)}`);
            return runRobotPlan({
              airlock: engine,
              planner,
              log: (l) => log(`[robot-plan] ${l}`),
              reviewer: consoleReviewer({
                input: process.stdin,
                output: process.stdout,
                reviewer: REVIEWER,
              }),
            });
          })()
        : example.run({ airlock: engine, log })
    ).finally(() => {
      done = true;
    });
    if (name !== "robot-plan") await reviewInTerminal(engine, () => done);
    const result = await running;
    process.stdout.write(`\nResult:\n${summary(name, result)}\n`);
    return 0;
  } finally {
    await engine.close();
    process.stdin.pause();
  }
}

/** Shows each pending gate and records the typed reply, until the example has finished. */
async function reviewInTerminal(
  engine: Awaited<ReturnType<typeof createAirlock>>,
  finished: () => boolean,
): Promise<void> {
  const shown = new Set<string>();
  while (!finished()) {
    const next = (await engine.list({ status: "pending" })).items
      .filter((r) => !shown.has(r.id))
      .sort((a, b) => (a.id < b.id ? -1 : 1))[0];
    if (!next) {
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    shown.add(next.id);
    await ask(engine, next);
  }
}

async function ask(
  engine: Awaited<ReturnType<typeof createAirlock>>,
  request: ApprovalRequest,
): Promise<void> {
  process.stdout.write(`\n${formatRequest(request, "text")}\n`);
  if (request.preview?.trim() && !request.items.length) process.stdout.write("\n");
  if (request.allowed.includes("respond")) process.stdout.write(`${answerHint(request)}\n`);
  const reader = readLines(process.stdin);
  try {
    for (;;) {
      process.stdout.write("> ");
      const line = await reader.next(request.deadline ? request.deadline - Date.now() : 3_600_000);
      if (line.kind !== "line") return; // timed out or input closed: the gate's deadline decides
      const answer = /^\s*answer\s+(.+)$/is.exec(line.text);
      if (answer?.[1] && request.allowed.includes("respond")) {
        try {
          const decided = await engine.decide(request.id, {
            outcome: "responded",
            reviewer: REVIEWER,
            channel: "cli",
            response: jsonOrText(answer[1]),
          });
          process.stdout.write(`Decision recorded: ${decided.status} (respond)\n`);
          return;
        } catch (err) {
          // The answer did not fit the request's response schema: say why and ask again.
          process.stdout.write(`${err instanceof Error ? err.message : String(err)}\n`);
          continue;
        }
      }
      const reply = parseReply(line.text, request.items);
      if (!reply.ok) {
        process.stdout.write(`${reply.error}\n`);
        continue;
      }
      const decided = await engine.decide(
        request.id,
        replyToDecision(reply, { reviewer: REVIEWER, channel: "cli" }),
      );
      process.stdout.write(`Decision recorded: ${decided.status} (${decided.decision?.method})\n`);
      return;
    }
  } finally {
    reader.release();
  }
}

/** How to answer this gate: its response's fields, when its schema names them. */
function answerHint(request: ApprovalRequest): string {
  const properties = (request.responseSchema as { properties?: Record<string, { title?: string }> })
    ?.properties;
  if (!properties) return "Or answer instead of deciding: ANSWER <JSON or text>";
  const fields = Object.entries(properties).map(
    ([key, p]) => `  ${key}: ${p.title ?? "(no description)"}`,
  );
  const example = Object.keys(properties)[0] ?? "answer";
  return [
    `Or answer instead of deciding: ANSWER {"${example}": "..."} with any of these fields:`,
    ...fields,
  ].join("\n");
}

function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text.trim();
  }
}

function summary(name: string, result: unknown): string {
  if (name === "research-two-phase" && typeof result === "object" && result !== null) {
    const session = (result as { session?: { status?: string; report_markdown?: string } }).session;
    return `status: ${session?.status}\n\n${session?.report_markdown ?? ""}`;
  }
  return JSON.stringify(result, null, 2);
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  },
);
