import type { z } from "zod";
import { InvalidInputError } from "./errors.js";

/** Parses `value` with `schema`, turning the first zod issue into an InvalidInputError that names the
 * field, what was expected and what came. `prefix` is put before the field path (e.g. `editedArgs`). */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  value: unknown,
  what: string,
  prefix?: string,
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = [prefix, ...(issue?.path ?? []).map(String)].filter(Boolean).join(".");
  const message = issue?.message ?? "invalid value";
  throw new InvalidInputError(
    path ? `invalid ${what}: \`${path}\`: ${message}` : `invalid ${what}: ${message}`,
    path || undefined,
  );
}

// Options of TypeScript APIs are checked with one error type and one message shape (p-queue style):
// Expected `option` to be <what>, got `<value>` (<type>). Durations are milliseconds everywhere.

/** The error for a bad option: InvalidInputError (code `invalid_input`) naming the option. */
export function invalidOption(option: string, expected: string, got: unknown): InvalidInputError {
  return new InvalidInputError(
    `Expected \`${option}\` to be ${expected}, got \`${show(got)}\` (${typeOf(got)})`,
    option,
  );
}

/** A whole number from 1 up. */
export function expectPositiveInt(option: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw invalidOption(option, "a whole number from 1 up", value);
  }
  return value;
}

/** A whole number from 0 up. */
export function expectNonNegativeInt(option: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw invalidOption(option, "a whole number from 0 up", value);
  }
  return value;
}

/** A finite number above 0. */
export function expectPositiveNumber(option: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw invalidOption(option, "a number above 0", value);
  }
  return value;
}

/** A finite number from 0 up. */
export function expectNonNegativeNumber(option: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw invalidOption(option, "a number from 0 and up", value);
  }
  return value;
}

function show(v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "function") return "function";
  if (typeof v !== "object" || v === null) return String(v);
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}
