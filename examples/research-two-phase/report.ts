// The live report: a markdown document with one section per outline heading. It is only changed by
// `updateReport`, which adds at most `max_update_size` characters per call and always leaves valid
// markdown with the agreed outline intact.

export const PENDING = "_Pending._";

/** The report before any section is written. With the reviewer's answers to the plan's clarifying
 * questions, a scope note under the title says what the report was written for. */
export function reportSkeleton(
  query: string,
  outline: readonly string[],
  clarifications: readonly { question: string; answer: string }[] = [],
): string {
  const sections = [...outline, "Sources"].map((h) => `## ${h}\n\n${PENDING}\n`);
  const scope = clarifications.length
    ? `${[
        "> **Scope, from the reviewer's answers:**",
        ...clarifications.map((c) => `> - ${oneLine(c.question)} **${oneLine(c.answer)}**`),
      ].join("\n")}\n\n`
    : "";
  return `# Research report: ${query}\n\n${scope}${sections.join("\n")}`;
}

/** Text kept on one line, so an answer cannot start a heading or leave the scope note. */
function oneLine(text: string): string {
  return text
    .replace(/\s+/g, " ")
    .replace(/^#+\s*/, "")
    .trim();
}

export class ReportUpdateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ReportUpdateError";
  }
}

/** Adds `text` to the section `heading`: it replaces the placeholder, or continues the section. */
export function updateReport(
  report: string,
  heading: string,
  text: string,
  maxUpdateSize: number,
): string {
  if (text.length > maxUpdateSize) {
    throw new ReportUpdateError(
      `an update of ${text.length} characters is over max_update_size (${maxUpdateSize})`,
    );
  }
  const marker = `## ${heading}\n\n`;
  const start = report.indexOf(marker);
  if (start < 0) {
    throw new ReportUpdateError(`the report has no section "${heading}"; the outline is fixed`);
  }
  const bodyStart = start + marker.length;
  const next = report.indexOf("\n## ", bodyStart);
  const bodyEnd = next < 0 ? report.length : next + 1;
  const body = report.slice(bodyStart, bodyEnd).trimEnd();
  // Markdown headings inside an update would change the outline; list items and prose are fine.
  const clean = text.replace(/^#+\s*/gm, "").trim();
  const joiner = isListItem(clean) ? "\n" : " ";
  const newBody = body === PENDING || body === "" ? clean : `${body}${joiner}${clean}`;
  return `${report.slice(0, bodyStart)}${newBody}\n${next < 0 ? "" : "\n"}${report.slice(bodyEnd).replace(/^\n+/, "")}`;
}

/** Cuts text into pieces of at most `max` characters, at sentence ends (or list items) when possible,
 * else between words, and only mid-word for a single word longer than `max`. */
export function chunkText(text: string, max: number): string[] {
  if (max < 1) throw new RangeError(`Expected \`max\` to be at least 1, got \`${max}\``);
  // Lines first (a list item stays whole), then sentences within a line of prose.
  const units = text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .flatMap((line) => (isListItem(line) ? [line] : line.split(/(?<=[.!?\]])\s+(?=[A-Z0-9_(])/)));
  const out: string[] = [];
  let current = "";
  const flush = () => {
    if (current) out.push(current);
    current = "";
  };
  for (const unit of units) {
    for (const piece of splitLong(unit, max)) {
      const sep = isListItem(piece) ? "\n" : " ";
      if (current && current.length + sep.length + piece.length > max) flush();
      current = current ? `${current}${sep}${piece}` : piece;
    }
  }
  flush();
  return out;
}

function isListItem(text: string): boolean {
  return /^(?:[-*+]|\d+\.)\s/.test(text);
}

function splitLong(unit: string, max: number): string[] {
  if (unit.length <= max) return [unit];
  const out: string[] = [];
  let current = "";
  for (const word of unit.split(/\s+/)) {
    if (word.length > max) {
      if (current) out.push(current);
      current = "";
      for (let i = 0; i < word.length; i += max) out.push(word.slice(i, i + max));
      continue;
    }
    if (current && current.length + 1 + word.length > max) {
      out.push(current);
      current = word;
    } else current = current ? `${current} ${word}` : word;
  }
  if (current) out.push(current);
  return out;
}
