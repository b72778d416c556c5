// The demo: the five example agents running against a live server (`npm start`, i.e.
// `airlock serve --demo`) or against the local database (`airlock demo NAME`). It ships with the
// package as data beside the library, which never imports it: the `airlock` command loads this module
// at run time (src/cli/demo.ts, `loadDemo`) only when a demo is asked for.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { z } from "zod";
import type { DemoAgents, DemoModule, DemoStartOptions } from "../src/cli/demo.js";
import { type AirlockClient, createClient } from "../src/client/index.js";
import { hashToken, newTokenSecret, type TokenStore } from "../src/server/tokens.js";
import { demoPolicy, EXAMPLES } from "./index.js";

export const DEMO_AGENT = "demo-agent";
const DEMO_AGENT_TOKEN_ID = "tok_demo_agent";
export const DEMO_REVIEWER = "demo-reviewer";
const DEMO_REVIEWER_TOKEN_ID = "tok_demo_reviewer";

/** How long robot-plan's reviews wait in the demo: time for a new user to find the plan in the inbox.
 * HUMAN_REVIEW_TIMEOUT, when set, wins. */
export const DEMO_REVIEW_TIMEOUT_MS = 900_000;

const positiveAmount = z.number().finite().positive();

/** The schemas the demo's actions are checked against: request arguments and a reviewer's edited
 * arguments must satisfy them (an expense `amount` of `"lots"` is refused). */
export function demoSchemas(): Record<string, z.ZodType> {
  return {
    approve_expense: z.object({ expenseId: z.string().min(1), amount: positiveAmount }).strict(),
    sign_contract: z.object({ contractId: z.string().min(1), amount: positiveAmount }).strict(),
    delete_project: z.object({ projectId: z.string().min(1) }).strict(),
    send_bulk_notification: z
      .object({ recipients: z.array(z.string().min(1)).min(1), message: z.string().min(1) })
      .strict(),
    update_task_status: z.object({ taskId: z.string().min(1), status: z.string().min(1) }).strict(),
  };
}

/** A secret for a fixed demo identity (a fresh one unless given); the one from the last start stops
 * working unless it is the same. */
async function demoToken(
  tokens: TokenStore,
  id: string,
  name: string,
  roles: ("agent" | "reviewer" | "admin")[],
  token = newTokenSecret(),
): Promise<string> {
  await tokens.put({ id, name, roles, groups: ["demo"], createdAt: Date.now() }, hashToken(token));
  return token;
}

/** A folder under the system's temporary directory for the demo's files, removed by `remove()`. */
export function demoWorkDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "airlock-demo-"));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Starts every example against the server at `url`, as the agent `demo-agent`, after printing how
 * to sign in as the demo reviewer. Once `stop()` is
 * called, the agents' own lines (each would report the interruption) are not printed: one line says
 * the demo stopped. */
export async function startDemoAgents(options: DemoStartOptions): Promise<DemoAgents> {
  const agentToken = await demoToken(options.tokens, DEMO_AGENT_TOKEN_ID, DEMO_AGENT, ["agent"]);
  const reviewerToken = await demoToken(
    options.tokens,
    DEMO_REVIEWER_TOKEN_ID,
    DEMO_REVIEWER,
    ["reviewer"],
    options.reviewerSecret,
  );
  const client = createClient({ url: options.url, token: agentToken });
  await cancelLeftovers(client, options.print);
  options.print(
    `Demo: five example agents are waiting for you. Open ${options.url}/ and sign in with the reviewer token`,
  );
  options.print(`  ${reviewerToken}`);
  options.print(
    options.reviewerSecret
      ? "(the same at every start on this database; the agents' progress is printed below)"
      : "(a new one at every start; the agents' progress is printed below)",
  );
  const stop = new AbortController();
  const print = (line: string) => {
    if (!stop.signal.aborted) options.print(line);
  };
  const work = demoWorkDir();
  const quiet = pino({ level: "silent" });
  const env = options.env ?? process.env;
  const runs = EXAMPLES.map(async (example) => {
    const workDir = join(work.dir, example.name);
    mkdirSync(workDir);
    try {
      await example.run({
        airlock: client,
        log: print,
        logger: quiet,
        requester: DEMO_AGENT,
        signal: stop.signal,
        workDir,
        ...(env.HUMAN_REVIEW_TIMEOUT ? {} : { reviewTimeoutMs: DEMO_REVIEW_TIMEOUT_MS }),
      });
      print(`[${example.name}] finished`);
    } catch (err) {
      print(`[${example.name}] stopped: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  let stopping: Promise<void> | undefined;
  return {
    reviewerToken,
    stop() {
      stopping ??= (async () => {
        const running = runs.length;
        stop.abort(new Error("the server is stopping"));
        await Promise.allSettled(runs);
        work.remove();
        options.print(
          `Demo stopped (${running} agents); requests still pending are cancelled at the next start.`,
        );
      })();
      return stopping;
    },
  };
}

/** Gates an earlier demo run left pending have nobody waiting on them any more: cancel them, so the
 * inbox shows only the agents that are running now. */
async function cancelLeftovers(
  client: AirlockClient,
  print: (line: string) => void,
): Promise<void> {
  let cancelled = 0;
  for (let page = 0; page < 20; page++) {
    const { items } = await client.list({ requester: DEMO_AGENT, status: "pending", limit: 500 });
    if (items.length === 0) break;
    for (const r of items) {
      try {
        await client.cancel(r.id, { reason: "the demo restarted; a new agent asks again" });
        cancelled++;
      } catch {
        // Decided or timed out meanwhile: nothing to clean up.
      }
    }
  }
  if (cancelled) print(`Demo: cancelled ${cancelled} request(s) left pending by an earlier run`);
}

/** What the `airlock` command loads at run time. */
export const demo: DemoModule = {
  examples: EXAMPLES,
  engineOptions: () => ({ policy: demoPolicy(), schemas: demoSchemas() }),
  startDemoAgents,
  demoWorkDir,
  reviewTimeoutMs: DEMO_REVIEW_TIMEOUT_MS,
};
