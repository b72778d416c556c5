// The console's renderer of a request's review view (core/review-view.ts): what `airlock review`
// prints for each request, on the local database and through a server alike. One function from the
// view (and the few facts around it: correlation id, labels, why approving asks to confirm, the
// previous revision) to lines of text:
// - a heading by the kind of request (a plan of steps, a command, a question, an approval) and its
//   action, then the title;
// - the risk (the agent's label, coloured), and why approving asks to confirm first (core/danger.ts,
//   the inbox's rule);
// - a revision marked as such, with what changed since the version it revises, as a coloured diff;
// - the agent's words labelled as its own, the exact args as canonical pretty JSON (or "none"), the
//   preview (a unified diff coloured + green, - red), the items numbered for selection;
// - the options the request allows.
// Everything an agent wrote goes through terminalSafe before any colour is added, so the colours are
// the console's own escapes and nobody else's.
import { createTwoFilesPatch } from "diff";
import { needsConfirmation } from "../core/danger.js";
import { buttonLabel } from "../core/labels.js";
import { presentationOf } from "../core/presentation.js";
import { type ReviewView, reviewViewOf } from "../core/review-view.js";
import type { ApprovalRequest, Labels } from "../core/schemas.js";
import { RULE, terminalSafe } from "../reply/format.js";
import { argsJson, itemsText } from "./view-fit.js";

/** A request as the console shows it: its view, the digest a decision on it carries, and the facts
 * around it that are not part of the view. */
export interface ConsoleShown {
  view: ReviewView;
  /** The digest of `view` (the server's, or computed from the local database). */
  viewDigest: string;
  correlationId?: string;
  /** The request's own deadline (epoch ms), when it has one. */
  deadline?: number;
  labels: Labels;
  /** Why approving asks to confirm first (core/danger.ts); empty: it does not. */
  confirmReasons: string[];
  /** The version this one revises, when it is a revision. */
  revision?: RevisionShown;
  /** Asking for a revision needs a comment (`revisionCommentRequired`). */
  commentRequired?: boolean;
}

/** The previous version of a revised request, as far as the console could read it. */
export interface RevisionShown {
  /** The id of the request revised (`revisionOf`). */
  of: string;
  /** Its view; absent when it could not be read (pruned, or not visible to this reviewer). */
  previous?: ReviewView;
  /** The comment that asked for the revision. */
  comment?: string;
  /** Why the previous version is not shown, in words. */
  unavailable?: string;
}

/** The console's facts of a request (the view computed here: on the local database). */
export function consoleShownOf(
  request: ApprovalRequest,
  options: { view?: ReviewView; viewDigest: string; revision?: RevisionShown },
): ConsoleShown {
  const shown: ConsoleShown = {
    view: options.view ?? reviewViewOf(request),
    viewDigest: options.viewDigest,
    correlationId: request.correlationId,
    labels: presentationOf(request).labels,
    confirmReasons: needsConfirmation(request).reasons,
  };
  if (request.deadline !== undefined) shown.deadline = request.deadline;
  if (request.revisionCommentRequired === true) shown.commentRequired = true;
  if (options.revision) shown.revision = options.revision;
  return shown;
}

// --- colour ---------------------------------------------------------------------------------------

export interface Palette {
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
  bold(s: string): string;
  dim(s: string): string;
  /** White on red, padded by a space each side: a critical risk. */
  alarm(s: string): string;
}

const sgr =
  (open: string, close: string) =>
  (s: string): string =>
    s === "" ? s : `\u001b[${open}m${s}\u001b[${close}m`;

const COLOURED: Palette = {
  red: sgr("31", "39"),
  green: sgr("32", "39"),
  yellow: sgr("33", "39"),
  cyan: sgr("36", "39"),
  bold: sgr("1", "22"),
  dim: sgr("2", "22"),
  alarm: (s) => (s === "" ? s : `\u001b[1;37;41m ${s} \u001b[0m`),
};

const same = (s: string) => s;
const PLAIN: Palette = {
  red: same,
  green: same,
  yellow: same,
  cyan: same,
  bold: same,
  dim: same,
  alarm: same,
};

export function palette(colour: boolean): Palette {
  return colour ? COLOURED : PLAIN;
}

/** Whether to colour what goes to `output`: a terminal, unless NO_COLOR is set (any value but
 * empty) or TERM is `dumb`; FORCE_COLOR (not `0`) colours even a pipe. */
export function colourFor(
  output: NodeJS.WritableStream,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0") {
    return true;
  }
  if (env.TERM === "dumb") return false;
  return (output as { isTTY?: boolean }).isTTY === true;
}

// --- the view as lines ----------------------------------------------------------------------------

/** What the request is, for the heading: a plan of steps, a command, a question, or an approval. */
export function kindOf(view: ReviewView, labels: Labels): string {
  if (view.items.length > 0) {
    const noun = labels.itemNoun ?? "items";
    return `REVIEW OF ${view.items.length} ${noun.toUpperCase()}`;
  }
  if (view.command?.trim()) return "COMMAND REVIEW";
  if (view.question?.trim()) return "QUESTION";
  return "APPROVAL REQUESTED";
}

const safe = (s: string) => terminalSafe(s, { multiline: true });
const oneLine = (s: string) =>
  terminalSafe(
    s
      .split(/\r\n|\r|\n/)
      .map((l) => l.trim())
      .filter((l) => l !== "")
      .join(" "),
  );
const indent = (text: string, by = "  ") => text.split("\n").map((l) => `${by}${l}`);

/** The risk, in words and colour: the agent's own label when it gave one. */
export function riskLine(shown: ConsoleShown, p: Palette): string {
  const risk = shown.view.risk;
  const confidence =
    shown.view.confidence === undefined ? "" : ` · confidence ${shown.view.confidence}%`;
  if (risk === undefined) {
    return `Risk: ${p.dim("not stated by the agent")}${confidence}`;
  }
  const word = risk.toUpperCase();
  const painted =
    risk === "critical"
      ? p.alarm(word)
      : risk === "high"
        ? p.bold(p.red(word))
        : risk === "medium"
          ? p.yellow(word)
          : p.green(word);
  return `Risk: ${painted} (the agent's own label)${confidence}`;
}

/** A unified diff's lines coloured: + green, - red, hunk headers cyan, file headers bold. Inside a
 * hunk (as long as the line counts of its `@@ -a,b +c,d @@` header last) a line is read by its first
 * character only, so a removed `--- x` line is a removal, not a file header. */
export function diffLines(text: string, p: Palette): string[] {
  let oldLeft = 0;
  let newLeft = 0;
  return text.split("\n").map((line) => {
    if (oldLeft > 0 || newLeft > 0) {
      if (line.startsWith("+")) {
        newLeft--;
        return p.green(line);
      }
      if (line.startsWith("-")) {
        oldLeft--;
        return p.red(line);
      }
      if (line.startsWith("\\")) return p.dim(line); // \ No newline at end of file
      oldLeft--;
      newLeft--;
      return line;
    }
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (hunk) {
      oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
      newLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      return p.cyan(line);
    }
    if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ")) {
      return p.bold(line);
    }
    // A diff without counts to go by (a hand-written one): by the first character.
    if (line.startsWith("@@")) return p.cyan(line);
    if (line.startsWith("+")) return p.green(line);
    if (line.startsWith("-")) return p.red(line);
    return line;
  });
}

/** True when the text reads as a unified diff (a hunk header near the top). */
export function looksLikeDiff(text: string): boolean {
  return text
    .split("\n", 30)
    .some((l) => l.startsWith("@@ ") || l.startsWith("+++ ") || l.startsWith("diff --git"));
}

/** The view as text a diff between two versions compares. */
function comparable(view: ReviewView): string {
  const out = [`Title: ${view.title}`, `Risk: ${view.risk ?? "not stated"}`];
  if (view.command?.trim()) out.push("", "Command:", view.command);
  if (view.question?.trim()) out.push("", "Question:", view.question);
  if (view.agentSummary?.trim()) out.push("", "The agent says:", view.agentSummary);
  out.push("", "Arguments:", argsJson(view.args));
  if (view.preview?.trim()) out.push("", "Preview:", view.preview);
  if (view.items.length > 0) out.push("", "Items:", itemsText(view));
  return out.join("\n");
}

/** The parts of a view that differ between two versions, by name. */
export function changedParts(before: ReviewView, after: ReviewView): string[] {
  const out: string[] = [];
  if (before.title !== after.title) out.push("title");
  if (before.risk !== after.risk) out.push("risk");
  if (before.command !== after.command) out.push("command");
  if (before.question !== after.question) out.push("question");
  if (before.agentSummary !== after.agentSummary) out.push("the agent's words");
  if (before.argsHash !== after.argsHash) out.push("arguments");
  if (before.preview !== after.preview) out.push("preview");
  if (itemsText(before) !== itemsText(after)) out.push("items");
  return out;
}

/** The most characters of each version the console compares (a diff of more is not shown). */
const MAX_COMPARED_CHARS = 100_000;

/** What changed between two versions as a unified diff (context 2), or undefined when they are too
 * large or too different to compare in bounded time. */
export function revisionDiff(before: ReviewView, after: ReviewView): string | undefined {
  const a = comparable(before);
  const b = comparable(after);
  if (a.length > MAX_COMPARED_CHARS || b.length > MAX_COMPARED_CHARS) return undefined;
  const patch = createTwoFilesPatch(
    "previous version",
    "this version",
    a,
    b,
    undefined,
    undefined,
    {
      context: 2,
      maxEditLength: 5_000,
    },
  );
  if (patch === undefined) return undefined;
  return patch
    .split("\n")
    .filter((l) => !l.startsWith("Index:") && !l.startsWith("=====") && !l.startsWith("\\ No"))
    .join("\n")
    .trimEnd();
}

function revisionLines(shown: ConsoleShown, p: Palette): string[] {
  const rev = shown.revision;
  if (!rev) return [];
  const asked = rev.comment?.trim() ? `; asked for: “${oneLine(rev.comment)}”` : "";
  const out = [p.bold(p.yellow(`REVISION of ${oneLine(rev.of)}${asked}`))];
  if (!rev.previous) {
    out.push(
      `What changed cannot be shown: ${oneLine(rev.unavailable ?? "the previous version could not be read")}.`,
    );
    return out;
  }
  const parts = changedParts(rev.previous, shown.view);
  if (parts.length === 0) {
    out.push("What changed since the previous version: nothing it shows.");
    return out;
  }
  out.push(`What changed since the previous version: ${parts.join(", ")}.`);
  const diff = revisionDiff(rev.previous, shown.view);
  if (diff === undefined) out.push("  (too large or too different to show line by line)");
  else out.push(...indent(diffLines(safe(diff), p).join("\n")));
  return out;
}

export interface ConsoleOption {
  /** The key the reviewer types. */
  key: "a" | "s" | "r" | "d";
  label: string;
}

/** The options the request allows, in the console's words. */
export function consoleOptions(shown: ConsoleShown): ConsoleOption[] {
  const v = shown.view;
  const allowed = new Set(v.allowed);
  const noun = shown.labels.itemNoun ?? "items";
  const approve = buttonLabel("approve", shown.labels.approve);
  const reject = buttonLabel("reject", shown.labels.reject);
  const out: ConsoleOption[] = [];
  if (allowed.has("approve")) {
    out.push({
      key: "a",
      label: v.items.length > 0 ? `${approve} (all ${v.items.length} ${noun})` : approve,
    });
  }
  if (allowed.has("select") && v.items.length > 0) {
    out.push({ key: "s", label: `Approve only some ${noun} (you give their numbers)` });
  }
  if (allowed.has("revise")) out.push({ key: "r", label: "Revise - ask for changes (a comment)" });
  if (allowed.has("reject")) out.push({ key: "d", label: reject });
  return out;
}

export interface ConsoleViewOptions {
  colour?: boolean;
  /** The console's own time limit for this answer (ms), shown as the timeout. */
  timeoutMs?: number;
}

/** The request as the console prints it, line by line (no trailing prompt). */
export function consoleViewLines(shown: ConsoleShown, options: ConsoleViewOptions = {}): string[] {
  const p = palette(options.colour === true);
  const v = shown.view;
  const out: string[] = ["", RULE];
  out.push(p.bold(`${kindOf(v, shown.labels)} · ${oneLine(v.action)}`));
  out.push(p.bold(oneLine(v.title)));
  out.push(RULE);
  out.push(riskLine(shown, p));
  if (shown.confirmReasons.length > 0) {
    out.push(
      p.yellow(`Approving asks to confirm first: ${shown.confirmReasons.map(oneLine).join("; ")}.`),
    );
  }
  const facts = [`Request: ${oneLine(v.id)}`];
  // A correlation id of its own (pattern 2's), not the request id it defaults to.
  if (shown.correlationId && shown.correlationId !== v.id)
    facts.push(`Correlation ID: ${oneLine(shown.correlationId)}`);
  out.push(facts.join(" · "));
  const approvers = v.approvers.length > 0 ? v.approvers.join(", ") : "anyone but the requester";
  const who = [`Requested by: ${oneLine(v.requester)}`, `Approvers: ${oneLine(approvers)}`];
  if (v.quorum > 1) who.push(`${v.quorum} approvals needed`);
  out.push(who.join(" · "));
  const revision = revisionLines(shown, p);
  if (revision.length > 0) out.push("", ...revision);
  if (v.question?.trim()) out.push("", p.bold("Question:"), ...indent(safe(v.question)));
  if (v.command?.trim()) out.push("", p.bold("Command:"), ...indent(safe(v.command)));
  if (v.agentSummary?.trim()) {
    out.push(
      "",
      p.bold("The agent says (its own words, not checked by Airlock):"),
      ...indent(safe(v.agentSummary.trimEnd())),
    );
  }
  if (Object.keys(v.args).length === 0) {
    out.push("", `${p.bold("Exact arguments (what runs if approved):")} none`);
  } else {
    out.push(
      "",
      p.bold("Exact arguments (what runs if approved):"),
      ...indent(terminalSafe(argsJson(v.args), { multiline: true })),
    );
  }
  if (v.preview?.trim()) {
    const preview = safe(v.preview.trimEnd());
    out.push(
      "",
      p.bold("Preview:"),
      ...indent(looksLikeDiff(preview) ? diffLines(preview, p).join("\n") : preview),
    );
  }
  if (v.items.length > 0) {
    const heading = shown.labels.items ?? `Items`;
    out.push("", p.bold(`${oneLine(heading)} (${v.items.length}):`));
    const width = `[${v.items.length}]`.length + 1;
    v.items.forEach((item, i) => {
      out.push(`  ${`[${i + 1}]`.padEnd(width)}${oneLine(item.label)}`);
      if (item.detail?.trim()) out.push(`  ${" ".repeat(width)}${p.dim(oneLine(item.detail))}`);
    });
  }
  out.push(RULE, "Options:");
  for (const o of consoleOptions(shown)) out.push(`  [${o.key}] ${oneLine(o.label)}`);
  out.push(RULE);
  const left = options.timeoutMs;
  out.push(left === undefined ? "Timeout: none" : `Timeout: ${seconds(left)}`);
  out.push(RULE, "");
  return out;
}

function seconds(ms: number): string {
  const n = Math.max(0, Math.ceil(ms / 1000));
  return `${n} second${n === 1 ? "" : "s"}`;
}

// --- selection ------------------------------------------------------------------------------------

/** Item ids from the reviewer's answer to "which ones": positions like `1,3`, `2-4` or `1 3`, each
 * from 1 to the number of items; a message in words when the answer is not one. */
export function parseSelection(
  answer: string,
  items: readonly { id: string }[],
): { ids: string[] } | { error: string } {
  const words = answer
    .split(/[\s,]+/)
    .map((w) => w.trim())
    .filter((w) => w !== "");
  const n = items.length;
  const bad = (w: string) => ({
    error: `\`${terminalSafe(w)}\` is not a position from 1 to ${n}; give numbers like 1,3 or 2-4.`,
  });
  if (words.length === 0) return { error: `Give the numbers of the ones to approve (1 to ${n}).` };
  const picked = new Set<number>();
  for (const w of words) {
    const range = /^(\d{1,6})\s*-\s*(\d{1,6})$/.exec(w);
    if (range) {
      const from = Number(range[1]);
      const to = Number(range[2]);
      if (from < 1 || to > n || from > to) return bad(w);
      for (let i = from; i <= to; i++) picked.add(i);
      continue;
    }
    if (!/^\d{1,6}$/.test(w)) return bad(w);
    const i = Number(w);
    if (i < 1 || i > n) return bad(w);
    picked.add(i);
  }
  return {
    ids: [...picked].sort((a, b) => a - b).map((i) => (items[i - 1] as { id: string }).id),
  };
}
