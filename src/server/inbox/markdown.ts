// Markdown from a request (summary, preview) rendered for the inbox. Raw HTML in the source is
// escaped, never passed through, and markdown-it refuses javascript:/vbscript:/data: links, so no
// script can run from a request's content.
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

export function renderMarkdown(source: string): string {
  return md.render(source);
}
