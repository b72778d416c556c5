import type { Command } from "commander";
import { reviewTimeoutMs } from "../../channels/console.js";
import { runReview } from "../../channels/review.js";
import { type GlobalOptions, localOnly, withEngine } from "../context.js";
import { collect, positiveNumber } from "../parse.js";
import { defaultReviewer } from "./request.js";

export function registerReview(program: Command, globals: () => GlobalOptions): void {
  program
    .command("review")
    .description(
      "review the pending queue in the terminal: [a] approve, [r] revise, [d] decline, one request at a time",
    )
    .option("--as <name>", "who reviews (default: AIRLOCK_USER or the OS user name)")
    .option("--group <name>", "a group you review for (repeat for several)", collect)
    .option(
      "--timeout <seconds>",
      "how long to wait for an answer to each request (default: HUMAN_REVIEW_TIMEOUT or 120)",
      positiveNumber("--timeout"),
    )
    .action(async (opts: { as?: string; group?: string[]; timeout?: number }) => {
      localOnly("review");
      await withEngine(globals(), async (engine) => {
        const result = await runReview(engine, {
          input: process.stdin,
          output: process.stdout,
          reviewer: opts.as ?? defaultReviewer(),
          groups: opts.group ?? [],
          timeoutMs:
            opts.timeout !== undefined
              ? Math.round(opts.timeout * 1000)
              : reviewTimeoutMs(process.env),
        });
        if (result.stopped === "timeout") process.exitCode = 2;
      });
    });
}
