// A request's own `argsSchema`: the JSON Schema of its args, carried with the request (an adapter
// fills it from the tool's definition), so every edit is checked against the tool's real contract by
// whichever process takes the decision, `airlock serve` included, with no schema registered in it.
// Compiled with zod's `fromJSONSchema`; a schema zod cannot read is refused when the request is made.
import { z } from "zod";
import { InvalidInputError } from "./errors.js";

/** The most nesting and size a carried schema may have (it is stored and compiled per decision). */
export const MAX_ARGS_SCHEMA_BYTES = 64 * 1024;

const compiled = new Map<string, z.ZodType>();
const CACHE_LIMIT = 256;

/** The zod schema of a JSON Schema (cached by its text); throws invalid_input naming `argsSchema`
 * when zod cannot read it. */
export function compileArgsSchema(schema: Record<string, unknown>): z.ZodType {
  const key = JSON.stringify(schema);
  const hit = compiled.get(key);
  if (hit) return hit;
  if (Buffer.byteLength(key) > MAX_ARGS_SCHEMA_BYTES) {
    throw new InvalidInputError(
      `\`argsSchema\` is ${Buffer.byteLength(key)} bytes of JSON, over the limit of ${MAX_ARGS_SCHEMA_BYTES}`,
      "argsSchema",
    );
  }
  let out: z.ZodType;
  try {
    out = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (err) {
    throw new InvalidInputError(
      `\`argsSchema\` is not a JSON Schema Airlock can check args against: ${(err as Error).message}`,
      "argsSchema",
    );
  }
  if (compiled.size >= CACHE_LIMIT) compiled.delete(compiled.keys().next().value as string);
  compiled.set(key, out);
  return out;
}

/** Checks `args` against the request's `argsSchema`; throws invalid_input with a sentence a person
 * can read ("amountCents: expected a number, got text") and the field's path. */
export function checkArgsAgainst(
  schema: Record<string, unknown> | undefined,
  args: unknown,
  field: "args" | "editedArgs",
): void {
  if (schema === undefined) return;
  const result = compileArgsSchema(schema).safeParse(args, { reportInput: true });
  if (result.success) return;
  const problems = result.error.issues.slice(0, 3).map((issue) => {
    const path = issue.path.map(String).join(".");
    return `${path || "the arguments"}: ${readable(issue)}`;
  });
  const more =
    result.error.issues.length > 3 ? ` (and ${result.error.issues.length - 3} more)` : "";
  const first = result.error.issues[0]?.path.map(String).join(".");
  const label =
    field === "editedArgs" ? "The edited arguments do not fit" : "The arguments do not fit";
  throw new InvalidInputError(
    `${label} the tool's schema: ${problems.join("; ")}${more}`,
    first ? `${field}.${first}` : field,
  );
}

function readable(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type": {
      const got = (issue as { input?: unknown }).input;
      return `expected ${article(issue.expected)}, got ${describe(got)}`;
    }
    case "unrecognized_keys":
      return `unexpected ${issue.keys.length === 1 ? "field" : "fields"} ${issue.keys.join(", ")}`;
    default:
      return issue.message.replace(/`/g, "");
  }
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function describe(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (typeof v === "string") return `the text "${v.length > 40 ? `${v.slice(0, 40)}…` : v}"`;
  if (Array.isArray(v)) return "a list";
  return typeof v === "object" ? "an object" : `${typeof v} ${String(v)}`;
}
