// The operator's terminal prompt of pattern 2: shows the plan-review box, asks `[a/r/d]`, re-asks on
// invalid input without restarting the clock, asks "What changes do you want?" on `r` (an empty
// comment is allowed; the clock still runs while typing), and gives up when the time is over.
// It only asks: the caller records the answer (channel `cli`), e.g. with `operatorDecision`.
import type { Logger } from "pino";
import { InvalidInputError } from "../core/errors.js";
import { reviewViewOf } from "../core/review-view.js";
import type { Allowed, ApprovalRequest, DecisionInput } from "../core/schemas.js";
import { formatRequest, RULE, terminalSafe } from "../reply/format.js";
import {
  type ConsoleOption,
  type ConsoleShown,
  colourFor,
  consoleOptions,
  consoleViewLines,
  parseSelection,
} from "./console-view.js";
import { readLines } from "./lines.js";
import { fitView } from "./view-fit.js";
import { viewTextLines } from "./view-text.js";

export const DEFAULT_REVIEW_TIMEOUT_SECONDS = 120;

/** The console's timeout from `HUMAN_REVIEW_TIMEOUT` (whole seconds, default 120), in ms. */
export function reviewTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.HUMAN_REVIEW_TIMEOUT;
  if (raw === undefined || raw.trim() === "") return DEFAULT_REVIEW_TIMEOUT_SECONDS * 1000;
  const seconds = Number(raw.trim());
  if (!Number.isSafeInteger(seconds) || seconds <= 0) {
    throw new InvalidInputError(
      `Expected \`HUMAN_REVIEW_TIMEOUT\` to be a whole number of seconds from 1 and up, got \`${raw}\` (string)`,
      "HUMAN_REVIEW_TIMEOUT",
    );
  }
  return seconds * 1000;
}

/** An operator's answer; an approval's `selected` holds the ids of the items approved, when the
 * reviewer chose some (`s`). */
export type ConsoleDecision = { elapsedMs: number } & (
  | { outcome: "approved"; selected?: string[] }
  | { outcome: "revise"; comment: string }
  | { outcome: "rejected" }
  /** No answer in time; `during` tells whether the operator was choosing or typing a comment. */
  | { outcome: "timed_out"; during: "choice" | "comment" }
  /** The input ended before an answer: nobody decided. */
  | { outcome: "closed" }
);

export interface PromptOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** @default reviewTimeoutMs(process.env) */
  timeoutMs?: number;
  /** Receives "Presenting plan for human review" with `correlation_id`. */
  logger?: Logger;
  /** The operator gave the command this request answers (pattern 2's own console), so the box says
   * "Your command:". @default false: a reviewer of someone else's request sees who asked */
  ownRequest?: boolean;
  /** Show the request's review view under the box: the agent's words labelled as such and the exact
   * arguments (what runs if approved). @default false (pattern 2's own console shows its plan) */
  showView?: boolean;
}

type Choice = "approve" | "revise" | "decline";

const CHOICES: { choice: Choice; letter: string; words: string[]; allowed: Allowed }[] = [
  { choice: "approve", letter: "a", words: ["a", "approve"], allowed: "approve" },
  { choice: "revise", letter: "r", words: ["r", "revise"], allowed: "revise" },
  { choice: "decline", letter: "d", words: ["d", "decline", "reject"], allowed: "reject" },
];

/** One answer's time limit, started now (the clock keeps running while the operator is re-asked):
 * the limit, the time left and the time taken so far, in ms. */
function answerClock(timeoutMs = reviewTimeoutMs(process.env)) {
  const started = performance.now();
  const end = started + timeoutMs;
  return {
    timeoutMs,
    left: () => end - performance.now(),
    elapsedMs: () => Math.round(performance.now() - started),
  };
}

export async function promptOperator(
  request: ApprovalRequest,
  options: PromptOptions,
): Promise<ConsoleDecision> {
  const { timeoutMs, left, elapsedMs } = answerClock(options.timeoutMs);
  const say = (text: string) => options.output.write(text);

  const offered = CHOICES.filter((c) => request.allowed.includes(c.allowed));
  const letters = offered.map((c) => c.letter);
  options.logger?.info(
    {
      correlation_id: request.correlationId,
      request_id: request.id,
      timeout_seconds: Math.ceil(timeoutMs / 1000),
    },
    "Presenting plan for human review",
  );
  say(formatRequest(request, "cli", { timeoutMs, ownCommand: options.ownRequest === true }));
  if (options.showView) say(`${viewLines(request).join("\n")}\n${RULE}\n`);
  say("\n");

  const reader = readLines(options.input);
  try {
    for (;;) {
      say(`Your decision [${letters.join("/")}]: `);
      const answer = await reader.next(left());
      if (answer.kind === "timeout") {
        say(
          gateExpired(request)
            ? "\nHuman review timeout exceeded. Routing to fallback.\n"
            : `\nNo answer within ${Math.ceil(timeoutMs / 1000)} seconds; the request stays pending${request.deadline === undefined ? "" : ` until its deadline (${new Date(request.deadline).toISOString()})`}.\n`,
        );
        return { outcome: "timed_out", during: "choice", elapsedMs: elapsedMs() };
      }
      if (answer.kind === "end") {
        say("\nInput closed before a decision; nothing was decided.\n");
        return { outcome: "closed", elapsedMs: elapsedMs() };
      }
      const word = answer.text.trim().toLowerCase();
      const picked = offered.find((c) => c.words.includes(word))?.choice;
      if (picked === "approve") return { outcome: "approved", elapsedMs: elapsedMs() };
      if (picked === "decline") return { outcome: "rejected", elapsedMs: elapsedMs() };
      if (picked === "revise") {
        if (left() <= 0) {
          say("Timeout exceeded while waiting for comments.\n");
          return { outcome: "timed_out", during: "comment", elapsedMs: elapsedMs() };
        }
        say("What changes do you want? ");
        const comment = await reader.next(left());
        if (comment.kind === "timeout") {
          say("\nTimeout exceeded while waiting for comments.\n");
          return { outcome: "timed_out", during: "comment", elapsedMs: elapsedMs() };
        }
        if (comment.kind === "end") {
          say("\nInput closed before a decision; nothing was decided.\n");
          return { outcome: "closed", elapsedMs: elapsedMs() };
        }
        return { outcome: "revise", comment: comment.text.trim(), elapsedMs: elapsedMs() };
      }
      // Invalid: ask again; the deadline stays where it was.
      say(`Invalid choice. Please enter ${listOf(letters.map((l) => `'${l}'`))}.\n`);
    }
  } finally {
    reader.release();
  }
}

/** What `promptReviewer` needs besides the request shown. */
export interface ReviewerPromptOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** @default reviewTimeoutMs(process.env) */
  timeoutMs?: number;
  /** Receives "Presenting plan for human review" with `correlation_id`. */
  logger?: Logger;
  /** Colour the risk and diffs. @default colourFor(output): a terminal without NO_COLOR */
  colour?: boolean;
}

const REVIEWER_CHOICES: { key: ConsoleOption["key"]; words: string[] }[] = [
  { key: "a", words: ["a", "approve"] },
  { key: "s", words: ["s", "select"] },
  { key: "r", words: ["r", "revise"] },
  { key: "d", words: ["d", "decline", "reject"] },
];

const CONFIRM_WORDS = new Set(["y", "yes"]);

/** The reviewer's console (`airlock review`): shows the request's review view (console-view.ts),
 * asks `[a/s/r/d]` (only what the request allows), re-asks on invalid input without restarting the
 * clock. `s` asks which items (positions like 1,3 or 2-4); `r` asks for the comment. An approval the
 * inbox would confirm first (core/danger.ts: the agent's high or critical risk, what the args would
 * run) is confirmed here the same way: the reviewer types `yes` (or `y`), anything else goes back to
 * the choice. It only asks: the caller records the answer, bound to `shown.viewDigest`. */
export async function promptReviewer(
  shown: ConsoleShown,
  options: ReviewerPromptOptions,
): Promise<ConsoleDecision> {
  const { timeoutMs, left, elapsedMs } = answerClock(options.timeoutMs);
  const say = (text: string) => options.output.write(text);
  const colour = options.colour ?? colourFor(options.output);
  const view = shown.view;
  const noun = shown.labels.itemNoun ?? "items";

  const offered = consoleOptions(shown).map((o) => o.key);
  const choices = REVIEWER_CHOICES.filter((c) => offered.includes(c.key));
  options.logger?.info(
    {
      correlation_id: shown.correlationId,
      request_id: view.id,
      timeout_seconds: Math.ceil(timeoutMs / 1000),
    },
    "Presenting plan for human review",
  );
  say(`${consoleViewLines(shown, { colour, timeoutMs }).join("\n")}\n`);

  const reader = readLines(options.input);
  /** The next line, or the answer that ends the prompt (no answer in time, input closed). */
  const ask = async (
    prompt: string,
    during: "choice" | "comment",
  ): Promise<{ line: string } | { done: ConsoleDecision }> => {
    if (left() <= 0) return { done: timedOut(during) };
    say(prompt);
    const answer = await reader.next(left());
    if (answer.kind === "timeout") return { done: timedOut(during) };
    if (answer.kind === "end") {
      say("\nInput closed before a decision; nothing was decided.\n");
      return { done: { outcome: "closed", elapsedMs: elapsedMs() } };
    }
    return { line: answer.text.trim() };
  };
  const timedOut = (during: "choice" | "comment"): ConsoleDecision => {
    if (during === "comment") say("\nTimeout exceeded while waiting for comments.\n");
    else {
      say(
        shown.deadline !== undefined && shown.deadline - Date.now() <= DEADLINE_SLACK_MS
          ? "\nHuman review timeout exceeded. Routing to fallback.\n"
          : `\nNo answer within ${Math.ceil(timeoutMs / 1000)} seconds; the request stays pending${shown.deadline === undefined ? "" : ` until its deadline (${new Date(shown.deadline).toISOString()})`}.\n`,
      );
    }
    return { outcome: "timed_out", during, elapsedMs: elapsedMs() };
  };
  /** The same confirmation as the inbox's: true when the reviewer typed yes. */
  const confirm = async (what: string): Promise<boolean | { done: ConsoleDecision }> => {
    say(`This asks to confirm first: ${shown.confirmReasons.map(oneLine).join("; ")}.\n`);
    const got = await ask(`Type yes to approve ${what} (anything else goes back): `, "choice");
    if ("done" in got) return got;
    if (CONFIRM_WORDS.has(got.line.toLowerCase())) return true;
    say("Not approved.\n");
    return false;
  };

  try {
    for (;;) {
      const got = await ask(`Your decision [${choices.map((c) => c.key).join("/")}]: `, "choice");
      if ("done" in got) return got.done;
      const word = got.line.toLowerCase();
      const picked = choices.find((c) => c.words.includes(word))?.key;
      if (picked === "a") {
        if (shown.confirmReasons.length > 0) {
          const ok = await confirm(`“${oneLine(view.title)}”`);
          if (typeof ok === "object") return ok.done;
          if (!ok) continue;
        }
        return { outcome: "approved", elapsedMs: elapsedMs() };
      }
      if (picked === "s") {
        const chosen = await chooseItems();
        if ("done" in chosen) return chosen.done;
        if (chosen.ids === undefined) continue;
        if (shown.confirmReasons.length > 0) {
          const ok = await confirm(`the ${chosen.ids.length} chosen ${noun} (${chosen.positions})`);
          if (typeof ok === "object") return ok.done;
          if (!ok) continue;
        }
        return { outcome: "approved", selected: chosen.ids, elapsedMs: elapsedMs() };
      }
      if (picked === "d") return { outcome: "rejected", elapsedMs: elapsedMs() };
      if (picked === "r") {
        for (;;) {
          const comment = await ask("What changes do you want? ", "comment");
          if ("done" in comment) return comment.done;
          if (comment.line !== "" || !shown.commentRequired) {
            return { outcome: "revise", comment: comment.line, elapsedMs: elapsedMs() };
          }
          say("Say what should change: this request needs a comment.\n");
        }
      }
      // Invalid: ask again; the deadline stays where it was.
      say(`Invalid choice. Please enter ${listOf(choices.map((c) => `'${c.key}'`))}.\n`);
    }
  } finally {
    reader.release();
  }

  /** Asks which items until the answer is a selection; an empty answer goes back (ids undefined). */
  async function chooseItems(): Promise<
    { done: ConsoleDecision } | { ids?: string[]; positions?: string }
  > {
    for (;;) {
      const got = await ask(
        `Which ${noun} do you approve? Numbers from 1 to ${view.items.length}, like 1,3 or 2-4 (empty goes back): `,
        "choice",
      );
      if ("done" in got) return got;
      if (got.line === "") return {};
      const parsed = parseSelection(got.line, view.items);
      if ("error" in parsed) {
        say(`${parsed.error}\n`);
        continue;
      }
      const positions = parsed.ids
        .map((id) => view.items.findIndex((i) => i.id === id) + 1)
        .join(",");
      return { ids: parsed.ids, positions };
    }
  }
}

function oneLine(s: string): string {
  return terminalSafe(s.replace(/\s+/g, " ").trim());
}

/** The decision to record for an operator's answer, or undefined when there is none to record
 * (timeout, closed input: the gate's own deadline settles those). */
export function operatorDecision(
  answer: ConsoleDecision,
  who: { reviewer: string; groups?: string[] },
): DecisionInput | undefined {
  const base = { reviewer: who.reviewer, groups: who.groups ?? [], channel: "cli" } as const;
  switch (answer.outcome) {
    case "approved":
      return answer.selected === undefined
        ? { ...base, outcome: "approved" }
        : { ...base, outcome: "approved", selected: answer.selected };
    case "revise":
      return { ...base, outcome: "revise", comment: answer.comment };
    case "rejected":
      return { ...base, outcome: "rejected", method: "reject" };
    default:
      return undefined;
  }
}

/** The parts of the request's review view a terminal shows under the box: the agent's words and
 * the exact arguments, whole (a terminal has no limit), terminal-safe. */
export function viewLines(request: ApprovalRequest): string[] {
  const fitted = fitView(reviewViewOf(request), Number.POSITIVE_INFINITY);
  const parts = { ...fitted, parts: fitted.parts.filter((p) => VIEW_PARTS.has(p.key)) };
  const lines = viewTextLines(parts, { withoutTitle: true, withoutFacts: true });
  return terminalSafe(lines.join("\n"), { multiline: true }).split("\n");
}

const VIEW_PARTS = new Set(["agentSummary", "args"]);

/** Whether the request's own deadline has come (within the timer's slack): then the gate times out
 * and its fallback runs; otherwise only this console stopped waiting. */
function gateExpired(request: ApprovalRequest): boolean {
  return request.deadline !== undefined && request.deadline - Date.now() <= DEADLINE_SLACK_MS;
}

const DEADLINE_SLACK_MS = 250;

function listOf(words: string[]): string {
  if (words.length <= 1) return words.join("");
  if (words.length === 2) return `${words[0]} or ${words[1]}`;
  return `${words.slice(0, -1).join(", ")}, or ${words[words.length - 1]}`;
}
