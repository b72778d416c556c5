// A policy decides the level of a gate before any human is asked: `auto` approves at once (recorded
// with method `auto`), `quick` and `full` wait for a person. Policies compose: see compose.ts.
import type { Level, ParsedRequestInput } from "./schemas.js";

export interface PolicyVerdict {
  level: Level;
  /** Why, in words a reviewer reads in the audit log. */
  reason?: string;
  confidence?: number;
}

export interface PolicyContext {
  input: ParsedRequestInput;
}

/** Returns a verdict, or undefined to have no opinion (the next policy, or `full`, applies). */
export type Policy = (
  ctx: PolicyContext,
) => PolicyVerdict | undefined | Promise<PolicyVerdict | undefined>;
