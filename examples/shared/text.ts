// Small text helpers shared by the offline planner and the local search indexes: one tokenizer and
// one stop-word list, so a query and the documents it searches are cut into terms the same way.

const STOPWORDS: ReadonlySet<string> = new Set(
  (
    "a an and are as at be been but by can could do does did for from has have how i if in into is it " +
    "its me my no not of on or our should so than that the their them then there these they this to " +
    "up us use used using very was we well were what when where which while who why will with would " +
    "you your about also any more most much other over such some"
  ).split(" "),
);

/** Lower-case terms of letters and digits. */
export function tokenize(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t !== "");
}

export function isStopword(term: string): boolean {
  return STOPWORDS.has(term);
}

/** The distinct meaningful terms of a text, in order of first appearance. */
export function keywords(text: string): string[] {
  const seen = new Set<string>();
  for (const t of tokenize(text)) {
    if (t.length > 1 && !STOPWORDS.has(t)) seen.add(t);
  }
  return [...seen];
}

/** Splits prose into sentences (a full stop, question or exclamation mark followed by a space). */
export function sentences(text: string): string[] {
  return text
    .replace(/\s+/g, " ")
    .split(/(?<=[.!?])\s+(?=[A-Z0-9"(])/)
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** How many of `terms` occur in `text`, a term matching any word that starts with it (so "pump"
 * counts "pumps"). */
export function termHits(text: string, terms: readonly string[]): number {
  const words = tokenize(text);
  let hits = 0;
  for (const term of terms) {
    const stem = term.length > 4 ? term.slice(0, -1) : term;
    if (words.some((w) => w.startsWith(stem))) hits++;
  }
  return hits;
}
