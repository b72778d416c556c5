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

/** The request fields that carry a JSON Schema: `argsSchema` (the args and every edit of them) and
 * `responseSchema` (a reviewer's response, see the `respond` decision). */
export type SchemaField = "argsSchema" | "responseSchema";

/** The zod schema of a JSON Schema (cached by its text); throws invalid_input naming `field` (by
 * default `argsSchema`) when zod cannot read it. */
export function compileArgsSchema(
  schema: Record<string, unknown>,
  field: SchemaField = "argsSchema",
): z.ZodType {
  const key = JSON.stringify(schema);
  const hit = compiled.get(key);
  if (hit) return hit;
  if (Buffer.byteLength(key) > MAX_ARGS_SCHEMA_BYTES) {
    throw new InvalidInputError(
      `\`${field}\` is ${Buffer.byteLength(key)} bytes of JSON, over the limit of ${MAX_ARGS_SCHEMA_BYTES}`,
      field,
    );
  }
  let out: z.ZodType;
  try {
    out = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (err) {
    const what = field === "argsSchema" ? "args" : "a response";
    throw new InvalidInputError(
      `\`${field}\` is not a JSON Schema Airlock can check ${what} against: ${(err as Error).message}`,
      field,
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
  checkAgainst(compileArgsSchema(schema), args, field);
}

/** Checks a reviewer's `response` against the request's `responseSchema` (same messages and paths
 * as for args: "response.budget: expected a number, got the text \"lots\""). */
export function checkResponseAgainst(
  schema: Record<string, unknown> | undefined,
  response: unknown,
): void {
  if (schema === undefined) return;
  checkAgainst(compileArgsSchema(schema, "responseSchema"), response, "response");
}

const LABELS = {
  args: ["The arguments do not fit the tool's schema", "the arguments"],
  editedArgs: ["The edited arguments do not fit the tool's schema", "the arguments"],
  response: ["The response does not fit the request's response schema", "the response"],
} as const;

function checkAgainst(
  schema: z.ZodType,
  value: unknown,
  field: "args" | "editedArgs" | "response",
): void {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return;
  const [label, whole] = LABELS[field];
  const problems = result.error.issues.slice(0, 3).map((issue) => {
    const path = issue.path.map(String).join(".");
    return `${path || whole}: ${readable(issue)}`;
  });
  const more =
    result.error.issues.length > 3 ? ` (and ${result.error.issues.length - 3} more)` : "";
  const first = result.error.issues[0]?.path.map(String).join(".");
  throw new InvalidInputError(
    `${label}: ${problems.join("; ")}${more}`,
    first ? `${field}.${first}` : field,
  );
}

function readable(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type": {
      const got = (issue as { input?: unknown }).input;
      return `expected ${article(issue.expected)}, got ${describe(got)}`;
    }
    case "invalid_value":
      return `expected ${issue.values.length === 1 ? "" : "one of "}${issue.values.map((v) => String(v)).join(", ")}`;
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
