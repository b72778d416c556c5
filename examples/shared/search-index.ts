// A full-text index over a small document collection (MiniSearch), standing in for a web search in the
// research examples: real queries, ranked results, a snippet per hit.
import MiniSearch from "minisearch";
import { isStopword, keywords, sentences, termHits, tokenize } from "./text.js";

export interface Doc {
  id: string;
  /** Where the document "lives" (a local pseudo-URL such as `corpus://name.md`). */
  url: string;
  title: string;
  text: string;
}

export interface SearchHit {
  id: string;
  url: string;
  title: string;
  /** The sentence of the document that best matches the query. */
  snippet: string;
  score: number;
  /** Share of the query's terms the document matched (0..1), a crude confidence. */
  coverage: number;
}

export interface SearchIndex {
  search(query: string, limit: number): SearchHit[];
  /** Share of the query's terms that the document at `url` contains (0..1); 0 for an unknown url. */
  coverage(url: string, query: string): number;
  readonly size: number;
}

export function createSearchIndex(docs: readonly Doc[]): SearchIndex {
  const index = new MiniSearch<Doc>({
    fields: ["title", "text"],
    storeFields: ["url", "title"],
    tokenize: (text) => tokenize(text),
    processTerm: (term) => (term.length < 2 || isStopword(term) ? null : term),
    searchOptions: { boost: { title: 2 }, prefix: true, fuzzy: 0.15, combineWith: "OR" },
  });
  index.addAll([...docs]);
  const byId = new Map(docs.map((d) => [d.id, d]));
  const byUrl = new Map(docs.map((d) => [d.url, d]));
  const coverage = (d: Doc, terms: readonly string[]) =>
    terms.length
      ? Math.round((termHits(`${d.title} ${d.text}`, terms) / terms.length) * 100) / 100
      : 0;

  return {
    size: docs.length,
    coverage(url, query) {
      const d = byUrl.get(url);
      return d ? coverage(d, keywords(query)) : 0;
    },
    search(query, limit) {
      const terms = keywords(query);
      if (terms.length === 0) return [];
      return index
        .search(query)
        .slice(0, limit)
        .flatMap((r) => {
          const doc = byId.get(String(r.id));
          if (!doc) return [];
          return [
            {
              id: doc.id,
              url: doc.url,
              title: doc.title,
              snippet: bestSentence(doc.text, terms),
              score: Math.round(r.score * 100) / 100,
              coverage: coverage(doc, terms),
            },
          ];
        });
    },
  };
}

function bestSentence(text: string, terms: readonly string[]): string {
  let best = "";
  let bestHits = -1;
  for (const s of sentences(text)) {
    const hits = termHits(s, terms);
    if (hits > bestHits) {
      best = s;
      bestHits = hits;
    }
  }
  return best;
}
