// Reading Slack's JSON payloads without trusting their shape: each helper yields undefined for
// anything unexpected, so a payload of another shape is ignored rather than a crash.

export function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A non-empty string, or undefined. */
export function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The value at `path` in nested objects: `field(payload, "user", "id")`. */
export function field(value: unknown, ...path: string[]): unknown {
  let at: unknown = value;
  for (const key of path) {
    const r = record(at);
    if (!r || !Object.hasOwn(r, key)) return undefined;
    at = r[key];
  }
  return at;
}
