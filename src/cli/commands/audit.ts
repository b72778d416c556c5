import type { Command } from "commander";
import { auditKeying } from "../../audit/unkeyed.js";
import { MAX_EXPLICIT_WORKERS, type VerifyResult, verifyAuditLog } from "../../audit/verify.js";
import { type Airlock, createAirlock } from "../../engine/engine.js";
import { terminalSafeJson } from "../../reply/format.js";
import { auditSettings } from "../audit-settings.js";
import { cliLogger, cliRedaction, type GlobalOptions, localOnly } from "../context.js";
import {
  describeTarget,
  openExistingStore,
  requireExistingStore,
  storeTarget,
} from "../existing-store.js";
import { printJson } from "../output.js";
import { positiveInt, positiveNumber, wholeNumber } from "../parse.js";

export function registerAudit(program: Command, globals: () => GlobalOptions): void {
  const audit = program.command("audit").description("the tamper-evident audit log");
  audit
    .command("verify")
    .description(
      "check the hash chain of the store airlock serve would open (--postgres / AIRLOCK_DATABASE_URL, else --db / AIRLOCK_DB); exit 0 when intact, 1 with the first bad event (or an empty log) otherwise, 4 when there is no such store (never created). Each successful run records (signed) the last event it checked; --from-checkpoint checks only what came after it",
    )
    .option(
      "--postgres <url>",
      "verify this PostgreSQL database (AIRLOCK_DATABASE_URL; schema AIRLOCK_POSTGRES_SCHEMA) instead of the SQLite file",
    )
    .option(
      "--audit-key-file <path>",
      "read the audit key from this file (AIRLOCK_AUDIT_KEY_FILE, or the key itself in AIRLOCK_AUDIT_KEY)",
    )
    .option(
      "--checkpoint-file <path>",
      "the signed checkpoints to check the chain against (AIRLOCK_CHECKPOINT_FILE)",
    )
    .option(
      "--allow-empty",
      "pass an empty audit log (without it an empty log fails: nothing was verified)",
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
    .action(async (opts: VerifyFlags) => {
      localOnly("audit verify");
      const target = storeTarget(globals(), opts.postgres);
      await requireExistingStore(target, "audit verify");
      // The key and checkpoint file as `airlock serve` finds them (after the check above: for a
      // SQLite file that does not exist, this would make a key file beside it).
      const settings = auditSettings({
        ...(target.kind === "sqlite" ? { sqlitePath: target.path } : {}),
        ...(opts.checkpointFile === undefined ? {} : { checkpointFile: opts.checkpointFile }),
        ...(opts.auditKeyFile === undefined ? {} : { keyFile: opts.auditKeyFile }),
      });
      const store = await openExistingStore(target, settings);
      let verified: VerifyResult;
      try {
        // The store itself, with no engine: nothing else runs (no timeouts fired) while it is read.
        verified = await verifyAuditLog(store, {
          ...store.auditVerification?.(),
          resume: opts.fromCheckpoint === true,
          recordMark: true,
          ...(opts.threads !== undefined ? { workers: opts.threads } : {}),
        });
      } finally {
        await store.close();
      }
      const keyed = settings.auditKey !== undefined;
      const result = verified.ok ? { ...verified, ...auditKeying(keyed) } : verified;
      // Empty: no event at all since the genesis (a run resumed after a verified mark, or from a
      // prune anchor, may check none and still stands on what was checked before).
      const empty = result.ok && result.count === 0 && (result.from ?? 0) === 0;
      if (empty && opts.allowEmpty !== true) {
        // Nothing was checked: not a pass (a verifier pointed at the wrong store sees an empty log).
        const reason = `the audit log of ${await describeTarget(target)} is empty: nothing was verified (pass --allow-empty if an empty log is expected)`;
        if (opts.json) printJson({ ...result, ok: false, reason });
        process.stderr.write(`airlock: ${reason}\n`);
        process.exitCode = 1;
        return;
      }
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
  audit
    .command("list")
    .description("print audit events as JSON lines")
    .option("--request <id>", "only this request's events")
    .option("--after <seq>", "only events after this sequence number", positiveInt("--after"))
    .option("--limit <n>", "at most this many", positiveInt("--limit"))
    .action(async (opts: { request?: string; after?: number; limit?: number }) => {
      localOnly("audit list");
      await withExistingEngine(globals(), "audit list", async (engine) => {
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
      await withExistingEngine(globals(), "metrics", async (engine) => {
        printJson(await engine.metrics({ sinceMs: (opts.sinceHours ?? 168) * 3600 * 1000 }));
      });
    });
}

interface VerifyFlags {
  postgres?: string;
  auditKeyFile?: string;
  checkpointFile?: string;
  allowEmpty?: boolean;
  fromCheckpoint?: boolean;
  threads?: number;
  json?: boolean;
}

/** An engine on the existing store (AIRLOCK_DATABASE_URL, else the SQLite file), never created, with
 * no timeout sweeper: these commands only read. */
async function withExistingEngine(
  globals: GlobalOptions,
  command: string,
  fn: (engine: Airlock) => Promise<void>,
): Promise<void> {
  const target = storeTarget(globals, undefined);
  await requireExistingStore(target, command);
  const settings = auditSettings(target.kind === "sqlite" ? { sqlitePath: target.path } : {});
  const store = await openExistingStore(target, settings);
  let engine: Airlock;
  try {
    engine = await createAirlock({
      store,
      logger: cliLogger(),
      sweeper: false,
      redaction: cliRedaction(),
    });
  } catch (err) {
    await store.close().catch(() => {});
    throw err;
  }
  try {
    await fn(engine);
  } finally {
    await engine.close();
  }
}

/** Where a successful check started, when not at the first event. */
function fromText(r: { from?: number; startedAt?: string }): string {
  if (r.startedAt === "mark") return ` checked after event #${r.from} (verified before)`;
  if (r.startedAt === "anchor") return ` checked after event #${r.from} (the prune anchor)`;
  return "";
}
