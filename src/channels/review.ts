// `airlock review`: walks the pending queue a reviewer may decide, oldest first, shows each request's
// review view (console-view.ts: its kind and action, the risk, a revision with what changed, the
// agent's words labelled as such, the exact arguments, the preview with its diff coloured, the items
// to choose from), asks about it (console.ts: promptReviewer, with the inbox's confirmation before a
// risky approval) and records the answer bound to the digest of the view shown. A request that
// changed while it was on the screen is shown again as it stands.
//
// Two sources, one console:
// - the local database (`runReview`): the operator at this machine decides as the name given
//   (`--as`), through core/authority.ts like every door, with channel `cli`;
// - a server (`runRemoteReview`, `airlock review --url --token`): the queue is what the token may
//   see, the view and its digest come from `GET /v1/requests/{id}/view`, the decision goes to
//   `POST /v1/requests/{id}/decisions` and is recorded as the token's principal (never a name from
//   this machine). A refusal is the server's, shown in one line; one that holds for every request
//   (an agent's token, a token with no deciding role) ends the review.
//
// When the operator does not answer in time the review stops: nobody is there to ask about the next
// one. On the local database a gate whose own deadline was reached is swept at once, so the engine
// records (and logs) its timeout; a server's sweeper does that itself.
import type { Logger } from "pino";
import { createTransport, type Transport } from "../client/http.js";
import { type AirlockClient, createClient } from "../client/index.js";
import { type Actor, actorOf, refusalOf, withoutIdentity } from "../core/authority.js";
import { needsConfirmation } from "../core/danger.js";
import { isAirlockError } from "../core/errors.js";
import { type ReviewView, reviewViewOf, viewDigestOf } from "../core/review-view.js";
import type { ApprovalRequest, DecisionInput } from "../core/schemas.js";
import type { Airlock } from "../engine/engine.js";
import { terminalSafe } from "../reply/format.js";
import {
  type ConsoleDecision,
  operatorDecision,
  promptReviewer,
  reviewTimeoutMs,
} from "./console.js";
import {
  type ConsoleShown,
  consoleOptions,
  consoleShownOf,
  type RevisionShown,
} from "./console-view.js";
import { digestOf, isViewChanged } from "./view-fit.js";

export interface ReviewOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  reviewer: string;
  /** Per request. @default reviewTimeoutMs(process.env) (HUMAN_REVIEW_TIMEOUT, 120 s) */
  timeoutMs?: number;
  groups?: string[];
  /** After a revision was asked for and the queue is empty, how long to wait for the agent's revised
   * request before stopping. @default 10000 */
  revisionWaitMs?: number;
  /** Colour the risk and diffs. @default a terminal without NO_COLOR */
  colour?: boolean;
}

/** A review through a server: who reviews is the token's holder. */
export interface RemoteReviewOptions extends Omit<ReviewOptions, "reviewer" | "groups"> {
  url: string;
  /** A reviewer's (or admin's) API token. */
  token: string;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
}

/** `refused`: the server refused the token's decisions outright (an agent's token, a token with no
 * deciding role): no request in the queue could be decided with it. */
export type ReviewStop = "queue_empty" | "timeout" | "input_closed" | "refused";

export interface ReviewResult {
  /** Decisions recorded. */
  reviewed: number;
  stopped: ReviewStop;
  /** The server's refusal, in one line, when `stopped` is `refused`. */
  refusal?: string;
}

/** Where a review reads its queue and records its decisions. */
interface ReviewSource {
  /** The oldest pending request this reviewer may be asked about, not in `skip`. */
  next(skip: ReadonlySet<string>): Promise<ApprovalRequest | undefined>;
  /** The request as the console shows it, with the digest of that view. */
  show(request: ApprovalRequest): Promise<ConsoleShown>;
  decide(
    request: ApprovalRequest,
    answer: ConsoleDecision,
    viewDigest: string,
  ): Promise<ApprovalRequest>;
  /** A gate's own deadline passed while it was shown: let its timeout be recorded. */
  sweep(): Promise<void>;
  /** A refusal that holds for every request this reviewer could be shown, in one line. */
  refusesAll(err: unknown): string | undefined;
  /** How often to look for an agent's revised request. */
  pollMs: number;
  logger?: Logger;
}

const DEFAULT_REVISION_WAIT_MS = 10_000;
const REVISION_POLL_MS = 100;
/** Through a server, a listing per half second (the token's rate limit is shared). */
const REMOTE_REVISION_POLL_MS = 500;

/** How many times a review shows a request again because it changed while it was shown. */
const MAX_CHANGED_SHOWN = 100;

/** Pending requests scanned per review step, at most (oldest first among them). */
const MAX_SCAN = 10_000;

/** Reviews the local database's queue as `opts.reviewer`. */
export async function runReview(engine: Airlock, opts: ReviewOptions): Promise<ReviewResult> {
  return review(localSource(engine, opts), opts);
}

/** Reviews a server's queue as the holder of `opts.token`. */
export async function runRemoteReview(opts: RemoteReviewOptions): Promise<ReviewResult> {
  return review(remoteSource(opts), opts);
}

async function review(
  source: ReviewSource,
  opts: Omit<ReviewOptions, "reviewer" | "groups">,
): Promise<ReviewResult> {
  const timeoutMs = opts.timeoutMs ?? reviewTimeoutMs(process.env);
  const say = (text: string) => opts.output.write(text);
  const presented = new Set<string>();
  let reviewed = 0;
  // The request whose revision was just asked for: its agent is re-planning, so an empty queue may
  // not stay empty.
  let revising: string | undefined;
  // Requests shown again because they changed under the operator's eyes (bounded).
  let changedShown = 0;

  for (;;) {
    let next = await source.next(presented);
    if (!next && revising) {
      const waitMs = opts.revisionWaitMs ?? DEFAULT_REVISION_WAIT_MS;
      say(`Waiting up to ${Math.ceil(waitMs / 1000)} seconds for the revised request...\n`);
      const until = Date.now() + waitMs;
      while (!next && Date.now() < until) {
        await new Promise((r) => setTimeout(r, source.pollMs));
        next = await source.next(presented);
      }
      revising = undefined;
      if (!next) say("No revised request arrived.\n");
    }
    if (!next) {
      say(
        reviewed === 0
          ? "No pending requests to review.\n"
          : "No more pending requests to review.\n",
      );
      return { reviewed, stopped: "queue_empty" };
    }
    presented.add(next.id);

    const untilDeadline = next.deadline === undefined ? Infinity : next.deadline - Date.now();
    if (untilDeadline <= 0) {
      await source.sweep();
      continue;
    }
    // The view shown now, and its digest: the decision is bound to it.
    let shown: ConsoleShown;
    try {
      shown = await source.show(next);
    } catch (err) {
      // Gone from this reviewer's sight between the listing and the view (escalated to others,
      // pruned): nothing to ask about.
      if (!isAirlockError(err, "not_found")) throw err;
      say(`Not shown: ${next.id} is no longer there for you to decide.\n`);
      continue;
    }
    if (consoleOptions(shown).length === 0) {
      // Only an answer (`respond`) or an edit is allowed: the console asks neither.
      say(
        `Skipped ${next.id}: it asks for a decision the console does not take (${shown.view.allowed.join(", ")}); decide it in the inbox.\n`,
      );
      continue;
    }
    const answer = await promptReviewer(shown, {
      input: opts.input,
      output: opts.output,
      timeoutMs: Math.min(timeoutMs, untilDeadline),
      ...(source.logger ? { logger: source.logger } : {}),
      ...(opts.colour === undefined ? {} : { colour: opts.colour }),
    });
    if (answer.outcome === "closed") return { reviewed, stopped: "input_closed" };
    if (answer.outcome === "timed_out") {
      if (untilDeadline <= timeoutMs) await source.sweep();
      return { reviewed, stopped: "timeout" };
    }

    try {
      const decided = await source.decide(next, answer, shown.viewDigest);
      reviewed++;
      revising = decided.status === "revise" ? decided.id : undefined;
      say(
        decided.status === "pending"
          ? `Approval recorded (${decided.decisions.filter((d) => d.outcome === "approved").length} of ${decided.quorum} needed; ${next.id} stays pending).\n`
          : `Decision recorded: ${decided.status} (${next.id}).\n`,
      );
    } catch (err) {
      // The request changed while it was on the screen: shown again, as it stands now.
      if (isViewChanged(err) && changedShown < MAX_CHANGED_SHOWN) {
        changedShown++;
        presented.delete(next.id);
        say(`Not recorded: ${next.id} changed while it was shown; here it is as it stands now.\n`);
        continue;
      }
      if (!isAirlockError(err)) throw err;
      const all = source.refusesAll(err);
      if (all !== undefined) {
        say(`Refused by the server: ${terminalSafe(all)}\n`);
        return { reviewed, stopped: "refused", refusal: all };
      }
      // Someone else decided first, the gate timed out meanwhile, or this reviewer may not decide it:
      // say so and go on with the queue.
      say(`Not recorded: ${terminalSafe(err.message)}\n`);
    }
  }
}

// --- the local database ---------------------------------------------------------------------------

function localSource(engine: Airlock, opts: ReviewOptions): ReviewSource {
  const groups = opts.groups ?? [];
  // The operator at this terminal decides through the same authority as every door.
  const actor = actorOf({ name: opts.reviewer, groups, proof: "local", channel: "cli" });
  return {
    next: (skip) => oldestLocal(engine, actor, skip),
    async show(request) {
      const revision =
        request.revisionOf === undefined
          ? undefined
          : await revisionShown(request.revisionOf, async (id) => {
              const previous = await engine.get(id);
              return { view: reviewViewOf(previous), request: previous };
            });
      return consoleShownOf(request, {
        viewDigest: viewDigestOf(request),
        ...(revision ? { revision } : {}),
      });
    },
    async decide(request, answer, viewDigest) {
      const decision = operatorDecision(answer, { reviewer: opts.reviewer, groups });
      if (!decision) throw new Error("no decision to record"); // closed and timed out returned before
      return engine.decideAs(actor, request.id, { ...withoutIdentity(decision), viewDigest });
    },
    sweep: () => engine.sweep().then(() => undefined),
    // Each refusal on the local database is about one request (the operator's own, one not theirs).
    refusesAll: () => undefined,
    pollMs: REVISION_POLL_MS,
    logger: engine.logger,
  };
}

async function oldestLocal(
  engine: Airlock,
  actor: Actor,
  skip: ReadonlySet<string>,
): Promise<ApprovalRequest | undefined> {
  let oldest: ApprovalRequest | undefined;
  let cursor: string | undefined;
  let scanned = 0;
  do {
    const page = await engine.list({
      status: "pending",
      approver: [actor.name, ...actor.groups],
      limit: 500,
      ...(cursor ? { cursor } : {}),
    });
    for (const r of page.items) {
      // Only what this operator may decide (core/authority.ts: never their own request, nor one
      // they approved already); the engine would refuse the rest anyway.
      if (skip.has(r.id) || refusalOf(actor, r) !== undefined) continue;
      if (!oldest || r.id < oldest.id) oldest = r;
    }
    scanned += page.items.length;
    cursor = page.nextCursor;
  } while (cursor && scanned < MAX_SCAN);
  return oldest;
}

/** The previous version of a revision, or why it cannot be shown. */
async function revisionShown(
  of: string,
  read: (id: string) => Promise<{ view: ReviewView; request: ApprovalRequest }>,
): Promise<RevisionShown> {
  try {
    const { view, request } = await read(of);
    const comment = request.decision?.outcome === "revise" ? request.decision.comment : undefined;
    return { of, previous: view, ...(comment?.trim() ? { comment } : {}) };
  } catch (err) {
    if (!isAirlockError(err, "not_found")) throw err;
    return { of, unavailable: "the previous version is no longer stored, or not yours to see" };
  }
}

// --- a server -------------------------------------------------------------------------------------

/** Requests listed per page of a server's queue (its largest page). */
const REMOTE_PAGE = 100;

function remoteSource(opts: RemoteReviewOptions): ReviewSource {
  const client: AirlockClient = createClient({
    url: opts.url,
    token: opts.token,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  const http: Transport = createTransport({
    url: opts.url,
    token: opts.token,
    fetch: opts.fetch ?? globalThis.fetch,
  });
  const viewOf = async (id: string): Promise<{ view: ReviewView; viewDigest: string }> => {
    const answer = await http.call<{ view?: ReviewView; viewDigest?: unknown }>(
      "GET",
      `/v1/requests/${encodeURIComponent(id)}/view`,
      { timeoutMs: 30_000, subject: { what: "request", id } },
    );
    const viewDigest = digestOf(answer.viewDigest);
    if (answer.view === undefined || viewDigest === undefined) {
      throw new Error(`the server answered the view of ${id} without the view or its digest`);
    }
    return { view: answer.view, viewDigest };
  };
  return {
    async next(skip) {
      // The server lists what the token may see: for a reviewer, what it or its groups may decide.
      let cursor: string | undefined;
      let scanned = 0;
      do {
        const page = await client.list({
          status: "pending",
          order: "oldest",
          limit: REMOTE_PAGE,
          ...(cursor ? { cursor } : {}),
        });
        const found = page.items.find((r) => !skip.has(r.id));
        if (found) return found;
        scanned += page.items.length;
        cursor = page.nextCursor;
      } while (cursor && scanned < MAX_SCAN);
      return undefined;
    },
    async show(listed) {
      // The view is the server's; the facts around it are read again with it.
      const { view, viewDigest } = await viewOf(listed.id);
      const request = await client.get(listed.id);
      const revision =
        view.revisionOf === undefined
          ? undefined
          : await revisionShown(view.revisionOf, async (id) => {
              const previous = await client.get(id);
              return { view: reviewViewOf(previous), request: previous };
            });
      const shown = consoleShownOf(request, {
        view,
        viewDigest,
        ...(revision ? { revision } : {}),
      });
      // Whether approving asks to confirm is read from what the view shows (the server's), so a
      // request that changed between the two reads is never confirmed on less than was shown.
      shown.confirmReasons = needsConfirmation({
        ...request,
        action: view.action,
        args: view.args,
        items: view.items,
        ...(view.risk === undefined ? {} : { risk: view.risk as ApprovalRequest["risk"] }),
        ...(view.preview === undefined ? {} : { preview: view.preview }),
      }).reasons;
      return shown;
    },
    async decide(request, answer, viewDigest) {
      // No reviewer, groups nor channel: the server records the token's principal (channel `api`).
      const body: Omit<DecisionInput, "reviewer"> = { outcome: "approved", viewDigest };
      switch (answer.outcome) {
        case "approved":
          if (answer.selected !== undefined) body.selected = answer.selected;
          break;
        case "revise":
          body.outcome = "revise";
          body.comment = answer.comment;
          break;
        case "rejected":
          body.outcome = "rejected";
          break;
        default:
          throw new Error("no decision to record"); // closed and timed out returned before
      }
      // The client's type asks for a reviewer; the server takes it from the token.
      return client.decide(request.id, body as DecisionInput);
    },
    // The server's sweeper records a gate's timeout.
    sweep: async () => {},
    pollMs: REMOTE_REVISION_POLL_MS,
    refusesAll(err) {
      if (!isAirlockError(err, "forbidden")) return undefined;
      const message = err.message;
      // The server's words for a credential that decides nothing (server/auth.ts requireRole, the
      // server refusing the token, core/authority.ts for an agent's credential or one with no
      // deciding role): the same answer would come for every request.
      return TOKEN_WIDE.some((re) => re.test(message)) ? oneLine(message) : undefined;
    },
  };
}

const TOKEN_WIDE = [
  /^this route needs the role /,
  /^the server refused the token/,
  /acts with an agent's credential/,
  /^the credential of .* may read .* but not decide it/,
];

function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}
