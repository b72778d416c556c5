import type { Command } from "commander";
import { createTransport } from "../../client/http.js";
import { createClient } from "../../client/index.js";
import { actorOf, withoutIdentity } from "../../core/authority.js";
import { viewDigestOf } from "../../core/review-view.js";
import type { ApprovalRequest, Decision, DecisionInput } from "../../core/schemas.js";
import { CliError, type GlobalOptions, remoteTarget, withGate } from "../context.js";
import { requireLocalStore } from "../existing-store.js";
import { decisionSummary, printJson, safeLine } from "../output.js";
import { collect, jsonObject, jsonValue, selectionToIds } from "../parse.js";
import { defaultReviewer } from "./request.js";

interface DecideOptions {
  all?: boolean;
  status?: string;
  action?: string;
  requester?: string;
  select?: string;
  comment?: string;
  as?: string;
  group?: string[];
  edit?: Record<string, unknown>;
  response?: unknown;
  answer?: string;
  key?: string;
  json?: boolean;
  viewDigest?: string;
}

const OUTCOMES = {
  approve: "approved",
  reject: "rejected",
  revise: "revise",
  respond: "responded",
} as const;

export function registerDecide(program: Command, globals: () => GlobalOptions): void {
  program
    .command("decide")
    .description(
      "decide a pending request; with --all, every pending request matching the filters (over AIRLOCK_URL)",
    )
    .argument("[id]", "request id (none with --all)")
    .argument(
      "[decision]",
      "approve, reject, revise, or respond (answer the request with --response or --answer, where it allows respond)",
    )
    .option(
      "--all",
      "decide every pending request matching --action and --requester, each on its own",
    )
    .option("--status <status>", "with --all: the status to match; only pending can be decided")
    .option("--action <name>", "with --all: only requests for this action")
    .option("--requester <name>", "with --all: only requests from this requester")
    .option("--select <list>", "approve only these items: positions like 1,3 or 2-4, or item ids")
    .option("--comment <text>", "a note for the requester (the changes wanted, for revise)")
    .option("--as <name>", "who decides (default: AIRLOCK_USER or the OS user name)")
    .option("--group <name>", "a group you decide for (repeat for several)", collect)
    .option(
      "--edit <json>",
      "approve with these arguments instead (a JSON object)",
      jsonObject("--edit"),
    )
    .option(
      "--response <json>",
      "with respond: the answer, any JSON value (checked against the request's responseSchema)",
      jsonValue("--response"),
    )
    .option("--answer <text>", "with respond: the answer as plain text (a JSON string)")
    .option("--key <key>", "idempotency key: repeating the same decision returns the first one")
    .option(
      "--view-digest <hex>",
      "the digest of the review view you decided on (`viewDigest` of GET /v1/requests/ID/view): refused, exit 4, when the request changed since; without it, the view as it stands when the command runs",
    )
    .option("--json", "print the request as JSON")
    .action(async (first: string | undefined, second: string | undefined, opts: DecideOptions) => {
      if (opts.all) return decideAll(first, second, opts);
      if (first === undefined || second === undefined) {
        throw new CliError(
          "decide expects a request id and a decision (`airlock decide ID approve`), or --all with a decision",
        );
      }
      const [id, word] = [first, second];
      for (const flag of ["status", "action", "requester"] as const) {
        if (opts[flag] !== undefined) throw new CliError(`--${flag} goes with --all only`);
      }
      const outcome = OUTCOMES[word as keyof typeof OUTCOMES];
      if (!outcome)
        throw new CliError(`decision expects approve, reject, revise or respond, got \`${word}\``);
      if ((opts.select || opts.edit) && outcome !== "approved") {
        throw new CliError("--select and --edit go with approve only");
      }
      const response = responseOf(outcome, opts);
      if (opts.viewDigest !== undefined && !/^[0-9a-f]{64}$/.test(opts.viewDigest)) {
        throw new CliError("--view-digest expects the 64 hex characters of a view's digest");
      }
      // Deciding is about requests already there: never create an empty database to find none.
      await requireLocalStore(globals(), "decide");
      await withGate(globals(), async ({ api: engine, remote, local }) => {
        const current = await engine.get(id);
        // Every decision carries the digest of a review view (core/review-view.ts): the one given,
        // which the engine refuses when the request changed since; else the view as it stands now
        // (from the server, which computes it, or from the local database).
        const viewDigest = opts.viewDigest ?? (await currentViewDigest(id, current, remote));
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
          ...(response === undefined ? {} : { response }),
          ...(opts.key ? { key: opts.key } : {}),
          viewDigest,
        } as DecisionInput;
        // On the local database the OS user (or --as) decides, through the same authority as every
        // door (core/authority.ts); a server decides who its token's holder is.
        const decided = local
          ? await local.decideAs(
              actorOf({
                name: reviewer ?? defaultReviewer(),
                groups: opts.group ?? [],
                proof: "local",
                channel: "cli",
              }),
              id,
              withoutIdentity(input),
            )
          : await engine.decide(id, input);
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
      await requireLocalStore(globals(), "cancel");
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

/** The answer of `respond`: `--response` (JSON) or `--answer` (text), exactly one; neither goes
 * with another decision. */
function responseOf(outcome: string, opts: DecideOptions): unknown {
  const given = (opts.response !== undefined ? 1 : 0) + (opts.answer !== undefined ? 1 : 0);
  if (outcome !== "responded") {
    if (given > 0) throw new CliError("--response and --answer go with respond only");
    return undefined;
  }
  if (given !== 1) {
    throw new CliError(
      "respond needs the answer: --response <json> (any JSON value) or --answer <text>, one of the two",
    );
  }
  return opts.response !== undefined ? opts.response : opts.answer;
}

/** The digest of the request's review view as it stands: the server's (GET /v1/requests/ID/view)
 * against a server, else computed from the local database's request. */
async function currentViewDigest(
  id: string,
  current: ApprovalRequest,
  remote: boolean,
): Promise<string> {
  const target = remote ? remoteTarget() : undefined;
  if (!target) return viewDigestOf(current);
  const http = createTransport({ ...target, fetch: globalThis.fetch });
  const shown = await http.call<{ viewDigest?: unknown }>(
    "GET",
    `/v1/requests/${encodeURIComponent(id)}/view`,
    { timeoutMs: 30_000 },
  );
  if (typeof shown.viewDigest !== "string") {
    throw new CliError("the server answered the request's view without its digest");
  }
  return shown.viewDigest;
}

/** Pages of at most this many pending requests are listed and decided at a time (the server's list
 * limit; `POST /v1/decisions` takes up to 200). */
const BULK_PAGE = 100;
/** A bound on the pages walked (100,000 requests), so no listing can keep the command going. */
const MAX_BULK_PAGES = 1000;

interface BulkResult {
  id: string;
  ok: boolean;
  request?: ApprovalRequest;
  status?: number;
  code?: string;
  detail?: string;
  decision?: Decision;
}

/** `airlock decide --all [--action X] [--requester R] approve|reject|revise [--comment C]`: lists
 * the pending requests that match, page by page, and sends each page to `POST /v1/decisions`, where
 * every request is decided on its own. Prints one JSON line per request, then a summary on stderr;
 * exits 1 when any was not decided. */
async function decideAll(
  word: string | undefined,
  extra: string | undefined,
  opts: DecideOptions,
): Promise<void> {
  if (extra !== undefined) {
    throw new CliError(
      `--all decides every matching request: give only the decision (\`airlock decide --all --status pending approve\`), not a request id (\`${word}\`)`,
    );
  }
  const outcome = OUTCOMES[word as keyof typeof OUTCOMES];
  if (!outcome || outcome === "responded") {
    throw new CliError(
      `decide --all expects approve, reject or revise${outcome ? " (a response answers one request: `airlock decide ID respond`)" : ""}, got \`${word ?? ""}\``,
    );
  }
  if (opts.status !== undefined && opts.status !== "pending") {
    throw new CliError(
      `--all decides pending requests only: --status must be pending, got \`${opts.status}\``,
    );
  }
  for (const flag of ["select", "edit", "key", "as", "group", "response", "answer"] as const) {
    if (opts[flag] !== undefined) {
      throw new CliError(`--${flag} decides one request; it does not go with --all`);
    }
  }
  const remote = remoteTarget();
  if (!remote) {
    throw new CliError(
      "`airlock decide --all` works against a server: set AIRLOCK_URL and AIRLOCK_TOKEN (a reviewer's token)",
    );
  }
  const client = createClient(remote);
  const http = createTransport({ ...remote, fetch: globalThis.fetch });
  let decided = 0;
  let failed = 0;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_BULK_PAGES; page++) {
    const listed = await client.list({
      status: "pending",
      ...(opts.action === undefined ? {} : { action: opts.action }),
      ...(opts.requester === undefined ? {} : { requester: opts.requester }),
      ...(cursor === undefined ? {} : { cursor }),
      limit: BULK_PAGE,
    });
    const ids = listed.items.map((r) => r.id);
    if (ids.length > 0) {
      const answer = await http.call<{ results: BulkResult[] }>("POST", "/v1/decisions", {
        body: { ids, outcome, ...(opts.comment === undefined ? {} : { comment: opts.comment }) },
        timeoutMs: 60_000,
      });
      for (const r of answer.results) {
        if (r.ok) decided++;
        else failed++;
        process.stdout.write(`${JSON.stringify(resultLine(r))}\n`);
      }
    }
    cursor = listed.nextCursor;
    if (!cursor) break;
  }
  const total = decided + failed;
  process.stderr.write(
    total === 0
      ? "no pending request matched; nothing decided\n"
      : `${decided} of ${total} decided${failed ? `, ${failed} not (see the lines with "ok":false)` : ""}\n`,
  );
  if (failed > 0) process.exitCode = 1;
}

/** One output line: the outcome for a decided request, the reason (and the winner) for the others. */
function resultLine(r: BulkResult): Record<string, unknown> {
  if (r.ok) {
    return {
      id: r.id,
      ok: true,
      status: r.request?.status,
      reviewer: r.request?.decision?.reviewer,
    };
  }
  return {
    id: r.id,
    ok: false,
    code: r.code,
    detail: r.detail,
    ...(r.decision ? { decidedBy: r.decision.reviewer, decidedOutcome: r.decision.outcome } : {}),
  };
}
