// Text every store can keep: no NUL character (PostgreSQL refuses it in text columns) and no lone
// surrogate (half of a UTF-16 pair, which no UTF-8 store can encode). Refused in the core schemas, once,
// so SQLite, PostgreSQL and the memory store agree on what is accepted.
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "./limits.js";

/** `text` in at most `max` characters (UTF-16 units), an ellipsis marking a cut. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why this string cannot be stored, or undefined when it can. */
export function textProblem(s: string): string | undefined {
  if (s.includes("\u0000")) return "contains a NUL character (U+0000), which cannot be stored";
  if (LONE_SURROGATE.test(s)) {
    return "contains a lone surrogate (half of a UTF-16 pair, not valid Unicode), which cannot be stored";
  }
  return undefined;
}

export interface JsonProblem {
  /** Path below the checked value: keys and array indexes. */
  path: (string | number)[];
  message: string;
}

/** The first problem of a JSON document: nested deeper than `maxDepth`, or a key or string value that
 * `textProblem` refuses. Iterative, so no input can overflow the stack. */
export function jsonProblem(
  value: unknown,
  maxDepth: number = MAX_JSON_DEPTH,
): JsonProblem | undefined {
  if (jsonDepthExceeds(value, maxDepth)) {
    return {
      path: [],
      message: `nests objects and arrays deeper than ${maxDepth} levels, the most Airlock accepts`,
    };
  }
  // The depth is bounded now, so the walk ends; shared sub-values are checked once.
  const seen = new Set<object>();
  const stack: Array<{ value: unknown; path: (string | number)[] }> = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop() as { value: unknown; path: (string | number)[] };
    if (typeof v === "string") {
      const why = textProblem(v);
      if (why) return { path, message: why };
      continue;
    }
    if (v === null || typeof v !== "object" || seen.has(v)) continue;
    seen.add(v);
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: [...path, i] });
      continue;
    }
    const entries = Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, child] = entries[i] as [string, unknown];
      const why = textProblem(k);
      if (why) return { path: [...path, k], message: `key ${why}` };
      stack.push({ value: child, path: [...path, k] });
    }
  }
  return undefined;
}
