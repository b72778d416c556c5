// The demo: the five example agents of examples/ running against a live server (for `npm start`,
// i.e. `airlock serve --demo`) or against the local database (`airlock demo NAME`). Their gates wait
// in the inbox; deciding them lets each agent finish, with a line per step in the terminal.
import type { Command } from "commander";
import pino from "pino";
import { EXAMPLES, exampleNames, findExample } from "../../examples/index.js";
import { type AirlockClient, createClient } from "../client/index.js";
import { hashToken, newTokenSecret, type TokenStore } from "../server/tokens.js";
import { CliError, cliLogger, type GlobalOptions, withEngine } from "./context.js";

export const DEMO_AGENT = "demo-agent";
const DEMO_AGENT_TOKEN_ID = "tok_demo_agent";
export const DEMO_REVIEWER = "demo-reviewer";
const DEMO_REVIEWER_TOKEN_ID = "tok_demo_reviewer";

/** A fresh secret for a fixed demo identity; the one from the last start stops working. */
async function demoToken(
  tokens: TokenStore,
  id: string,
  name: string,
  roles: ("agent" | "reviewer" | "admin")[],
): Promise<string> {
  const token = newTokenSecret();
  await tokens.put({ id, name, roles, groups: ["demo"], createdAt: Date.now() }, hashToken(token));
  return token;
}

export interface DemoAgents {
  reviewerToken: string;
  stop(): Promise<void>;
}

/** Starts every example against the server at `url`, as the agent `demo-agent`. */
export async function startDemoAgents(options: {
  url: string;
  tokens: TokenStore;
  print: (line: string) => void;
}): Promise<DemoAgents> {
  const agentToken = await demoToken(options.tokens, DEMO_AGENT_TOKEN_ID, DEMO_AGENT, ["agent"]);
  const reviewerToken = await demoToken(options.tokens, DEMO_REVIEWER_TOKEN_ID, DEMO_REVIEWER, [
    "reviewer",
  ]);
  const client = createClient({ url: options.url, token: agentToken });
  // Give a new user time to find the robot plan in the inbox before the console's timeout.
  process.env.HUMAN_REVIEW_TIMEOUT ??= "900";
  await cancelLeftovers(client, options.print);
  const stop = new AbortController();
  const quiet = pino({ level: "silent" });
  const runs = EXAMPLES.map(async (example) => {
    try {
      await example.run({
        airlock: client,
        log: options.print,
        logger: quiet,
        requester: DEMO_AGENT,
        signal: stop.signal,
      });
      options.print(`[${example.name}] finished`);
    } catch (err) {
      if (stop.signal.aborted) return;
      options.print(
        `[${example.name}] stopped: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  });
  return {
    reviewerToken,
    async stop() {
      stop.abort(new Error("the server is stopping"));
      await Promise.allSettled(runs);
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

export function registerDemo(program: Command, globals: () => GlobalOptions): void {
  program
    .command("demo")
    .description(
      `run one example agent end to end on the local database: ${exampleNames().join(", ")}`,
    )
    .argument("<name>", "which example")
    .action(async (name: string) => {
      const example = findExample(name);
      if (!example) {
        throw new CliError(
          `no example called \`${name}\`; choose one of ${exampleNames().join(", ")}`,
        );
      }
      await withEngine(globals(), async (engine) => {
        process.stderr.write(
          `${example.description}\nDecide its requests in the inbox (airlock serve on the same database), with \`airlock review\`, or \`airlock decide\`.\n`,
        );
        const stop = new AbortController();
        const onSignal = () => stop.abort(new Error("interrupted"));
        process.once("SIGINT", onSignal);
        try {
          await example.run({
            airlock: engine,
            log: (line) => process.stdout.write(`${line}\n`),
            logger: cliLogger(),
            signal: stop.signal,
          });
        } finally {
          process.off("SIGINT", onSignal);
        }
      });
    });
}
