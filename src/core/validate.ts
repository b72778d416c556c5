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
