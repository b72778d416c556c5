// Rule policies: a predicate over the request and the verdict to give when it holds. A rule that does
// not match has no opinion (returns undefined), so rules compose with `firstVerdict`/`strictestVerdict`.

import type { Policy, PolicyVerdict } from "../core/policy.js";
import type { Level, ParsedRequestInput } from "../core/schemas.js";
import { expectNonNegativeNumber } from "../core/validate.js";

export type RulePredicate = (input: ParsedRequestInput) => boolean;

/** A policy that gives `verdict` when `predicate` holds, and no opinion otherwise. */
export function when(predicate: RulePredicate, verdict: PolicyVerdict): Policy {
  return ({ input }) => (predicate(input) ? { ...verdict } : undefined);
}

/** Gives `level` to every request whose action is one of `actions`. */
export function forActions(actions: readonly string[], level: Level, reason?: string): Policy {
  const set = new Set(actions);
  return when((input) => set.has(input.action), {
    level,
    reason: reason ?? `action is one of ${[...set].join(", ")}`,
  });
}

export const FILE_WRITE_ACTIONS = ["files.write", "write_file"] as const;

export interface SmallFileWritesOptions {
  /** The largest write, in bytes (inclusive), that is approved without a human. */
  maxBytes: number;
  /** Which actions are file writes. @default ["files.write", "write_file"] */
  actions?: readonly string[];
}

/** True when the request is a file write whose size is known and at most `maxBytes`. */
export function isSmallFileWrite(options: SmallFileWritesOptions): RulePredicate {
  expectNonNegativeNumber("maxBytes", options.maxBytes);
  const actions = new Set(options.actions ?? FILE_WRITE_ACTIONS);
  return (input) => {
    if (!actions.has(input.action)) return false;
    const size = fileWriteBytes(input.args);
    return size !== undefined && size <= options.maxBytes;
  };
}

/** Auto-approves file writes of at most `maxBytes` (pattern 4's "small files" rule). */
export function smallFileWrites(options: SmallFileWritesOptions): Policy {
  return when(isSmallFileWrite(options), {
    level: "auto",
    reason: `file write of at most ${options.maxBytes} bytes`,
  });
}

/** The size of a write: UTF-8 bytes of `args.content` when it is a string, else `args.bytes` or
 * `args.size` when a non-negative number. Unknown size means no opinion, never "small". */
export function fileWriteBytes(args: Readonly<Record<string, unknown>>): number | undefined {
  if (typeof args.content === "string") return Buffer.byteLength(args.content, "utf8");
  // Content of another shape (an array of lines, an encoded buffer) has a size nobody measured: a
  // small declared `size` beside it must not pass a large write.
  if (args.content !== undefined) return undefined;
  for (const key of ["bytes", "size"]) {
    const v = args[key];
    if (typeof v === "number" && Number.isFinite(v) && v >= 0) return v;
  }
  return undefined;
}
