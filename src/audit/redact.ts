// Redaction of secrets before anything reaches the audit log or a log line.
const SENSITIVE = ["password", "secret", "token", "api_key", "apikey", "credential", "auth"];

export const REDACTED = "[REDACTED]";

/** True when a key names a secret: it contains one of the sensitive words, case-insensitively
 * (so `dbPassword`, `X-Auth-Token`, `client_secret`, `credentials` all match). */
export function isSensitiveKey(key: string): boolean {
  const k = key.toLowerCase().replace(/-/g, "_");
  return SENSITIVE.some((word) => k.includes(word));
}

/** A deep copy of `value` with the values of sensitive keys replaced, at any depth. */
export function redact<T>(value: T): T {
  return redactValue(value, new WeakSet()) as T;
}

function redactValue(value: unknown, seen: WeakSet<object>): unknown {
  if (value === null || typeof value !== "object") return value;
  if (seen.has(value)) return "[Circular]";
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, seen));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSensitiveKey(k) ? REDACTED : redactValue(v, seen);
  }
  return out;
}
