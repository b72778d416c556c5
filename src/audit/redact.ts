// Redaction of secrets before anything reaches the audit log, an event stream, a webhook or a log
// line. The audit is append-only: what leaks there cannot be removed later, so this errs on the side
// of hiding.
//
// The rules are data, in redaction-rules.json next to this file, read alike by the Python client
// (which ships a byte-identical copy; test/audit/redaction-rules-copy.test.ts fails when they differ):
//
// Keys: a key name is normalised (camelCase split, case folded, `_ - . space` as one separator) and
// compared with the built-in list plus configured names:
// - `anywhere`: words that name a secret wherever they appear in the key: password, passcode, secret,
//   credential, api key, access key, private key, client secret, connection string, credit card…
//   (so `dbPassword`, `client_secret`, `awsAccessKeyId`, `verificationCode`);
// - `words`: short or common words only as a whole word of the key: pass, pwd, pin, otp, mfa, cvv,
//   jwt, bearer, cookie, signature, sig, csrf, auth/authorization/oauth… (so `pin`, `mfa_code` and
//   `pinCode` but not `spinner` or `pinned`; `auth` but not `author`);
// - `session` as the key's last word or before id/key/token/cookie/secret (`session`, `sessionId`,
//   `user_session`) but not `session_count` or `sessions`;
// - `token` except the plural `tokens`, `tokenizer`, and counts of a language model's tokens
//   (`max_tokens`, `max_token`, `token_count`, `token_limit`).
// Configured names are normalised alike and match wherever they appear in the key. They belong to
// whoever redacts, never to the process: an engine's (`createAirlock({ redaction: { keys } })`,
// read back as `airlock.redaction`), the channels' and learned trust's (`createRedactor`), or one
// call's (`extraKeys`). `airlock` commands take them from AIRLOCK_REDACT_KEYS.
//
// Values: in every string, at any depth, each pattern of `values` in turn replaces what it finds with
// `***`: PEM private-key blocks, cloud and vendor tokens (AWS `AKIA…`, GitHub `ghp_…`, `sk-live-…`,
// Slack `xoxb-…`, JWTs…), credentials in URLs (`scheme://user:***@host`), `Authorization:` headers,
// a bare `Bearer …` or `Basic …` credential, `--password X` and similar command-line options,
// `token X`, sensitive query parameters (`?token=***`) and `name=value` / `name: value` pairs whose
// name is a sensitive key (`DB_PASSWORD=***`). A value pattern is a regular expression both
// JavaScript and Python read alike; its `secret` groups say what is replaced.
import { createRequire } from "node:module";

export const REDACTED = "[REDACTED]";
/** What replaces a credential found inside a string. */
export const REDACTED_INLINE = "***";

export interface RedactOptions {
  /** More key names to redact, matched like the built-in words (normalised, anywhere in the key). */
  extraKeys?: readonly string[];
}

/** One value pattern of redaction-rules.json. */
export interface ValueRule {
  id: string;
  /** A regular expression in the subset JavaScript and Python's `re` read alike. */
  pattern: string;
  /** `""` or `"i"` (case-insensitive). */
  flags: string;
  /** Groups holding the secret: the first that took part in a match is replaced by `***`. */
  secret: number[];
  /** A group holding a name: the match is redacted only when it is a sensitive key. */
  name?: number;
}

/** The shared redaction rules (redaction-rules.json), as read at start. */
export interface RedactionRules {
  version: number;
  replacement: { key: string; inline: string };
  keys: {
    anywhere: string[];
    words: string[];
    afterSession: string[];
    tokenCountBefore: string[];
    tokenCountAfter: string[];
  };
  values: ValueRule[];
}

export const REDACTION_RULES: RedactionRules = loadRules();

function loadRules(): RedactionRules {
  const file = "./redaction-rules.json";
  let raw: unknown;
  try {
    raw = createRequire(import.meta.url)(file);
  } catch (err) {
    // The build copies it next to redact.js (scripts/build.mjs); without it nothing may be logged.
    throw new Error(`cannot read the redaction rules ${file} next to ${import.meta.url}: ${err}`);
  }
  const rules = raw as RedactionRules;
  const lists = rules?.keys ? Object.values(rules.keys) : [];
  if (
    rules?.replacement?.key !== REDACTED ||
    rules.replacement.inline !== REDACTED_INLINE ||
    lists.length !== 5 ||
    !lists.every((l) => Array.isArray(l) && l.every((w) => typeof w === "string")) ||
    !Array.isArray(rules.values)
  ) {
    throw new Error(`the redaction rules ${file} are not in the expected shape`);
  }
  return rules;
}

interface CompiledRule {
  rule: ValueRule;
  // `d`: match indices, to replace exactly the secret group.
  regex: RegExp;
}

const VALUE_RULES: CompiledRule[] = REDACTION_RULES.values.map((rule) => ({
  rule,
  regex: new RegExp(rule.pattern, `gd${rule.flags}`),
}));

// Compared with the key squeezed to letters and digits (`db_password` → `dbpassword`).
const ANYWHERE = REDACTION_RULES.keys.anywhere;
// Compared with each word of the key.
const WHOLE_WORDS = new Set(REDACTION_RULES.keys.words);
const AFTER_SESSION = new Set(REDACTION_RULES.keys.afterSession);
const TOKEN_COUNT_BEFORE = new Set(REDACTION_RULES.keys.tokenCountBefore);
const TOKEN_COUNT_AFTER = new Set(REDACTION_RULES.keys.tokenCountAfter);

/** Redaction settings: of an engine (`createAirlock({ redaction })`), of the channels and of
 * learned trust, which show things beside it. */
export interface RedactionOptions {
  /** More key names to redact, matched like the built-in words (normalised, anywhere in the key). */
  keys?: readonly string[];
}

/** The built-in rules plus configured key names. Each redactor keeps its own verdicts: nothing of
 * it is shared with another, nor process-wide. */
export interface Redactor {
  /** The configured key names, as given (the built-in rules apply besides). */
  readonly keys: readonly string[];
  /** A deep copy of `value` with the values of sensitive keys replaced by `[REDACTED]`, and the
   * credentials inside strings by `***`, at any depth. */
  redact<T>(value: T): T;
  /** A string with the credentials found in it replaced by `***`. */
  redactString(text: string): string;
  /** True when a key names a secret (see the list at the top of this file). */
  isSensitiveKey(key: string): boolean;
}

// Key names repeat (`path`, `content`, `title`…): each redactor keeps their verdicts, and the key
// names as redacted (a key may hold a secret itself), up to a bound.
const MAX_VERDICTS = 4096;

export function createRedactor(options: RedactionOptions = {}): Redactor {
  const keys = Object.freeze([...(options.keys ?? [])]);
  const extra = keys.map(squeeze).filter((n) => n.length > 0);
  const verdicts = new Map<string, boolean>();
  const keyNames = new Map<string, string>();

  function isSensitive(key: string): boolean {
    let verdict = verdicts.get(key);
    if (verdict === undefined) {
      verdict = judgeKey(key, extra);
      if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
      verdicts.set(key, verdict);
    }
    return verdict;
  }

  function redactText(text: string): string {
    let out = text;
    for (const compiled of VALUE_RULES) out = applyRule(compiled, out, isSensitive);
    return out;
  }

  function redactKeyName(key: string): string {
    let name = keyNames.get(key);
    if (name === undefined) {
      name = redactText(key);
      if (keyNames.size >= MAX_VERDICTS) keyNames.clear();
      keyNames.set(key, name);
    }
    return name;
  }

  function redactValue(value: unknown, seen: WeakSet<object>): unknown {
    if (typeof value === "string") return redactText(value);
    if (value === null || typeof value !== "object") return value;
    if (seen.has(value)) return "[Circular]";
    seen.add(value);
    if (Array.isArray(value)) return value.map((v) => redactValue(v, seen));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      // A secret may be a key itself (`{ "ghp_…": "deploy bot" }`): key names are redacted too.
      out[redactKeyName(k)] = isSensitive(k) ? REDACTED : redactValue(v, seen);
    }
    return out;
  }

  return {
    keys,
    redact: <T>(value: T): T => redactValue(value, new WeakSet()) as T,
    redactString: redactText,
    isSensitiveKey: isSensitive,
  };
}

/** The built-in rules alone. */
export const builtInRedactor: Redactor = createRedactor();

/** The redactor of an engine (`airlock.redaction`), the built-in one for anything else (the HTTP
 * client: its server redacts what it stores with its own). */
export function redactorOf(airlock: unknown): Redactor {
  const own = (airlock as { redaction?: unknown } | null | undefined)?.redaction;
  return isRedactor(own) ? own : builtInRedactor;
}

function isRedactor(value: unknown): value is Redactor {
  const r = value as Partial<Redactor> | null | undefined;
  return typeof r?.redact === "function" && typeof r.redactString === "function";
}

/** Key names from a comma-separated list (`AIRLOCK_REDACT_KEYS`), blanks dropped. */
export function redactionKeysFrom(list: string | undefined): string[] {
  return (list ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k.length > 0);
}

/** The words of a key: camelCase split, case folded, `_ - . space` (and anything not a letter or a
 * digit) as separators. `X-Auth-Token` → [x, auth, token]; `apiKEYValue` → [api, key, value]. */
export function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

function squeeze(key: string): string {
  return keyWords(key).join("");
}

/** Whichever redactor a per-call `extraKeys` asks for: the built-in one without. */
function redactorFor(options: RedactOptions): Redactor {
  return options.extraKeys ? createRedactor({ keys: options.extraKeys }) : builtInRedactor;
}

/** True when a key names a secret (see the list at the top of this file), by the built-in rules and
 * `extraKeys`. */
export function isSensitiveKey(key: string, options: RedactOptions = {}): boolean {
  return redactorFor(options).isSensitiveKey(key);
}

function judgeKey(key: string, extra: readonly string[]): boolean {
  const words = keyWords(key);
  if (words.length === 0) return false;
  const squeezed = words.join("");
  if (ANYWHERE.some((w) => squeezed.includes(w))) return true;
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    if (WHOLE_WORDS.has(w)) return true;
    if (w.includes("token") && w !== "tokens" && !w.startsWith("tokeniz")) {
      // `max_token`, `token_count`: a count of a language model's tokens, not a secret.
      const counting =
        w === "token" &&
        (TOKEN_COUNT_BEFORE.has(words[i - 1] ?? "") || TOKEN_COUNT_AFTER.has(words[i + 1] ?? ""));
      if (!counting) return true;
    }
    if (w === "session") {
      const next = words[i + 1];
      if (next === undefined || AFTER_SESSION.has(next)) return true;
    }
  }
  return extra.some((n) => squeezed.includes(n));
}

/** A string with the credentials found in it replaced by `***`, by the built-in rules and
 * `extraKeys`. Every pattern's repetitions are bounded, so that a long string without a match costs
 * linear time, not quadratic. */
export function redactString(text: string, options: RedactOptions = {}): string {
  return redactorFor(options).redactString(text);
}

function applyRule(
  { rule, regex }: CompiledRule,
  text: string,
  isSensitive: (key: string) => boolean,
): string {
  regex.lastIndex = 0;
  let out = "";
  let copied = 0;
  let changed = false;
  for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
    const indices = m.indices;
    if (m[0].length === 0 || indices === undefined) {
      regex.lastIndex += 1;
      continue;
    }
    const group = rule.secret.find((g) => m?.[g] !== undefined);
    if (group === undefined) continue;
    if (rule.name !== undefined) {
      const name = m[rule.name] ?? "";
      if (!isSensitive(safeDecode(name))) {
        // Not a secret's name: look again right after it, so that `note: token=X` still finds
        // `token=X` inside what this match took as the value.
        regex.lastIndex = indices[rule.name]?.[1] ?? regex.lastIndex;
        continue;
      }
    }
    const span = indices[group];
    if (span === undefined) continue;
    out += text.slice(copied, span[0]) + REDACTED_INLINE;
    copied = span[1];
    changed = true;
  }
  return changed ? out + text.slice(copied) : text;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** A deep copy of `value` with the values of sensitive keys replaced by `[REDACTED]`, and the
 * credentials inside strings by `***`, at any depth, by the built-in rules and `extraKeys`. An
 * engine's own key names apply through its `redaction` (`createAirlock({ redaction: { keys } })`). */
export function redact<T>(value: T, options: RedactOptions = {}): T {
  return redactorFor(options).redact(value);
}
