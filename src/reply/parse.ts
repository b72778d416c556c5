// The reply grammar of chat and email channels (pattern 1):
//   APPROVE ALL | APPROVE                 approve everything
//   SELECT 1,3,5 | SELECT 1-3 | SELECT 2 4 approve some items by their number (1-based)
//   SKIP [note] | REJECT [reason]         approve nothing
//   REVISE [comment]                      ask for changes
// Case-insensitive; only the first non-empty line holds the command (so quoted mail below it is
// ignored), but a comment may run over the following lines. Approvals are strict, rejections lenient:
// `APPROVE ALL but not 3` is a parse error, never an approval. Out-of-range numbers are dropped; a
// selection with nothing valid left is a parse error, and a parse error is never an approval.
// `parseReply` never throws, whatever the string.
import type { DecisionInput, Item } from "../core/schemas.js";

/** What a reply can refer to: request items, or bare labels (given ids `item-N` like the engine does). */
export type ReplyItem = Item | string;

export type ParsedReply =
  | {
      ok: true;
      approved: true;
      outcome: "approved";
      method: "approve_all" | "select";
      /** The chosen item ids, in item order. */
      selected: string[];
      /** The chosen items' positions in `items` (0-based), in order. */
      indexes: number[];
      /** Numbers (or parts of ranges) outside 1..items.length, as written, that were dropped. */
      dropped: string[];
    }
  | {
      ok: true;
      approved: false;
      outcome: "rejected";
      method: "skip" | "reject";
      comment?: string;
    }
  | { ok: true; approved: false; outcome: "revise"; method: "revise"; comment: string }
  | { ok: false; approved: false; outcome: "rejected"; method: "parse_error"; error: string };

/** Longer replies are cut here: comments cannot be longer in a decision anyway. */
export const MAX_REPLY_CHARS = 20_000;

// Characters around a command that mean nothing (markdown emphasis, quotes, a final full stop).
const LEAD = " \t`'\"*_>";
const TRAIL = " \t`'\"*_.!";

export function parseReply(text: string, items: readonly ReplyItem[] = []): ParsedReply {
  const raw = typeof text === "string" ? text.slice(0, MAX_REPLY_CHARS) : "";
  const lines = raw.split(/\r?\n|\r/);
  const first = lines.findIndex((l) => l.trim() !== "");
  if (first < 0) return parseError("the reply is empty");
  const head = trimChars(lines[first] ?? "", LEAD, "");
  const tail = lines.slice(first + 1).join("\n");

  const m = /^([a-z]+)(?![a-z])(.*)$/i.exec(head);
  const keyword = m?.[1]?.toLowerCase();
  const rest = m?.[2] ?? "";
  switch (keyword) {
    case "approve": {
      const what = trimChars(rest, LEAD, TRAIL).toLowerCase();
      if (what === "" || /^[\s_-]*all$/.test(what)) return approveAll(items);
      return parseError(`\`APPROVE\` takes nothing after it but \`ALL\`; got "${clip(head)}"`);
    }
    case "select":
      return parseSelection(trimChars(rest, LEAD, TRAIL), items);
    case "skip":
    case "reject": {
      const comment = commentOf(rest, tail);
      return comment
        ? { ok: true, approved: false, outcome: "rejected", method: keyword, comment }
        : { ok: true, approved: false, outcome: "rejected", method: keyword };
    }
    case "revise":
      return {
        ok: true,
        approved: false,
        outcome: "revise",
        method: "revise",
        comment: commentOf(rest, tail),
      };
    default:
      return parseError(
        `"${clip(head)}" is not a reply I understand; use APPROVE ALL, SKIP, SELECT 1,3, REJECT or REVISE <comment>`,
      );
  }
}

/** The decision to record for a reply. A parse error is recorded as a rejection (`parse_error`):
 * an unreadable reply is never an approval. */
export function replyToDecision(
  reply: ParsedReply,
  who: Pick<DecisionInput, "reviewer" | "channel" | "groups">,
): DecisionInput {
  const base: DecisionInput = { reviewer: who.reviewer, outcome: "rejected" };
  if (who.channel !== undefined) base.channel = who.channel;
  if (who.groups !== undefined) base.groups = who.groups;
  switch (reply.method) {
    case "approve_all":
      return { ...base, outcome: "approved", method: "approve_all" };
    case "select":
      return { ...base, outcome: "approved", method: "select", selected: reply.selected };
    case "revise":
      return { ...base, outcome: "revise", method: "revise", comment: reply.comment };
    case "parse_error":
      return { ...base, method: "parse_error", comment: reply.error };
    default:
      return reply.comment === undefined
        ? { ...base, method: reply.method }
        : { ...base, method: reply.method, comment: reply.comment };
  }
}

function approveAll(items: readonly ReplyItem[]): ParsedReply {
  const indexes = items.map((_, i) => i);
  return {
    ok: true,
    approved: true,
    outcome: "approved",
    method: "approve_all",
    selected: indexes.map((i) => itemId(items, i)),
    indexes,
    dropped: [],
  };
}

function parseSelection(spec: string, items: readonly ReplyItem[]): ParsedReply {
  const n = items.length;
  if (n === 0) return parseError("there are no items to select from");
  const tokens = selectionTokens(spec);
  if (tokens.length === 0) return parseError("`SELECT` needs item numbers, e.g. SELECT 1,3");
  const chosen = new Set<number>();
  const dropped: string[] = [];
  for (const token of tokens) {
    const range = /^(\d+)(?:-(\d+))?$/.exec(token);
    if (!range) return parseError(`"${clip(token)}" is not an item number or a range like 2-4`);
    const a = Number(range[1]);
    const b = range[2] === undefined ? a : Number(range[2]);
    const lo = Math.min(a, b);
    const hi = Math.max(a, b);
    const from = Math.max(lo, 1);
    const to = Math.min(hi, n);
    for (let i = from; i <= to; i++) chosen.add(i - 1);
    if (from > to) dropped.push(token);
    else {
      if (lo < from) dropped.push(span(lo, from - 1));
      if (hi > to) dropped.push(span(to + 1, hi));
    }
  }
  if (chosen.size === 0) {
    return parseError(`none of the numbers is between 1 and ${n}`);
  }
  const indexes = [...chosen].sort((x, y) => x - y);
  return {
    ok: true,
    approved: true,
    outcome: "approved",
    method: "select",
    selected: indexes.map((i) => itemId(items, i)),
    indexes,
    dropped,
  };
}

/** Splits `1, 3 and 5-7` or `2 - 4` into `1`, `3`, `5-7`, `2-4`, in linear time. */
function selectionTokens(spec: string): string[] {
  const tokens: string[] = [];
  for (const piece of spec.replace(/–/g, "-").split(/[\s,;&]+/)) {
    const t = piece.startsWith("#") ? piece.slice(1) : piece;
    if (t === "" || t.toLowerCase() === "and") continue;
    const prev = tokens[tokens.length - 1];
    if (prev !== undefined && (prev.endsWith("-") || t.startsWith("-"))) {
      tokens[tokens.length - 1] = prev + t;
    } else {
      tokens.push(t);
    }
  }
  return tokens;
}

function span(lo: number, hi: number): string {
  return lo === hi ? String(lo) : `${lo}-${hi}`;
}

function itemId(items: readonly ReplyItem[], i: number): string {
  const item = items[i];
  return typeof item === "object" && item !== null ? item.id : `item-${i + 1}`;
}

function commentOf(rest: string, tail: string): string {
  const joined = tail.trim() ? `${rest}\n${tail}` : rest;
  return trimChars(joined, " \t\r\n`'\"*_:,-", " \t\r\n`'\"*_");
}

/** Strips characters in `lead` from the start and in `trail` from the end (no regex backtracking). */
function trimChars(s: string, lead: string, trail: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && lead.includes(s.charAt(start))) start++;
  while (end > start && trail.includes(s.charAt(end - 1))) end--;
  return s.slice(start, end);
}

function parseError(error: string): ParsedReply {
  return { ok: false, approved: false, outcome: "rejected", method: "parse_error", error };
}

function clip(s: string): string {
  const t = s.trim();
  return t.length > 60 ? `${t.slice(0, 57)}...` : t;
}
