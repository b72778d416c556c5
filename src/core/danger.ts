// Whether approving a request asks the reviewer to confirm first, and why, in words. One rule for
// every door (the inbox's request page and bulk form, and any other that asks before approving).
// The agent's own labels (risk, action name) are only half of it: an agent that writes `risk: low`
// and `db.maintenance` above `DELETE FROM customers` is not believed, so the rule also reads what
// will run: every string in the args (an array of strings is also read as one command line), the
// preview, the items and the command. It looks for patterns that destroy or commit to something:
// SQL that deletes or changes every row or drops a table, `rm -r`, a download piped into a shell,
// `mkfs`, a raw disk write, a forced `git push`, an amount over LARGE_AMOUNT. Every check is linear
// in the text, so a megabyte of preview costs milliseconds; and what cannot be read in full (too
// deep, too many values) asks to confirm rather than pass unread.
import { presentationOf } from "./presentation.js";
import type { ApprovalRequest } from "./schemas.js";

/** What the rule reads of a request. */
export type DangerInput = Pick<
  ApprovalRequest,
  | "action"
  | "args"
  | "risk"
  | "preview"
  | "items"
  | "metadata"
  | "labels"
  | "question"
  | "command"
  | "progress"
  | "critiques"
  | "estimate"
  | "hitl"
>;

export interface Confirmation {
  /** Why approving asks first, one short sentence each, the agent's labels first; empty: it does
   * not. At most MAX_REASONS (the last one then says how many more there were). */
  reasons: string[];
}

/** An amount above this asks to confirm (the same figure the confidence policy penalises). */
export const LARGE_AMOUNT = 1000;
export const MAX_REASONS = 8;
/** Values read in args, and how deep; past either the request asks to confirm. */
const MAX_VALUES = 20_000;
const MAX_DEPTH = 32;

/** Action or tool names that say the action destroys or commits to something. */
const DESTRUCTIVE_NAME =
  /(^|[._\-\s])(delete|remove|destroy|drop|purge|wipe|truncate|terminate|erase|sign|pay|transfer|deploy)/i;

export function needsConfirmation(r: DangerInput): Confirmation {
  const found: string[] = [];
  if (r.risk === "high" || r.risk === "critical") {
    found.push(`${r.risk} risk (the agent's own label)`);
  }
  const tool = presentationOf(r).hitl?.tool ?? "";
  if (DESTRUCTIVE_NAME.test(r.action)) found.push(`action ${r.action} is hard to undo`);
  else if (DESTRUCTIVE_NAME.test(tool)) found.push(`tool ${tool} is hard to undo`);

  let values = 0;
  let complete = true;
  const walk = (v: unknown, path: string, key: string, depth: number): void => {
    if (++values > MAX_VALUES || depth > MAX_DEPTH) {
      complete = false;
      return;
    }
    if (typeof v === "string") {
      for (const why of textDangers(v)) found.push(`${path}: ${why}`);
      if (isAmountKey(key)) amount(parseAmount(v), path);
    } else if (typeof v === "number") {
      if (isAmountKey(key)) amount(v, path);
    } else if (Array.isArray(v)) {
      // ["rm", "-rf", "/"] is one command line.
      if (v.length > 1 && v.every((x) => typeof x === "string")) {
        for (const why of textDangers(v.join(" "))) found.push(`${path}: ${why}`);
      }
      v.forEach((x, i) => {
        walk(x, `${path}[${i}]`, key, depth + 1);
      });
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`, k, depth + 1);
    }
  };
  const amount = (n: number | undefined, path: string) => {
    if (n !== undefined && n > LARGE_AMOUNT) {
      found.push(`${path}: amount ${n} is over ${LARGE_AMOUNT}`);
    }
  };
  walk(r.args, "args", "", 0);
  if (!complete) {
    found.push(`args: too large to check in full (over ${MAX_VALUES} values or ${MAX_DEPTH} deep)`);
  }
  if (r.preview) for (const why of textDangers(r.preview)) found.push(`preview: ${why}`);
  const command = presentationOf(r).command;
  if (command) for (const why of textDangers(command)) found.push(`command: ${why}`);
  for (const item of r.items) {
    for (const text of [item.label, item.detail ?? ""]) {
      for (const why of textDangers(text)) found.push(`item ${item.id}: ${why}`);
    }
  }

  const reasons = [...new Set(found)];
  if (reasons.length <= MAX_REASONS) return { reasons };
  const shown = reasons.slice(0, MAX_REASONS - 1);
  return { reasons: [...shown, `… and ${reasons.length - shown.length} more`] };
}

// --- amounts ------------------------------------------------------------------------------------

const AMOUNT_WORDS = new Set(["amount", "price", "cost", "payment", "fee", "charge"]);
const AMOUNT_LAST_WORDS = new Set(["total", "sum", "value"]);

/** `amount`, `totalAmount`, `invoice_total`, `price_usd`; not `total_rows`. */
function isAmountKey(key: string): boolean {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[\s_\-.]+/)
    .filter(Boolean);
  const last = words[words.length - 1] ?? "";
  const is = (set: Set<string>, w: string) => set.has(w) || set.has(w.replace(/s$/, "")); // fees
  return words.some((w) => is(AMOUNT_WORDS, w)) || is(AMOUNT_LAST_WORDS, last);
}

/** "25000", "25,000.00", "$25 000", "EUR 1.5e4": the number, or undefined. */
function parseAmount(text: string): number | undefined {
  const digits = text
    .trim()
    .replace(/^[A-Za-z$€£¥\s]{0,4}/, "")
    .replace(/[\s,_']/g, "");
  if (!/^[+-]?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(digits)) return undefined;
  const n = Number(digits);
  return Number.isFinite(n) ? n : undefined;
}

// --- SQL and the shell ------------------------------------------------------------------------------

/** What in `text` will destroy or commit to something, in words (each kind once). */
export function textDangers(text: string): string[] {
  if (text.length < 2) return [];
  const lower = text.toLowerCase();
  return [...new Set([...sqlDangers(lower), ...shellDangers(lower)])];
}

const SQL_DROP =
  /\bdrop\s+(table|database|schema|view|materialized\s+view|index|column|user|role|function|procedure|trigger|sequence|type|extension|owned)\b/;
/** A WHERE that keeps every row. */
const TRIVIAL_WHERE = /\bwhere\s+\(?\s*(1\s*=\s*1|true|1|'(\w*)'\s*=\s*'\2')\s*\)?\s*$/;

function sqlDangers(lower: string): string[] {
  if (
    !/\b(delete|update|drop|truncate|flushall|flushdb)\b|\.(drop|dropdatabase|deletemany)\s*\(/.test(
      lower,
    )
  ) {
    return [];
  }
  // Read twice, as written and with comments out, and keep what either finds: with comments out
  // `DELETE/**/FROM` reads as what runs and a WHERE after `--` does not count; as written, a `/*`
  // inside a string literal cannot hide the statement after it.
  const collapsed = lower.replace(/\s+/g, " ");
  const bare = lower
    .replace(/\/\*[\s\S]*?(?:\*\/|$)/g, " ")
    .replace(/(?:--|#)[^\n]*/g, " ")
    .replace(/\s+/g, " ");
  return [...new Set([...statementDangers(collapsed), ...statementDangers(bare)])];
}

function statementDangers(sql: string): string[] {
  const out: string[] = [];
  for (const raw of sql.split(";")) {
    const st = raw.trim();
    if (!st) continue;
    const name = (m: RegExpExecArray) => (m[1] ?? "").slice(0, 60);
    const del = /\bdelete\s+from\s+([^\s(]+)/.exec(st) ?? /^delete\s+([^\s(]+)/.exec(st);
    if (del) {
      const where = /\bwhere\b/.test(st);
      if (!where) out.push(`SQL DELETE FROM ${name(del)} without WHERE (deletes every row)`);
      else if (TRIVIAL_WHERE.test(st)) {
        out.push(`SQL DELETE FROM ${name(del)} with a WHERE that keeps every row`);
      }
    }
    const upd = /\bupdate\s+([^\s(]+)\s+set\b/.exec(st);
    if (upd) {
      if (!/\bwhere\b/.test(st))
        out.push(`SQL UPDATE ${name(upd)} without WHERE (changes every row)`);
      else if (TRIVIAL_WHERE.test(st)) {
        out.push(`SQL UPDATE ${name(upd)} with a WHERE that keeps every row`);
      }
    }
    const drop = SQL_DROP.exec(st);
    if (drop) out.push(`SQL DROP ${drop[1]?.toUpperCase()}`);
    if (/^truncate\b|\btruncate\s+table\b/.test(st)) out.push("SQL TRUNCATE (deletes every row)");
    if (/\bflush(all|db)\b/.test(st)) out.push("Redis FLUSHALL/FLUSHDB (deletes every key)");
    if (/\.(drop|dropdatabase)\s*\(\s*\)|\.deletemany\s*\(\s*\{\s*\}\s*\)/.test(st)) {
      out.push("MongoDB drop or deleteMany({}) (deletes a whole collection)");
    }
  }
  return out;
}

const SHELLS = new Set(["sh", "bash", "zsh", "ksh", "dash", "fish", "ash"]);
const INTERPRETERS = new Set([...SHELLS, "python", "python3", "perl", "ruby", "node", "php"]);
const FETCHERS = new Set(["curl", "wget", "fetch", "iwr", "invoke-webrequest"]);
/** Words that may stand before the command itself. */
const PREFIXES = new Set(["sudo", "exec", "env", "command", "nohup", "time", "doas", "xargs"]);
const CHEAP = /\b(rm|curl|wget|fetch|iwr|invoke-webrequest|mkfs|dd|git|eval)\b|\/dev\//;

/** A simple command's words, quotes dropped, `/bin/rm` read as `rm`, `sudo` and `env X=1` skipped. */
function words(command: string): string[] {
  const all = command.replace(/["'`]/g, " ").split(/\s+/).filter(Boolean);
  let i = 0;
  while (i < all.length && (PREFIXES.has(all[i] ?? "") || /^\w+=/.test(all[i] ?? ""))) i++;
  const rest = all.slice(i);
  if (rest[0]) rest[0] = rest[0].replace(/^.*\//, "");
  return rest;
}

function shellDangers(lower: string): string[] {
  if (!CHEAP.test(lower)) return [];
  const out = new Set<string>();
  if (/\bmkfs(\.\w+)?\b/.test(lower)) out.add("mkfs (formats a disk)");
  // Lines and `;`, `&&`, `||` separate commands; `|` separates the commands of a pipeline.
  for (const line of lower.split(/\n|;|&&|\|\|/)) {
    if (!CHEAP.test(line)) continue;
    let fetched = false; // a fetcher stood earlier in this pipeline
    for (const command of line.split("|")) {
      const w = words(command);
      const [name, ...args] = w;
      if (!name) continue;
      if (name === "rm" && args.some((a) => /^-[a-z]*r[a-z]*$/.test(a) || a === "--recursive")) {
        out.add("rm -r (deletes a directory tree)");
      }
      if (name === "dd" && args.some((a) => a.startsWith("of=/dev/"))) {
        out.add("dd onto a device (overwrites a disk)");
      }
      if (name === "git") {
        const push = args.indexOf("push");
        const after = push < 0 ? [] : args.slice(push + 1);
        if (
          after.some(
            (a) =>
              a === "-f" || a.startsWith("--force") || (/^-[a-z]+$/.test(a) && a.includes("f")),
          ) ||
          after.some((a) => a.startsWith("+"))
        ) {
          out.add("git push --force (rewrites remote history)");
        }
      }
      // curl … | sh: a fetcher earlier in the pipeline, a shell or an interpreter after it.
      if (INTERPRETERS.has(name) && fetched) out.add("a download piped into a shell (curl … | sh)");
      if (FETCHERS.has(name)) fetched = true;
      // sh -c "$(curl …)", bash <(curl …), eval "$(wget …)".
      if (
        (SHELLS.has(name) || name === "eval" || name === "source" || name === ".") &&
        /(\$\(|<\()\s*(curl|wget)\b/.test(w.join(" "))
      ) {
        out.add('a download run by a shell (sh -c "$(curl …)")');
      }
    }
    if (/>\s*\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk)/.test(line)) {
      out.add("a write onto a raw disk device");
    }
  }
  return [...out];
}
