// Unified diffs in a request's preview, split into lines the page colours by kind.
import { createTwoFilesPatch } from "diff";
export type DiffLineKind = "add" | "del" | "hunk" | "meta" | "context";

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
}

/** True when the text reads as a unified diff (file headers or a hunk header near the top). */
export function looksLikeDiff(text: string): boolean {
  const head = text.split("\n", 20);
  return (
    head.some((l) => l.startsWith("@@ ")) &&
    (head.some((l) => l.startsWith("--- ")) ||
      head.some((l) => l.startsWith("+++ ")) ||
      head[0]?.startsWith("@@ ") === true)
  );
}

export function parseDiff(text: string): DiffLine[] {
  return text.split("\n").map((line): DiffLine => {
    if (
      line.startsWith("+++") ||
      line.startsWith("---") ||
      line.startsWith("Index:") ||
      line.startsWith("===")
    ) {
      return { kind: "meta", text: line };
    }
    if (line.startsWith("@@")) return { kind: "hunk", text: line };
    if (line.startsWith("+")) return { kind: "add", text: line };
    if (line.startsWith("-")) return { kind: "del", text: line };
    return { kind: "context", text: line };
  });
}

/** The most characters of each side that `changes` compares. */
const MAX_COMPARED_CHARS = 50_000;

/** The lines that differ between two texts, as a unified diff with a little context; `[]` when they
 * are equal, `undefined` when they are too large or too different to compare in bounded time. */
export function changes(
  before: string,
  after: string,
  names: [string, string] = ["before", "after"],
): DiffLine[] | undefined {
  if (before === after) return [];
  if (before.length > MAX_COMPARED_CHARS || after.length > MAX_COMPARED_CHARS) return undefined;
  const patch = createTwoFilesPatch(names[0], names[1], before, after, undefined, undefined, {
    context: 2,
    maxEditLength: 2_000,
  });
  if (patch === undefined) return undefined;
  // Drop the "Index:"/"===" banner; keep the file headers and hunks.
  return parseDiff(patch.replace(/\n$/, ""))
    .filter((l) => !l.text.startsWith("Index:") && !l.text.startsWith("====="))
    .filter((l) => !l.text.startsWith("\\ No newline"));
}
