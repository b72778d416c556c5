import { userInfo } from "node:os";
import type { Command } from "commander";
import type { RequestInput } from "../../core/schemas.js";
import { type GlobalOptions, withGate } from "../context.js";
import { decisionSummary, exitCodeFor, printJson, safeLine } from "../output.js";
import { collect, jsonObject, positiveInt, positiveNumber } from "../parse.js";

interface RequestOptions {
  title: string;
  item?: string[];
  timeout?: number;
  wait?: boolean;
  key?: string;
  requester?: string;
  approver?: string[];
  quorum?: number;
  action?: string;
  summary?: string;
  args?: Record<string, unknown>;
  onTimeout?: "reject" | "approve";
  respond?: boolean;
  responseSchema?: Record<string, unknown>;
  json?: boolean;
}

export function registerRequest(program: Command, globals: () => GlobalOptions): void {
  program
    .command("request")
    .description(
      "open an approval gate; with --wait, print the decision as JSON and exit 0 approved, 1 rejected, 2 timed out, 3 revise, 5 responded (the answer is `response`)",
    )
    .requiredOption("--title <text>", "what the human is asked to approve")
    .option("--item <label>", "a selectable item (repeat for several)", collect)
    .option("--timeout <seconds>", "deadline in seconds from now", positiveNumber("--timeout"))
    .option("--on-timeout <what>", "reject (default) or approve when the deadline passes")
    .option("--wait", "block until the request is decided")
    .option(
      "--key <key>",
      "idempotency key: a second run with the same key attaches to the first request",
    )
    .option(
      "--requester <name>",
      "who asks (default cli; with AIRLOCK_URL the token's name). Nobody approves their own request",
    )
    .option("--approver <name>", "a user or group allowed to decide (repeat for several)", collect)
    .option("--quorum <n>", "distinct approvals needed", positiveInt("--quorum"))
    .option("--action <name>", "what kind of action this is, e.g. deploy.prod")
    .option("--summary <markdown>", "longer description shown to the reviewer")
    .option(
      "--args <json>",
      "the pending operation's arguments, a JSON object",
      jsonObject("--args"),
    )
    .option(
      "--respond",
      "let a reviewer answer instead of approving (`airlock decide ID respond --answer ...`)",
    )
    .option(
      "--response-schema <json>",
      "the JSON Schema the answer must fit (implies --respond)",
      jsonObject("--response-schema"),
    )
    .option("--json", "print the whole request as JSON")
    .action(async (opts: RequestOptions) => {
      if (
        opts.onTimeout !== undefined &&
        opts.onTimeout !== "reject" &&
        opts.onTimeout !== "approve"
      ) {
        throw new Error(`--on-timeout expects reject or approve, got \`${opts.onTimeout}\``);
      }
      const input: RequestInput = {
        title: opts.title,
        ...(opts.item ? { items: opts.item } : {}),
        ...(opts.timeout !== undefined ? { timeoutMs: Math.round(opts.timeout * 1000) } : {}),
        ...(opts.onTimeout ? { onTimeout: opts.onTimeout } : {}),
        ...(opts.key ? { key: opts.key } : {}),
        ...(opts.approver ? { approvers: opts.approver } : {}),
        ...(opts.quorum ? { quorum: opts.quorum } : {}),
        ...(opts.action ? { action: opts.action } : {}),
        ...(opts.summary ? { summary: opts.summary } : {}),
        ...(opts.args ? { args: opts.args } : {}),
        ...(opts.respond || opts.responseSchema
          ? { allowed: ["approve", "reject", "revise", "select", "edit", "respond"] as const }
          : {}),
        ...(opts.responseSchema ? { responseSchema: opts.responseSchema } : {}),
      };
      await withGate(globals(), async ({ api: engine, remote }) => {
        if (opts.requester !== undefined || !remote) input.requester = opts.requester ?? "cli";
        const created = await engine.request(input);
        if (!opts.wait) {
          if (opts.json) printJson(created);
          else process.stdout.write(`${created.id}\n`);
          return;
        }
        process.stderr.write(
          `waiting for a decision on ${created.id} (${safeLine(created.title)})\n`,
        );
        const abort = new AbortController();
        const stop = () => abort.abort(new Error("interrupted"));
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
        try {
          const done = await engine.waitFor(created.id, { signal: abort.signal });
          printJson(opts.json ? done : decisionSummary(done));
          process.exitCode = exitCodeFor(done);
        } catch (err) {
          if (abort.signal.aborted) {
            process.stderr.write(`stopped waiting; ${created.id} is still pending\n`);
            process.exitCode = 130;
            return;
          }
          throw err;
        } finally {
          process.off("SIGINT", stop);
          process.off("SIGTERM", stop);
        }
      });
    });
}

export function defaultReviewer(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AIRLOCK_USER) return env.AIRLOCK_USER;
  try {
    return userInfo().username;
  } catch {
    return env.USER ?? "operator";
  }
}
