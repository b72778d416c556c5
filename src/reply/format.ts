// How a request reads in each channel:
// - `text`: chat and email (pattern 1): main query, progress, high-priority critiques, numbered items,
//   estimated time and cost, the reply options of the grammar in parse.ts, the timeout in minutes;
// - `markdown`: the same with markdown emphasis, for chat apps and the web;
// - `cli`: the operator's plan-review box of pattern 2.
import { buttonLabel } from "../core/labels.js";
import { presentationOf } from "../core/presentation.js";
import type { ApprovalRequest } from "../core/schemas.js";
import { invalidOption } from "../core/validate.js";
import { countOf, type MessageDetails, messageDetails } from "./details.js";

export type MessageStyle = "text" | "markdown" | "cli";

export interface FormatOptions {
  /** Show the time left at this instant (epoch ms). @default the full timeout, from creation */
  now?: number;
  /** Show this timeout instead of the request's deadline (e.g. the console's own). */
  timeoutMs?: number;
  /** `cli`: the reader gave the command this plan answers (pattern 2's operator), so the box says
   * "Your command:". Otherwise (someone reviewing another's request) it says "Command:" and who
   * asked. @default true */
  ownCommand?: boolean;
}

export const RULE = "=".repeat(80);

export function formatRequest(
  request: ApprovalRequest,
  style: MessageStyle,
  options: FormatOptions = {},
): string {
  switch (style) {
    case "cli":
      return terminalSafe(formatCli(request, options), { multiline: true });
    case "markdown":
      return formatMessage(request, options, true);
    case "text":
      return terminalSafe(formatMessage(request, options, false), { multiline: true });
    default:
      throw invalidOption("style", 'one of "text", "markdown", "cli"', style);
  }
}

/** The time left to decide, when there is a limit. */
export function timeLeftMs(request: ApprovalRequest, options: FormatOptions): number | undefined {
  if (options.timeoutMs !== undefined) return options.timeoutMs;
  if (request.deadline === undefined) return undefined;
  return request.deadline - (options.now ?? request.createdAt);
}

function formatMessage(request: ApprovalRequest, options: FormatOptions, md: boolean): string {
  const d = messageDetails(request);
  const b = (s: string) => (md ? `**${s}**` : s);
  const code = (s: string) => (md ? `\`${s}\`` : s);
  const out: string[] = [md ? `### ${oneLine(request.title)}` : oneLine(request.title), ""];

  if (d.mainQuery) out.push(`${b("Main query:")} ${d.mainQuery}`, "");
  if (d.progress.length) {
    out.push(b("Current status:"), ...d.progress.map(([k, v]) => `- ${k}: ${v}`), "");
  }
  if (d.highPriorityCritiques.length) {
    out.push(b("Key issues identified:"), ...d.highPriorityCritiques.map((c) => `- ${c}`), "");
  }
  if (request.summary?.trim()) out.push(request.summary.trim(), "");
  if (request.items.length) {
    out.push(`${b(d.itemsTitle)} (${countOf(request.items.length, d.itemNoun)}):`);
    request.items.forEach((item, i) => {
      out.push(`${i + 1}. ${oneLine(item.label)}`);
      if (item.detail?.trim()) out.push(`   ${oneLine(item.detail)}`);
    });
    out.push("");
  }
  if (request.preview?.trim()) out.push(...previewBlock(request.preview, md), "");
  if (d.estimatedMinutes !== undefined) {
    out.push(`${b("Estimated additional time:")} ~${d.estimatedMinutes} minutes`);
  }
  if (d.estimatedCost !== undefined) {
    out.push(`${b("Estimated additional cost:")} ~${d.estimatedCost}`);
  }
  if (d.estimatedMinutes !== undefined || d.estimatedCost !== undefined) out.push("");

  out.push(b("Response options:"));
  for (const [reply, meaning] of replyOptions(request, d)) {
    out.push(`- Reply ${code(reply)} ${meaning}`);
  }
  const left = timeLeftMs(request, options);
  if (left !== undefined) out.push("", `${b("Timeout:")} ${timeoutSentence(left)}`);
  return out.join("\n");
}

/** The replies this request accepts, from its `allowed` decisions and whether it has items. */
function replyOptions(request: ApprovalRequest, d: MessageDetails): [string, string][] {
  const allowed = new Set(request.allowed);
  const n = request.items.length;
  const options: [string, string][] = [];
  if (n > 0) {
    if (allowed.has("approve")) options.push(["APPROVE ALL", `to proceed with all ${d.itemNoun}`]);
    if (allowed.has("reject")) options.push(["SKIP", "to finish with current findings"]);
    if (allowed.has("select")) {
      options.push([
        `SELECT ${exampleSelection(n)}`,
        `to approve specific ${d.itemNoun} by number`,
      ]);
    }
  } else {
    if (allowed.has("approve")) options.push(["APPROVE", "to go ahead"]);
    if (allowed.has("reject")) options.push(["REJECT <reason>", "to stop it"]);
  }
  if (allowed.has("revise")) options.push(["REVISE <comment>", "to ask for changes"]);
  return options;
}

function exampleSelection(n: number): string {
  const odd = [1, 3, 5].filter((i) => i <= n);
  if (odd.length >= 2) return odd.join(",");
  return n >= 2 ? "1,2" : "1";
}

function timeoutSentence(ms: number): string {
  if (ms <= 0) return "the deadline has passed";
  if (ms < 60_000) return `Response required within ${Math.ceil(ms / 1000)} seconds`;
  const minutes = Math.floor(ms / 60_000);
  return `Response required within ${minutes} minute${minutes === 1 ? "" : "s"}`;
}

function previewBlock(preview: string, md: boolean): string[] {
  const body = preview.trimEnd();
  if (!md) return ["Preview:", ...body.split("\n").map((l) => `  ${l}`)];
  const lang = /^(---|\+\+\+|@@|diff )/m.test(body) ? "diff" : "";
  const fence = body.includes("```") ? "~~~~" : "```";
  return [`${fence}${lang}`, body, fence];
}

/** Pattern 2's plan-review box. */
function formatCli(request: ApprovalRequest, options: FormatOptions): string {
  const d = messageDetails(request);
  const out: string[] = [
    "",
    RULE,
    "PLAN REVIEW REQUIRED",
    RULE,
    `Correlation ID: ${request.correlationId}`,
  ];
  if (options.ownCommand ?? true) out.push(`Your command: ${oneLine(d.command ?? request.title)}`);
  else {
    if (d.command !== undefined) out.push(`Command: ${oneLine(d.command)}`);
    else out.push(`Request: ${oneLine(request.title)}`);
    out.push(`Requested by: ${oneLine(request.requester)}`);
  }
  out.push("");
  if (request.items.length) {
    out.push("Generated Plan:", "");
    const width = `[${request.items.length}]`.length + 1;
    request.items.forEach((item, i) => {
      out.push(`  ${`[${i + 1}]`.padEnd(width)}${oneLine(item.label)}`);
    });
  } else {
    const body = request.preview ?? request.summary ?? JSON.stringify(request.args, null, 2);
    out.push(
      "Details:",
      "",
      ...body
        .trimEnd()
        .split("\n")
        .map((l) => `  ${l}`),
    );
  }
  out.push("", RULE, "Options:");
  const allowed = new Set(request.allowed);
  // An agent's label follows the verb unless it inverts it (core/labels.ts); without one, pattern
  // 2's own words.
  const { labels } = presentationOf(request);
  const approve = buttonLabel("approve", labels.approve);
  const decline = buttonLabel("reject", labels.reject, "Decline");
  if (allowed.has("approve")) {
    out.push(`  [a] ${approve === "Approve" ? "Approve - Execute this plan" : approve}`);
  }
  if (allowed.has("revise")) out.push("  [r] Revise - Request changes (provide comments)");
  if (allowed.has("reject")) {
    out.push(`  [d] ${decline === "Decline" ? "Decline - Cancel this task" : decline}`);
  }
  const left = timeLeftMs(request, options);
  out.push(RULE, left === undefined ? "Timeout: none" : `Timeout: ${seconds(left)}`, RULE, "");
  return out.join("\n");
}

function seconds(ms: number): string {
  const n = Math.max(0, Math.ceil(ms / 1000));
  return `${n} second${n === 1 ? "" : "s"}`;
}

function oneLine(s: string): string {
  return s
    .split(/\r\n|\r|\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .join(" ");
}

// Terminal safety. What agents write (titles, summaries, item labels, arguments, comments) reaches
// reviewers' terminals; a control character there can clear the screen (ESC[2J), set the window
// title (ESC]0;...BEL), overwrite a line (\r) or reorder text (bidi overrides). Every terminal output
// goes through `terminalSafe`, which shows each such character as a visible stand-in instead.

/** C0 controls, DEL, C1 controls, bidi embeddings/overrides/isolates and marks, line/paragraph
 * separators. (\n and \t are handled apart: kept in multi-line text.) */
function isUnsafe(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    code === 0x2028 ||
    code === 0x2029 ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

function escapeUnit(code: number): string {
  return `\\u${code.toString(16).padStart(4, "0")}`;
}

function replaceUnsafe(text: string, replace: (code: number) => string | undefined): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!isUnsafe(code)) continue;
    const by = replace(code);
    if (by === undefined) continue;
    out += text.slice(from, i) + by;
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** `text` with every terminal control character shown as a harmless stand-in: C0 and DEL as
 * Unicode's control pictures (ESC reads ␛, CR ␍, BEL ␇), C1 and bidi controls as `\u009b`-style
 * escapes. With `multiline`, \n (and \r\n, as \n) and \t stay; otherwise they are shown too. */
export function terminalSafe(text: string, options: { multiline?: boolean } = {}): string {
  const source = options.multiline ? text.replace(/\r\n/g, "\n") : text;
  return replaceUnsafe(source, (code) => {
    if (options.multiline && (code === 0x0a || code === 0x09)) return undefined;
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return "\u2421";
    return escapeUnit(code);
  });
}

/** JSON text made terminal-safe and still valid JSON with the same value: the characters JSON
 * leaves raw (DEL, C1, bidi, line separators) become \u escapes. JSON.stringify escapes C0 itself, and
 * its line breaks between values stay. */
export function terminalSafeJson(json: string): string {
  return replaceUnsafe(json, (code) => (code < 0x20 ? undefined : escapeUnit(code)));
}
