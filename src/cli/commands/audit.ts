import type { Command } from "commander";
import { auditKeying } from "../../audit/unkeyed.js";
import { MAX_EXPLICIT_WORKERS } from "../../audit/verify.js";
import { terminalSafeJson } from "../../reply/format.js";
import { auditSettings } from "../audit-settings.js";
import { type GlobalOptions, localOnly, resolveDbPath, withEngine } from "../context.js";
import { printJson } from "../output.js";
import { positiveInt, positiveNumber, wholeNumber } from "../parse.js";

export function registerAudit(program: Command, globals: () => GlobalOptions): void {
  const audit = program.command("audit").description("the tamper-evident audit log");
  audit
    .command("verify")
    .description(
      "check the hash chain; exit 0 when intact, 1 with the first bad event otherwise. Each successful run records (signed) the last event it checked; --from-checkpoint checks only what came after it",
    )
    .option(
      "--from-checkpoint",
      "check only the events after the last verified one (and that one again), not the whole log",
    )
    .option(
      "--threads <n>",
      "threads hashing events beside the one reading the log; 0: one thread in all (default: the machine's cores, at most 4, for 50,000 events or more)",
      wholeNumber("--threads", MAX_EXPLICIT_WORKERS),
    )
    .option("--json", "print the result as JSON")
    .action(async (opts: { fromCheckpoint?: boolean; threads?: number; json?: boolean }) => {
      localOnly("audit verify");
      await withEngine(globals(), async (engine) => {
        const verified = await engine.verifyAudit({
          resume: opts.fromCheckpoint === true,
          recordMark: true,
          ...(opts.threads !== undefined ? { workers: opts.threads } : {}),
        });
        // The database is open, so this finds the key it was opened with (or none).
        const keyed =
          auditSettings({ sqlitePath: resolveDbPath(globals()) }).auditKey !== undefined;
        const result = verified.ok ? { ...verified, ...auditKeying(keyed) } : verified;
        if (opts.json) printJson(result);
        if (result.ok) {
          if (!opts.json)
            process.stdout.write(`audit chain intact: ${result.count} events${fromText(result)}\n`);
          // An unkeyed chain is "intact" whatever a database writer did to it: said every time.
          if (result.warning) process.stderr.write(`airlock: warning: ${result.warning}\n`);
          return;
        }
        process.stderr.write(`audit chain broken at event #${result.badSeq}: ${result.reason}\n`);
        process.exitCode = 1;
      });
    });
  audit
    .command("list")
    .description("print audit events as JSON lines")
    .option("--request <id>", "only this request's events")
    .option("--after <seq>", "only events after this sequence number", positiveInt("--after"))
    .option("--limit <n>", "at most this many", positiveInt("--limit"))
    .action(async (opts: { request?: string; after?: number; limit?: number }) => {
      localOnly("audit list");
      await withEngine(globals(), async (engine) => {
        const events = await engine.audit({
          ...(opts.request ? { requestId: opts.request } : {}),
          ...(opts.after ? { after: opts.after } : {}),
          limit: opts.limit ?? 1000,
        });
        for (const e of events) process.stdout.write(`${terminalSafeJson(JSON.stringify(e))}\n`);
      });
    });

  program
    .command("metrics")
    .description("approval, revision and timeout rates and review durations")
    .option(
      "--since-hours <h>",
      "look back this many hours (default 168)",
      positiveNumber("--since-hours"),
    )
    .action(async (opts: { sinceHours?: number }) => {
      localOnly("metrics");
      await withEngine(globals(), async (engine) => {
        printJson(await engine.metrics({ sinceMs: (opts.sinceHours ?? 168) * 3600 * 1000 }));
      });
    });
}

/** Where a successful check started, when not at the first event. */
function fromText(r: { from?: number; startedAt?: string }): string {
  if (r.startedAt === "mark") return ` checked after event #${r.from} (verified before)`;
  if (r.startedAt === "anchor") return ` checked after event #${r.from} (the prune anchor)`;
  return "";
}
