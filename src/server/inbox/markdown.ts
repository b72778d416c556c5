// Markdown from a request (summary, preview) rendered for the inbox. Raw HTML in the source is
// escaped, never passed through, and markdown-it refuses javascript:/vbscript:/data: links, so no
// script can run from a request's content.
//
// The work is bounded, whatever an agent stores: only the first `MAX_RENDERED_CHARS` characters are
// rendered (the page says how much was left out), and each text is rendered once per request version
// and kept in a small cache, so page views and live refreshes cost no rendering.
import MarkdownIt from "markdown-it";

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

// Links open in a new tab without handing it a reference to the inbox.
const defaultLinkOpen =
  md.renderer.rules.link_open ??
  ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  if (token) {
    token.attrSet("rel", "noopener noreferrer nofollow");
    token.attrSet("target", "_blank");
  }
  return defaultLinkOpen(tokens, idx, options, env, self);
};

/** The most characters of markdown (a summary or a preview) that the inbox renders. */
export const MAX_RENDERED_CHARS = 20_000;
/** The most characters of plain text (a diff, the arguments as JSON) a page shows: these cost
 * linear work to show, and a reviewer approving a file should see all of it. */
export const MAX_SHOWN_CHARS = 200_000;

/** The head of `text` that is shown, and how many characters were left out. */
export function bounded(text: string, max = MAX_RENDERED_CHARS): { text: string; omitted: number } {
  if (text.length <= max) return { text, omitted: 0 };
  // Do not cut a surrogate pair in two.
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return { text: text.slice(0, end), omitted: text.length - end };
}

let renders = 0;
/** How many times markdown was actually rendered (not served from the cache); for tests. */
export function markdownRenders(): number {
  return renders;
}

/** Renders markdown (already bounded by the caller) to HTML. */
export function renderMarkdown(source: string): string {
  renders++;
  return md.render(source);
}

const CACHE_ENTRIES = 500;
const cache = new Map<string, string>();

/** Renders once per `key` (request id, version and field): later calls reuse the HTML. */
export function renderMarkdownOnce(key: string, source: string): string {
  const hit = cache.get(key);
  if (hit !== undefined) {
    // Most recently used last, so the oldest entry is the first to go.
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const html = renderMarkdown(source);
  cache.set(key, html);
  while (cache.size > CACHE_ENTRIES) {
    const oldest = cache.keys().next().value;
    if (oldest === undefined) break;
    cache.delete(oldest);
  }
  return html;
}
