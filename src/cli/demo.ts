// The demo's place in the `airlock` command. The demo itself (the five example agents, their policy and
// schemas, their data files) lives in examples/ and ships beside the library, which never imports it:
// `airlock serve --demo` and `airlock demo NAME` load it at run time with `loadDemo()`.
// `airlock demo` without a name lists the examples.
import type { Command } from "commander";
import type { Logger } from "pino";
import type { Airlock, AirlockOptions } from "../engine/engine.js";
import { createAirlock } from "../engine/engine.js";
import type { TokenStore } from "../server/tokens.js";
import {
  CliError,
  cliLogger,
  cliRedaction,
  type GlobalOptions,
  openSqliteStore,
  resolveDbPath,
} from "./context.js";

/** Where the demo module sits, relative to this file (in the sources and in dist/ alike). */
const DEMO_MODULE = "../../examples/demo.js";

export interface DemoRunContext {
  airlock: Airlock | import("../client/index.js").AirlockClient;
  log: (line: string) => void;
  logger?: Logger;
  signal?: AbortSignal;
  requester?: string;
  workDir?: string;
  reviewTimeoutMs?: number;
}

export interface DemoExample {
  name: string;
  description: string;
  run(ctx: DemoRunContext): Promise<unknown>;
}

export interface DemoStartOptions {
  url: string;
  tokens: TokenStore;
  print: (line: string) => void;
  /** Read for HUMAN_REVIEW_TIMEOUT. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** The demo reviewer's token secret, kept across restarts by `airlock serve` (so a browser stays
   * signed in); a new one at every start without it. */
  reviewerSecret?: string;
}

export interface DemoAgents {
  reviewerToken: string;
  /** Stops the agents, removes their temporary files, and prints one line saying so. */
  stop(): Promise<void>;
}

/** What examples/demo.ts exports as `demo`. */
export interface DemoModule {
  examples: readonly DemoExample[];
  /** The policy (small file writes pass by rule) and action schemas a demo engine or server runs with. */
  engineOptions(): Pick<AirlockOptions, "policy" | "schemas">;
  /** Prints how to sign in as the demo reviewer, then starts every example against the server at
   * `url`, as the agent `demo-agent`. */
  startDemoAgents(options: DemoStartOptions): Promise<DemoAgents>;
  /** A new folder under the system's temporary directory, and how to remove it. */
  demoWorkDir(): { dir: string; remove(): void };
  /** robot-plan's review timeout in the demo, unless HUMAN_REVIEW_TIMEOUT is set. */
  reviewTimeoutMs: number;
}

let loaded: Promise<DemoModule> | undefined;

/** Loads the demo shipped beside the library (examples/demo.js), once. */
export function loadDemo(): Promise<DemoModule> {
  loaded ??= (async () => {
    const url = new URL(DEMO_MODULE, import.meta.url);
    let mod: { demo?: DemoModule };
    try {
      mod = (await import(url.href)) as { demo?: DemoModule };
    } catch (err) {
      loaded = undefined;
      const missing = (err as { code?: string }).code === "ERR_MODULE_NOT_FOUND";
      throw new CliError(
        missing
          ? "the demo is not installed with this copy of airlock (examples/demo.js is missing)"
          : `the demo could not be loaded: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    if (!mod.demo) throw new CliError("the demo module exports no `demo`");
    return mod.demo;
  })();
  return loaded;
}

/** Starts the five demo agents against a server (see DemoModule.startDemoAgents). */
export async function startDemoAgents(options: DemoStartOptions): Promise<DemoAgents> {
  return (await loadDemo()).startDemoAgents(options);
}

export function registerDemo(program: Command, globals: () => GlobalOptions): void {
  program
    .command("demo")
    .description(
      "run one example agent end to end on the local database; without a name, list the examples",
    )
    .argument("[name]", "which example")
    .action(async (name: string | undefined) => {
      const demo = await loadDemo();
      const names = demo.examples.map((e) => e.name);
      if (name === undefined) {
        const width = Math.max(...names.map((n) => n.length));
        const lines = demo.examples.map((e) => `  ${e.name.padEnd(width)}  ${e.description}`);
        process.stdout.write(
          `The example agents (run one with \`airlock demo NAME\`; \`airlock serve --demo\` runs all five):\n${lines.join("\n")}\n`,
        );
        return;
      }
      const example = demo.examples.find((e) => e.name === name);
      if (!example) {
        throw new CliError(`no example called \`${name}\`; choose one of ${names.join(", ")}`);
      }
      const engine = await createAirlock({
        store: openSqliteStore(resolveDbPath(globals())),
        logger: cliLogger(),
        redaction: cliRedaction(),
        ...demo.engineOptions(),
      });
      const work = demo.demoWorkDir();
      const stop = new AbortController();
      const onSignal = () => stop.abort(new Error("interrupted"));
      process.once("SIGINT", onSignal);
      try {
        process.stderr.write(
          `${example.description}\nDecide its requests in the inbox (airlock serve on the same database), with \`airlock review\`, or \`airlock decide\`.\n`,
        );
        await example.run({
          airlock: engine,
          log: (line) => process.stdout.write(`${line}\n`),
          logger: cliLogger(),
          signal: stop.signal,
          workDir: work.dir,
          ...(process.env.HUMAN_REVIEW_TIMEOUT ? {} : { reviewTimeoutMs: demo.reviewTimeoutMs }),
        });
      } finally {
        process.off("SIGINT", onSignal);
        work.remove();
        await engine.close();
      }
    });
}
