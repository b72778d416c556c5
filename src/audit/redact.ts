// Redaction of secrets before anything reaches the audit log, an event stream or a log line. The audit
// is append-only: what leaks there cannot be removed later, so this errs on the side of hiding.
//
// Keys: a key name is normalised (camelCase split, case folded, `_ - . space` as one separator) and
// compared with a built-in list plus configured names:
// - words that name a secret wherever they appear in the key: password, passwd, passphrase, secret,
//   token, credential, api key, access key, private key, ssh key, client secret, connection string,
//   credit card, card number (so `dbPassword`, `X-Auth-Token`, `client_secret`, `awsAccessKeyId`);
// - short or common words only as a whole word of the key: pass, pwd, pin, cvv, cvc, dsn, jwt,
//   bearer, cookie, cookies, signature, otp, and auth/authorization/authentication/oauth (so `pin`,
//   `card_pin` and `pinCode` but not `spinner` or `pinned`; `auth` but not `author`);
// - `session` as the key's last word or before id/key/token/cookie/secret (`session`, `sessionId`,
//   `user_session`) but not `session_count` or `sessions`;
// - `token` except the plural `tokens`, `tokenizer`, and counts of a language model's tokens
//   (`max_tokens`, `max_token`, `token_count`, `token_limit`).
// Configured names (`extraKeys`, or `setRedactionKeys`) are normalised alike and match wherever
// they appear in the key.
//
// Values: in every string, at any depth, credentials in URLs (`scheme://user:PW@host` becomes
// `scheme://user:***@host`), sensitive query parameters (`?token=***`), `Authorization:` headers
// (`Authorization: Bearer ***`, `Basic ***`), a bare `Bearer <credential>`, and `name=value` /
// `name: value` pairs whose name is sensitive (`DB_PASSWORD=***`) are replaced.

export const REDACTED = "[REDACTED]";
/** What replaces a credential found inside a string. */
export const REDACTED_INLINE = "***";

export interface RedactOptions {
  /** More key names to redact, matched like the built-in words (normalised, anywhere in the key). */
  extraKeys?: readonly string[];
}

// Compared with the key squeezed to letters and digits (`db_password` → `dbpassword`).
const ANYWHERE = [
  "password",
  "passwd",
  "passphrase",
  "secret",
  "credential",
  "apikey",
  "accesskey",
  "privatekey",
  "sshkey",
  "connectionstring",
  "connstr",
  "creditcard",
  "cardnumber",
];
// Compared with each word of the key.
const WHOLE_WORDS = new Set([
  "pass",
  "pwd",
  "pin",
  "cvv",
  "cvc",
  "dsn",
  "jwt",
  "bearer",
  "cookie",
  "cookies",
  "signature",
  "otp",
  "auth",
  "authn",
  "authz",
  "authorization",
  "authentication",
  "oauth",
  "oauth2",
]);
const AFTER_SESSION = new Set(["id", "key", "token", "cookie", "secret"]);
const TOKEN_COUNT_BEFORE = new Set([
  "max",
  "min",
  "num",
  "total",
  "prompt",
  "completion",
  "input",
  "output",
]);
const TOKEN_COUNT_AFTER = new Set([
  "count",
  "counts",
  "limit",
  "limits",
  "usage",
  "used",
  "budget",
]);

let configured: string[] = [];

/** Sets extra key names redacted everywhere in this process (e.g. from configuration), in addition
 * to the built-in list and to `extraKeys` given per call. Replaces the previous set. */
export function setRedactionKeys(names: readonly string[]): void {
  configured = names.map(squeeze).filter((n) => n.length > 0);
  verdicts.clear();
}

// Key names repeat (`path`, `content`, `title`…): their verdicts are kept, up to a bound, for calls
// without per-call `extraKeys`.
const verdicts = new Map<string, boolean>();
const MAX_VERDICTS = 4096;

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

/** True when a key names a secret (see the list at the top of this file). */
export function isSensitiveKey(key: string, options: RedactOptions = {}): boolean {
  if (options.extraKeys) return judgeKey(key, options);
  let verdict = verdicts.get(key);
  if (verdict === undefined) {
    verdict = judgeKey(key, options);
    if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
    verdicts.set(key, verdict);
  }
  return verdict;
}

function judgeKey(key: string, options: RedactOptions): boolean {
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
  const extra = options.extraKeys ? options.extraKeys.map(squeeze) : [];
  return [...configured, ...extra].some((n) => n.length > 0 && squeezed.includes(n));
}

// Every repetition that starts a match is bounded, so that a long string without a match costs
// linear time, not quadratic.
// `scheme://user:password@` (the user part may be empty).
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)([^\s:@/?#]{0,256}):([^\s@/?#]{1,1024})@/gi;
// `?name=value` and `&name=value` inside URLs.
const QUERY_PARAM = /([?&;])([^=&#\s?;]{1,64})=([^&#\s]*)/g;
// `Authorization: <scheme> <credential>` (also Proxy-Authorization, and `=` for env-style text).
const AUTH_HEADER =
  /\b((?:proxy-)?authorization)(["']?\s*[:=]\s*["']?)(?:(bearer|basic|digest|token|negotiate)\s+)?([^\s"',;]+)/gi;
// A bare `Bearer <credential>`: the credential must look like one (a digit, or 20+ characters), so
// that "the bearer of good news" is left alone.
const BARE_BEARER = /\b(bearer)\s+([A-Za-z0-9\-._~+/]+=*)/gi;
// `name=value` or `name: value`, the name optionally quoted (JSON inside a string).
const NAME_VALUE =
  /(["']?)([A-Za-z_][A-Za-z0-9_.-]{0,63})\1([ \t]{0,8}[=:][ \t]{0,8})("[^"\n]{0,4096}"|'[^'\n]{0,4096}'|[^\s"',;&}]+)/g;

const MAY_HOLD_CREDENTIAL = /[:=]|bearer/i;

function looksLikeCredential(s: string): boolean {
  return s.length >= 20 || (s.length >= 8 && /[0-9]/.test(s));
}

/** A string with the credentials found in it replaced by `***`. */
export function redactString(text: string, options: RedactOptions = {}): string {
  // Every pattern below needs a `:` or a `=`, except a bare "Bearer …": most strings have neither.
  if (!MAY_HOLD_CREDENTIAL.test(text)) return text;
  let out = text.replace(URL_CREDENTIALS, `$1$2:${REDACTED_INLINE}@`);
  out = out.replace(AUTH_HEADER, (_m, name: string, sep: string, scheme?: string) => {
    return `${name}${sep}${scheme ? `${scheme} ` : ""}${REDACTED_INLINE}`;
  });
  out = out.replace(BARE_BEARER, (m, word: string, cred: string) =>
    cred === REDACTED_INLINE || !looksLikeCredential(cred) ? m : `${word} ${REDACTED_INLINE}`,
  );
  out = out.replace(QUERY_PARAM, (m, lead: string, name: string, value: string) =>
    value.length > 0 && value !== REDACTED_INLINE && isSensitiveKey(safeDecode(name), options)
      ? `${lead}${name}=${REDACTED_INLINE}`
      : m,
  );
  out = out.replace(NAME_VALUE, (m, quote: string, name: string, sep: string, value: string) => {
    if (!isSensitiveKey(name, options)) return m;
    const bare = value.replace(/^["']|["']$/g, "");
    if (bare.length === 0 || bare === REDACTED_INLINE || /^(bearer|basic|digest)$/i.test(bare)) {
      return m;
    }
    // A URL whose credentials were already replaced is left as it is.
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(bare)) return m;
    const q = value.startsWith('"') ? '"' : value.startsWith("'") ? "'" : "";
    return `${quote}${name}${quote}${sep}${q}${REDACTED_INLINE}${q}`;
  });
  return out;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** A deep copy of `value` with the values of sensitive keys replaced by `[REDACTED]`, and the
 * credentials inside strings by `***`, at any depth. */
export function redact<T>(value: T, options: RedactOptions = {}): T {
  return redactValue(value, new WeakSet(), options) as T;
}

function redactValue(value: unknown, seen: WeakSet<object>, options: RedactOptions): unknown {
  if (typeof value === "string") return redactString(value, options);
  if (value === null || typeof value !== "object") return value;
  if (seen.has(value)) return "[Circular]";
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, seen, options));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSensitiveKey(k, options) ? REDACTED : redactValue(v, seen, options);
  }
  return out;
}
