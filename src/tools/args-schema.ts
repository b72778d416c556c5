// A tool's own schema, two ways: as the JSON Schema a request carries (`argsSchema`, so whichever
// process takes a decision, `airlock serve` included, refuses an edit that does not fit), and as the
// parser the approved args go through before the tool runs (so the tool gets its own typed input,
// parsed, never cast). Used by `hitlTool` and by every adapter (langgraph, openai-agents, ai-sdk).
//
// A schema is read from, in order: the Standard JSON Schema interface (`~standard.jsonSchema`, zod
// 4.2+, valibot, arktype), zod 4's `z.toJSONSchema`, or a plain JSON Schema object. A schema that
// cannot be carried (none of these, over MAX_ARGS_SCHEMA_BYTES of JSON, or one the engine cannot
// check args against) is left out of the request, and a warning says so once per tool and reason
// (`process.emitWarning`, code AIRLOCK_ARGS_SCHEMA_SKIPPED): the gate still works, and the adapter
// still parses the approved args with the tool's schema before anything runs.
import { z } from "zod";
import { checkArgsAgainst, compileArgsSchema, MAX_ARGS_SCHEMA_BYTES } from "../core/args-schema.js";
import { InvalidInputError, isAirlockError } from "../core/errors.js";

/** A JSON Schema, as a request carries it. */
export type JsonSchema = Record<string, unknown>;

/** The Standard Schema interface (zod 3.24+ and 4, valibot, arktype), as far as Airlock reads it. */
export interface StandardSchema<Input = unknown, Output = Input> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | {
      readonly issues: ReadonlyArray<{
        readonly message: string;
        readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
      }>;
    };

/** What a tool's schema may be given as: a Standard Schema (zod, valibot, ...) or a JSON Schema. */
export type ToolSchema<Input = unknown, Output = Input> =
  | StandardSchema<Input, Output>
  | JsonSchema;

/** The JSON Schema to carry, or why none is carried. */
export type ArgsSchemaResult = { schema: JsonSchema } | { skipped: string };

export const ARGS_SCHEMA_WARNING = "AIRLOCK_ARGS_SCHEMA_SKIPPED";

export function isStandardSchema(value: unknown): value is StandardSchema {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return false;
  const std = (value as { "~standard"?: { validate?: unknown } })["~standard"];
  return typeof std === "object" && std !== null && typeof std.validate === "function";
}

/** The JSON Schema of a tool's schema, checked the way the engine will check it (its size, and that
 * args can be checked against it), or the reason it cannot be carried. */
export function toArgsSchema(source: unknown): ArgsSchemaResult {
  let schema: unknown;
  try {
    schema = jsonSchemaOf(source);
  } catch (err) {
    return { skipped: `its schema could not be turned into JSON Schema (${errorText(err)})` };
  }
  if (schema === undefined) {
    return { skipped: "its schema is neither zod 4, a Standard JSON Schema nor a JSON Schema" };
  }
  if (!isPlainObject(schema)) return { skipped: "its JSON Schema is not an object" };
  let bytes: number;
  try {
    bytes = Buffer.byteLength(JSON.stringify(schema));
  } catch (err) {
    return { skipped: `its JSON Schema is not JSON (${errorText(err)})` };
  }
  if (bytes > MAX_ARGS_SCHEMA_BYTES) {
    return {
      skipped: `its JSON Schema is ${bytes} bytes, over the ${MAX_ARGS_SCHEMA_BYTES} a request may carry`,
    };
  }
  try {
    compileArgsSchema(schema);
  } catch (err) {
    return {
      skipped: `Airlock cannot check arguments against its JSON Schema (${isAirlockError(err) ? err.message.replace(/`/g, "") : errorText(err)})`,
    };
  }
  return { schema };
}

const warned = new Set<string>();

/** `toArgsSchema`, warning once per tool and reason when the schema is left out of the request. */
/** toArgsSchema's answer per schema object. */
const converted = new WeakMap<object, ArgsSchemaResult>();

export function argsSchemaFor(source: unknown, tool: string): JsonSchema | undefined {
  if (source === undefined || source === null) return undefined;
  // A tool's schema is converted and compiled once, not at every call the tool makes.
  let out =
    typeof source === "object" || typeof source === "function" ? converted.get(source) : undefined;
  if (!out) {
    out = toArgsSchema(source);
    if (typeof source === "object" || typeof source === "function") converted.set(source, out);
  }
  if ("schema" in out) return out.schema;
  const message = `Airlock: the requests of tool ${tool} carry no argsSchema: ${out.skipped}. Edits of its arguments are checked where the tool runs, not when they are decided.`;
  if (!warned.has(message)) {
    warned.add(message);
    process.emitWarning(message, { code: ARGS_SCHEMA_WARNING });
  }
  return undefined;
}

/** The args as the tool's schema parses them (defaults filled, types its own), or a sentence a
 * person can read saying where they do not fit ("amountCents: expected a number, got the text
 * \"lots\""). A JSON Schema parses through the engine's own compiled copy of it; `carried` (the
 * JSON Schema the requests carry) words the problems the way the engine does. */
export async function parseToolArgs<Output>(
  schema: ToolSchema<unknown, Output>,
  args: unknown,
  carried?: JsonSchema,
): Promise<{ ok: true; value: Output } | { ok: false; detail: string }> {
  const json = isStandardSchema(schema) ? carried : schema;
  let issues: Parameters<typeof describeIssues>[0];
  if (isStandardSchema(schema)) {
    const result = await schema["~standard"].validate(args);
    if (result.issues === undefined) return { ok: true, value: result.value as Output };
    issues = result.issues;
  } else {
    let compiled: ReturnType<typeof compileArgsSchema>;
    try {
      // A JSON Schema is plain data; a validator object that is no Standard Schema (zod before
      // 3.24) would read as the empty schema, which takes anything.
      const proto = Object.getPrototypeOf(schema) as unknown;
      if (proto !== Object.prototype && proto !== null) throw new Error("it is not plain JSON");
      compiled = compileArgsSchema(schema);
    } catch (err) {
      throw new InvalidInputError(
        `The tool's schema is neither a Standard Schema (zod 3.24 or later, valibot, ...) nor a JSON Schema Airlock can read: ${errorText(err).replace(/`/g, "")}`,
        "schema",
      );
    }
    const parsed = compiled.safeParse(args);
    if (parsed.success) return { ok: true, value: parsed.data as Output };
    issues = parsed.error.issues;
  }
  if (json !== undefined) {
    try {
      checkArgsAgainst(json, args, "args");
    } catch (err) {
      // "The arguments do not fit the tool's schema: <problems>": the problems, as the engine says them.
      if (isAirlockError(err)) return { ok: false, detail: err.message.replace(/^[^:]*: /, "") };
      throw err;
    }
  }
  return { ok: false, detail: describeIssues(issues) };
}

function describeIssues(
  issues: ReadonlyArray<{
    readonly message: string;
    readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
  }>,
): string {
  const parts = issues.slice(0, 3).map((issue) => {
    const path = (issue.path ?? [])
      .map((p) => String(typeof p === "object" && p !== null ? p.key : p))
      .join(".");
    return `${path || "the arguments"}: ${issue.message.replace(/`/g, "")}`;
  });
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : "";
  return `${parts.join("; ")}${more}`;
}

function jsonSchemaOf(source: unknown): unknown {
  if (source === null || (typeof source !== "object" && typeof source !== "function")) {
    return undefined;
  }
  const std = (source as { "~standard"?: { jsonSchema?: { input?: unknown } } })["~standard"];
  const input = std?.jsonSchema?.input;
  if (typeof input === "function") {
    return (input as (o: { target: string }) => unknown).call(std?.jsonSchema, {
      target: "draft-2020-12",
    });
  }
  if ("_zod" in source) {
    return z.toJSONSchema(source as z.ZodType, { io: "input", unrepresentable: "any" });
  }
  // zod 3 and other validators without a JSON Schema of their own: nothing to carry.
  if (std !== undefined || "_def" in source || typeof source === "function") return undefined;
  return source;
}

function isPlainObject(v: unknown): v is JsonSchema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
