// `airlock review`: walks the pending queue a reviewer may decide, oldest first, asks about each
// with the terminal prompt (the plan-review box, then the request's review view: the agent's words
// and the exact arguments), and records each answer through the engine with channel `cli`, bound to
// the digest of the view shown (the engine logs "Human decision recorded"). When the operator does not answer in time the review
// stops: nobody is there to ask about the next one. A gate whose own deadline was reached is swept
// at once, so the engine records (and logs) its timeout.

import { type Actor, actorOf, refusalOf, withoutIdentity } from "../core/authority.js";
import { isAirlockError } from "../core/errors.js";
import { viewDigestOf } from "../core/review-view.js";
import type { ApprovalRequest } from "../core/schemas.js";
import type { Airlock } from "../engine/engine.js";
import { terminalSafe } from "../reply/format.js";
import { operatorDecision, promptOperator, reviewTimeoutMs } from "./console.js";
import { isViewChanged } from "./view-fit.js";

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
}

export type ReviewStop = "queue_empty" | "timeout" | "input_closed";

export interface ReviewResult {
  /** Decisions recorded. */
  reviewed: number;
  stopped: ReviewStop;
}

const DEFAULT_REVISION_WAIT_MS = 10_000;
const REVISION_POLL_MS = 100;

/** How many times a review shows a request again because it changed while it was shown. */
const MAX_CHANGED_SHOWN = 100;

/** Pending requests scanned per review step, at most (oldest first among them). */
const MAX_SCAN = 10_000;

export async function runReview(engine: Airlock, opts: ReviewOptions): Promise<ReviewResult> {
  const timeoutMs = opts.timeoutMs ?? reviewTimeoutMs(process.env);
  const groups = opts.groups ?? [];
  // The operator at this terminal decides through the same authority as every door.
  const actor = actorOf({ name: opts.reviewer, groups, proof: "local", channel: "cli" });
  const say = (text: string) => opts.output.write(text);
  const presented = new Set<string>();
  let reviewed = 0;
  // The request whose revision was just asked for: its agent is re-planning, so an empty queue may
  // not stay empty.
  let revising: string | undefined;
  // Requests shown again because they changed under the operator's eyes (bounded).
  let changedShown = 0;

  for (;;) {
    let next = await oldestPending(engine, actor, presented);
    if (!next && revising) {
      const waitMs = opts.revisionWaitMs ?? DEFAULT_REVISION_WAIT_MS;
      say(`Waiting up to ${Math.ceil(waitMs / 1000)} seconds for the revised request...\n`);
      const until = Date.now() + waitMs;
      while (!next && Date.now() < until) {
        await new Promise((r) => setTimeout(r, REVISION_POLL_MS));
        next = await oldestPending(engine, actor, presented);
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
      await engine.sweep();
      continue;
    }
    // The digest of the view shown now: the decision is bound to it.
    const viewDigest = viewDigestOf(next);
    const answer = await promptOperator(next, {
      input: opts.input,
      output: opts.output,
      timeoutMs: Math.min(timeoutMs, untilDeadline),
      logger: engine.logger,
      showView: true,
    });
    if (answer.outcome === "closed") return { reviewed, stopped: "input_closed" };
    if (answer.outcome === "timed_out") {
      if (untilDeadline <= timeoutMs) await engine.sweep();
      return { reviewed, stopped: "timeout" };
    }

    const decision = operatorDecision(answer, { reviewer: opts.reviewer, groups });
    if (!decision) continue;
    try {
      const decided = await engine.decideAs(actor, next.id, {
        ...withoutIdentity(decision),
        viewDigest,
      });
      reviewed++;
      revising = decided.status === "revise" ? decided.id : undefined;
      say(`Decision recorded: ${decided.status} (${next.id}).\n`);
    } catch (err) {
      // The request changed while it was on the screen: shown again, as it stands now.
      if (isViewChanged(err) && changedShown < MAX_CHANGED_SHOWN) {
        changedShown++;
        presented.delete(next.id);
        say(`Not recorded: ${next.id} changed while it was shown; here it is as it stands now.\n`);
        continue;
      }
      // Someone else decided first, the gate timed out meanwhile, or this reviewer may not decide it:
      // say so and go on with the queue.
      if (!isAirlockError(err)) throw err;
      say(`Not recorded: ${terminalSafe(err.message)}\n`);
    }
  }
}

async function oldestPending(
  engine: Airlock,
  actor: Actor,
  skip: Set<string>,
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
