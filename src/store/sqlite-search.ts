// Title search on SQLite (ListFilter.q): which trigrams the index is asked for, and which way round
// the query goes. The answer is exact whatever is chosen here (every candidate is checked with
// instr() against the whole text); the choice only decides how much is read.
//
// Why choose: the index (FTS5, trigram, no positions) answers "titles holding all these trigrams" by
// reading each trigram's whole list of rows. In a big table most trigrams of ordinary words are in a
// tenth of all titles, so asking for all of them reads millions of entries (100–250 ms at 6 million
// rows) even when the text itself is rare. A text's rarest two trigrams narrow the candidates almost
// as well at a fraction of the reading. Which ones are rarest is estimated from the newest titles.

import { shareHolding, titlesHolding } from "./paging.js";

/** The distinct runs of three characters (code points) of `text`; none when it is shorter. */
export function trigrams(text: string): string[] {
  const chars = [...text];
  const out = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i++) out.add(chars.slice(i, i + 3).join(""));
  return [...out];
}

/** The FTS5 query for titles holding every one of `grams`: each a quoted string, taken literally
 * (quotes doubled), so no text is read as FTS5 syntax. */
export function matchQuery(grams: readonly string[]): string {
  return grams.map((g) => `"${g.replaceAll('"', '""')}"`).join(" AND ");
}

/** How the listing asks the index (or not):
 * - `index`: read the candidates the index gives, check each, sort them into the listing's order.
 *   Cheap when few titles hold the trigrams; costly when many do (all are read and sorted).
 * - `walk`: walk the listing's own order and keep the rows among the candidates (SQLite builds the
 *   set once); it stops as soon as the page is full. Cheap when matches are not rare; a text that
 *   matches nothing walks the whole listing.
 * - `scan`: no index; walk the listing's order and check every title. For a capped count of a
 *   common text, where building the candidates (every title holding its trigrams) is what costs. */
export type SearchMode = "index" | "walk" | "scan";

export interface TitleSearch {
  /** The text, lower-cased (titleMatches' rule). */
  q: string;
  /** The trigrams the index is asked for (a subset of the text's). */
  grams: string[];
  mode: SearchMode;
}

/** The newest titles, lower-cased: what trigram and text frequencies are estimated from. */
export interface TitleSample {
  titles: readonly string[];
}

/** How many trigrams the index is asked for, rarest first. Each one more costs a read of its list
 * and leaves fewer candidates: a walk only tests the candidates it passes, so two are enough; the
 * index's candidates are all read from the table and sorted, so three, to leave as few as possible.
 * (Measured at 6 million titles: a rare text's candidates 6 ms with three, 63 ms with two; a
 * walk 8 ms with two, 17 ms with three.) */
const ASKED: Record<SearchMode, number> = { walk: 2, index: 3, scan: 0 };

/** Sample titles holding the text before the listing walks rather than sorts: at 2 in 4,000, a
 * page of 50 is expected within 100,000 rows of the listing's order. */
const WALK_SAMPLE_MATCHES = 2;

/** The most rows a capped count is expected to read when it scans without the index. */
const SCAN_COUNT_ROWS = 50_000;

/** The `mode`'s number of `grams`, the rarest in the sample (ties keep the text's order). */
export function rarestGrams(
  grams: readonly string[],
  sample: TitleSample,
  mode: SearchMode,
): string[] {
  return grams
    .map((g, i) => ({ g, i, n: titlesHolding(sample.titles, g) }))
    .sort((a, b) => a.n - b.n || a.i - b.i)
    .slice(0, ASKED[mode])
    .map((x) => x.g);
}

/** The search for `q` (lower-cased, three characters or more) in a listing whose first rows in order
 * held `seen` matches (too few to fill the page): walk when matches were seen there or the sample
 * says they are not rare; otherwise let the index's candidates be sorted. */
export function planSearch(q: string, sample: TitleSample, seen: number): TitleSearch {
  const mode =
    seen > 0 || titlesHolding(sample.titles, q) >= WALK_SAMPLE_MATCHES ? "walk" : "index";
  return { q, grams: rarestGrams(trigrams(q), sample, mode), mode };
}

/** A count of the titles holding `q` that stops at `upTo` (undefined: exact): a scan when the sample
 * says `upTo` matches come within SCAN_COUNT_ROWS rows, else the index's candidates. */
export function planCount(q: string, sample: TitleSample, upTo: number | undefined): TitleSearch {
  const share = shareHolding(sample.titles, q);
  if (upTo !== undefined && share * SCAN_COUNT_ROWS >= upTo) return { q, grams: [], mode: "scan" };
  return { q, grams: rarestGrams(trigrams(q), sample, "index"), mode: "index" };
}
