// Documented limits on the shape of what agents send. Deeply nested JSON is refused up front (HTTP 400,
// InvalidInputError in process) instead of overflowing the stack of whatever walks it later (hashing,
// redaction, storage).

/** The deepest nesting of objects and arrays accepted in any JSON document of a request or decision
 * (args, metadata, preview, editedArgs, ...). `{"a":1}` has depth 1, `{"a":[1]}` depth 2. */
export const MAX_JSON_DEPTH = 64;

/** The longest escalation chain accepted: `onTimeout.escalate` nested at most this many times. */
export const MAX_ESCALATION_DEPTH = 16;

/** True when `value` nests objects or arrays deeper than `maxDepth` (see MAX_JSON_DEPTH for how depth
 * is counted). Iterative, so it cannot overflow the stack whatever it is given; a value that refers to
 * itself counts as too deep. Shared sub-values are walked again only when met deeper than before, so
 * the work stays bounded by the number of values times `maxDepth`. */
export function jsonDepthExceeds(value: unknown, maxDepth: number = MAX_JSON_DEPTH): boolean {
  const deepestSeen = new Map<object, number>();
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, parentDepth] = stack.pop() as [unknown, number];
    if (current === null || typeof current !== "object") continue;
    const depth = parentDepth + 1;
    if (depth > maxDepth) return true;
    const seen = deepestSeen.get(current);
    if (seen !== undefined && seen >= depth) continue;
    deepestSeen.set(current, depth);
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) {
      if (child !== null && typeof child === "object") stack.push([child, depth]);
    }
  }
  return false;
}
