import type { Command } from "commander";
import type { DecisionInput } from "../../core/schemas.js";
import { CliError, type GlobalOptions, withGate } from "../context.js";
import { decisionSummary, printJson, safeLine } from "../output.js";
import { collect, jsonObject, selectionToIds } from "../parse.js";
import { defaultReviewer } from "./request.js";

interface DecideOptions {
  select?: string;
  comment?: string;
  as?: string;
  group?: string[];
  edit?: Record<string, unknown>;
  key?: string;
  json?: boolean;
}

const OUTCOMES = { approve: "approved", reject: "rejected", revise: "revise" } as const;

export function registerDecide(program: Command, globals: () => GlobalOptions): void {
  program
    .command("decide")
    .description("decide a pending request")
    .argument("<id>", "request id")
    .argument("<decision>", "approve, reject or revise")
    .option("--select <list>", "approve only these items: positions like 1,3 or 2-4, or item ids")
    .option("--comment <text>", "a note for the requester (the changes wanted, for revise)")
    .option("--as <name>", "who decides (default: AIRLOCK_USER or the OS user name)")
    .option("--group <name>", "a group you decide for (repeat for several)", collect)
    .option(
      "--edit <json>",
      "approve with these arguments instead (a JSON object)",
      jsonObject("--edit"),
    )
    .option("--key <key>", "idempotency key: repeating the same decision returns the first one")
    .option("--json", "print the request as JSON")
    .action(async (id: string, word: string, opts: DecideOptions) => {
      const outcome = OUTCOMES[word as keyof typeof OUTCOMES];
      if (!outcome)
        throw new CliError(`decision expects approve, reject or revise, got \`${word}\``);
      if ((opts.select || opts.edit) && outcome !== "approved") {
        throw new CliError("--select and --edit go with approve only");
      }
      await withGate(globals(), async ({ api: engine, remote }) => {
        const current = await engine.get(id);
        // Against a server the reviewer is the token's principal: send a name only when given.
        const reviewer = opts.as ?? (remote ? undefined : defaultReviewer());
        const input = {
          outcome,
          ...(reviewer ? { reviewer } : {}),
          channel: "cli",
          ...(opts.group ? { groups: opts.group } : {}),
          ...(opts.select ? { selected: selectionToIds(opts.select, current.items) } : {}),
          ...(opts.comment !== undefined ? { comment: opts.comment } : {}),
          ...(opts.edit ? { editedArgs: opts.edit } : {}),
          ...(opts.key ? { key: opts.key } : {}),
        } as DecisionInput;
        const decided = await engine.decide(id, input);
        if (opts.json) {
          printJson(decided);
          return;
        }
        if (decided.status === "pending") {
          const approvals = decided.decisions.filter((d) => d.outcome === "approved").length;
          process.stdout.write(
            `${id}: approval recorded (${approvals} of ${decided.quorum}); still pending\n`,
          );
          return;
        }
        const s = decisionSummary(decided);
        const sel = decided.decision?.selected?.length
          ? ` [${decided.items
              .filter((i) => decided.decision?.selected?.includes(i.id))
              .map((i) => i.label)
              .join(", ")}]`
          : "";
        process.stdout.write(`${safeLine(`${id}: ${s.status}${sel} by ${s.reviewer}`)}\n`);
      });
    });

  program
    .command("cancel")
    .description("cancel a pending request (the waiting side sees status cancelled)")
    .argument("<id>", "request id")
    .option("--reason <text>", "why")
    .option("--as <name>", "who cancels (default: AIRLOCK_USER or the OS user name)")
    .action(async (id: string, opts: { reason?: string; as?: string }) => {
      await withGate(globals(), async ({ api: engine, remote }) => {
        const by = opts.as ?? (remote ? undefined : defaultReviewer());
        const r = await engine.cancel(id, {
          ...(by ? { by } : {}),
          ...(opts.reason ? { reason: opts.reason } : {}),
          // On the local database the cancellation arrives through the command line; a server sets
          // the channel itself.
          ...(remote ? {} : { channel: "cli" as const }),
        });
        process.stdout.write(`${r.id}: ${r.status}\n`);
      });
    });
}
