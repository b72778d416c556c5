// The local document collection that stands in for the web in phase B: `corpus/` next to this file,
// addressed as `corpus://<file>`. Fetching reads a file (with a size limit), parsing turns markdown or
// plain text into a title, sections and plain text, and the search index is built from the parsed text.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createSearchIndex, type Doc, type SearchIndex } from "../shared/search-index.js";

export const CORPUS_DIR = fileURLToPath(new URL("./corpus/", import.meta.url));
const SCHEME = "corpus://";
/** Larger documents are refused, like a fetch with a size limit. */
export const MAX_FETCH_BYTES = 200_000;

export interface Fetched {
  url: string;
  content_type: "text/markdown" | "text/plain";
  text: string;
  bytes: number;
}

export interface ParsedSection {
  heading: string;
  text: string;
}

export interface Parsed {
  title: string;
  sections: ParsedSection[];
  /** Plain text without markdown syntax. */
  text: string;
}

export class FetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FetchError";
  }
}

export interface Collection {
  index: SearchIndex;
  fetch(url: string): Fetched;
  urls(): string[];
}

export function openCollection(dir: string = CORPUS_DIR): Collection {
  const files = readdirSync(dir)
    .filter((f) => [".md", ".txt"].includes(extname(f)))
    .sort();
  const fetchFile = (url: string): Fetched => {
    if (!url.startsWith(SCHEME)) throw new FetchError(`${url} is not in the local collection`);
    const name = url.slice(SCHEME.length);
    if (!files.includes(name)) throw new FetchError(`${url} was not found (404)`);
    const path = join(dir, name);
    const bytes = statSync(path).size;
    if (bytes > MAX_FETCH_BYTES) {
      throw new FetchError(`${url} is ${bytes} bytes, over the ${MAX_FETCH_BYTES}-byte limit`);
    }
    return {
      url,
      content_type: extname(name) === ".md" ? "text/markdown" : "text/plain",
      text: readFileSync(path, "utf8"),
      bytes,
    };
  };
  const docs: Doc[] = files.map((name) => {
    const fetched = fetchFile(`${SCHEME}${name}`);
    const parsed = parseContent(fetched.text, fetched.content_type);
    return { id: name, url: fetched.url, title: parsed.title, text: parsed.text };
  });
  return {
    index: createSearchIndex(docs),
    fetch: fetchFile,
    urls: () => files.map((f) => `${SCHEME}${f}`),
  };
}

/** Markdown: `#` is the title, `##` starts a section. Plain text: the first line is the title. */
export function parseContent(content: string, contentType: string): Parsed {
  const lines = content.replace(/\r\n?/g, "\n").split("\n");
  let title = "";
  const sections: ParsedSection[] = [];
  let current: ParsedSection = { heading: "", text: "" };
  const push = () => {
    const text = current.text.trim();
    if (text) sections.push({ heading: current.heading, text });
  };
  const markdown = contentType === "text/markdown";
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (markdown && /^#\s/.test(line) && !title) {
      title = line.replace(/^#\s+/, "");
      continue;
    }
    if (markdown && /^#{2,6}\s/.test(line)) {
      push();
      current = { heading: line.replace(/^#+\s+/, ""), text: "" };
      continue;
    }
    if (!markdown && i === 0) {
      title = line;
      continue;
    }
    current.text += `${markdown ? plain(line) : line}\n`;
  }
  push();
  const text = sections
    .map((s) => s.text.replace(/\n+/g, " "))
    .join(" ")
    .trim();
  return { title: title || sections[0]?.heading || "Untitled", sections, text };
}

/** Strips inline markdown: links keep their text, emphasis and code marks go, list marks go. */
function plain(line: string): string {
  return line
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[*_`]/g, "")
    .replace(/^[-+>]\s+/, "")
    .replace(/^\d+\.\s+/, "");
}
