// `airlock prune --before DATE`: removes terminal requests last changed before DATE, their outbox
// rows and the prefix of the audit log they fill, leaving a signed anchor the log is verified from
// (see Store.prune). Prints one line.
import type { Command } from "commander";
import { parseCutoff } from "../../audit/retention.js";
import { isAirlockError } from "../../core/errors.js";
import { type GlobalOptions, localOnly, openSqliteStore, resolveDbPath } from "../context.js";
import { CliError } from "../errors.js";
import { requireExistingStore } from "../existing-store.js";
import { printJson } from "../output.js";
import { positiveInt } from "../parse.js";

export function registerPrune(program: Command, globals: () => GlobalOptions): void {
  program
    .command("prune")
    .description(
      "remove terminal requests last changed before a date, with their audit events (the log stays verifiable from a signed anchor)",
    )
    .requiredOption("--before <date>", "a date (2026-01-01, UTC) or a date and time with a zone")
    .option(
      "--batch <events>",
      "audit events deleted per transaction (default 20000)",
      positiveInt("--batch"),
    )
    .option("--json", "print the result as JSON")
    .action(async (opts: { before: string; batch?: number; json?: boolean }) => {
      localOnly("prune");
      let before: number;
      try {
        before = parseCutoff(opts.before);
      } catch (err) {
        throw new CliError(isAirlockError(err) ? err.message : String(err));
      }
      const path = resolveDbPath(globals());
      // A missing file is an error, not a new empty database pruned of nothing.
      await requireExistingStore({ kind: "sqlite", path }, "prune");
      const store = openSqliteStore(path);
      try {
        if (!store.prune) throw new CliError(`the ${store.kind} store cannot prune`);
        const result = await store.prune({
          before,
          ...(opts.batch !== undefined ? { batchEvents: opts.batch } : {}),
        });
        if (opts.json) {
          printJson(result);
          return;
        }
        const when = new Date(before).toISOString();
        const where = result.anchor
          ? `the audit log now starts after event #${result.anchor.seq}`
          : "nothing was ever pruned";
        process.stdout.write(
          `pruned ${result.requests} requests, ${result.events} audit events and ${result.outbox} outbox messages last changed before ${when}; ${where}\n`,
        );
      } finally {
        await store.close();
      }
    });
}
