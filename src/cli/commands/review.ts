import type { Command } from "commander";
import { reviewTimeoutMs } from "../../channels/console.js";
import { type ReviewResult, runRemoteReview, runReview } from "../../channels/review.js";
import { CliError, type GlobalOptions, withEngine } from "../context.js";
import { collect, positiveNumber } from "../parse.js";
import { defaultReviewer } from "./request.js";

interface ReviewCommandOptions {
  as?: string;
  group?: string[];
  timeout?: number;
  url?: string;
  token?: string;
}

export function registerReview(program: Command, globals: () => GlobalOptions): void {
  program
    .command("review")
    .description(
      "review the pending queue in the terminal, one request at a time: [a] approve, [s] approve some items, [r] revise, [d] reject; on the local database, or through a server with --url (AIRLOCK_URL) and a reviewer's --token (AIRLOCK_TOKEN)",
    )
    .option("--url <url>", "review through this Airlock server (default: AIRLOCK_URL)")
    .option(
      "--token <token>",
      "the reviewer's API token for --url (default: AIRLOCK_TOKEN); decisions are recorded as its holder",
    )
    .option(
      "--as <name>",
      "local database: who reviews (default: AIRLOCK_USER or the OS user name)",
    )
    .option(
      "--group <name>",
      "local database: a group you review for (repeat for several)",
      collect,
    )
    .option(
      "--timeout <seconds>",
      "how long to wait for an answer to each request (default: HUMAN_REVIEW_TIMEOUT or 120)",
      positiveNumber("--timeout"),
    )
    .action(async (opts: ReviewCommandOptions) => {
      const timeoutMs =
        opts.timeout !== undefined ? Math.round(opts.timeout * 1000) : reviewTimeoutMs(process.env);
      const remote = remoteOf(opts);
      let result: ReviewResult;
      if (remote) {
        for (const flag of ["as", "group"] as const) {
          if (opts[flag] !== undefined) {
            throw new CliError(
              `--${flag} is for the local database; through a server the token says who reviews (and with which groups)`,
            );
          }
        }
        result = await runRemoteReview({
          ...remote,
          input: process.stdin,
          output: process.stdout,
          timeoutMs,
        });
      } else {
        result = await withEngine(globals(), (engine) =>
          runReview(engine, {
            input: process.stdin,
            output: process.stdout,
            reviewer: opts.as ?? defaultReviewer(),
            groups: opts.group ?? [],
            timeoutMs,
          }),
        );
      }
      if (result.stopped === "timeout") process.exitCode = 2;
      // The refusal itself was printed in one line with the console's output.
      if (result.stopped === "refused") process.exitCode = 4;
    });
}

/** The server to review through: --url, else AIRLOCK_URL; with --token, else AIRLOCK_TOKEN. */
function remoteOf(opts: ReviewCommandOptions): { url: string; token: string } | undefined {
  const url = (opts.url ?? process.env.AIRLOCK_URL)?.trim();
  if (!url) {
    if (opts.token !== undefined) throw new CliError("--token goes with --url (or AIRLOCK_URL)");
    return undefined;
  }
  const token = (opts.token ?? process.env.AIRLOCK_TOKEN)?.trim();
  if (!token) {
    throw new CliError(
      `${opts.url === undefined ? "AIRLOCK_URL is set" : "--url is given"}, so a reviewer's API token for that server is needed: --token or AIRLOCK_TOKEN`,
    );
  }
  return { url, token };
}
