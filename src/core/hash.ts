import { createHash } from "node:crypto";

/** JSON with object keys sorted at every depth, so equal values always hash alike. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  // As JSON.stringify does (a Date becomes its ISO string, a URL its href): without this every Date
  // would hash like `{}`, so an approval of one date would pass for any other.
  if (
    value !== null &&
    typeof value === "object" &&
    typeof (value as { toJSON?: unknown }).toJSON === "function"
  ) {
    value = (value as { toJSON(): unknown }).toJSON();
  }
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/** A JSON object as a store kept it (audit data, an outbox payload): the object, or
 * `{ unparsable: text }` when the text is not one. A row edited by hand may hold broken JSON: it stays
 * visible, and verification reports it as altered, instead of failing the whole read. */
export function parseStoredObject(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : { unparsable: text };
  } catch {
    return { unparsable: text };
  }
}

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** The hash that binds an approval to exactly these arguments. */
export function hashArgs(args: unknown): string {
  return sha256(canonicalJson(args ?? {}));
}
