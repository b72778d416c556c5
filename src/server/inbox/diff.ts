// Unified diffs in a request's preview, split into lines the page colours by kind.
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
