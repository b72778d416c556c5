// The shape of a call's args: its structure without its values. Two calls of one action with the same
// shape differ only in what they say, not in what they are made of, so a learned trust rule (see
// learned-trust.ts) is bound to an action and one shape: a call that adds a key, drops one or turns a
// string into an object is another shape, and a person looks at it again.
//
// The canonical text: a value's JSON type (`string`, `number`, `boolean`, `null`); an object as
// `{"key":shape,...}` with its keys sorted (each key JSON-quoted, so no key can pass for syntax); an
// array as `[shape|shape]`, the distinct shapes of its elements, sorted (`[]` when empty). Keys whose
// value is undefined are left out, as JSON leaves them out.
import { sha256 } from "../core/hash.js";

/** The canonical description of `value`'s shape (see the top of this file). */
export function argsShape(value: unknown): string {
  return shapeOf(value, 0);
}

/** The SHA-256 (hex) of `argsShape(value)`: what a trust rule stores and matches. */
export function argsShapeHash(value: unknown): string {
  return sha256(argsShape(value));
}

/** Deeper than any args the core schemas accept (MAX_JSON_DEPTH); a guard, not a limit users meet. */
const MAX_DEPTH = 256;

function shapeOf(value: unknown, depth: number): string {
  if (depth > MAX_DEPTH) throw new RangeError(`args nested deeper than ${MAX_DEPTH} levels`);
  // As JSON.stringify (and the args hash) see it: a Date is its ISO string.
  if (
    value !== null &&
    typeof value === "object" &&
    typeof (value as { toJSON?: unknown }).toJSON === "function"
  ) {
    value = (value as { toJSON(): unknown }).toJSON();
  }
  if (value === null) return "null";
  if (Array.isArray(value)) {
    const shapes = new Set(value.map((v) => shapeOf(v ?? null, depth + 1)));
    return `[${[...shapes].sort().join("|")}]`;
  }
  switch (typeof value) {
    case "string":
      return "string";
    case "number":
    case "bigint":
      return "number";
    case "boolean":
      return "boolean";
    case "object": {
      const record = value as Record<string, unknown>;
      const parts: string[] = [];
      for (const key of Object.keys(record).sort()) {
        const v = record[key];
        if (v === undefined || typeof v === "function") continue;
        parts.push(`${JSON.stringify(key)}:${shapeOf(v, depth + 1)}`);
      }
      return `{${parts.join(",")}}`;
    }
    default:
      // undefined, a function or a symbol at the top: JSON has no such value.
      return "null";
  }
}
