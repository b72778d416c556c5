// Markdown as a small tree of allowed elements and text, for the approval card: the card builds it
// with createElement and textContent (never innerHTML of request data), so an agent's report reads
// as a document (headings, lists, bold, links) and no markup from it can run.
import MarkdownIt from "markdown-it";

/** Text, or an element of an allowed tag with its children (`href` only on `a`, http(s) only). */
export type MdNode = string | { t: MdTag; c: MdNode[]; href?: string };

const TAGS = [
  "p",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "ul",
  "ol",
  "li",
  "blockquote",
  "strong",
  "em",
  "s",
  "code",
  "pre",
  "a",
  "br",
  "hr",
  "table",
  "thead",
  "tbody",
  "tr",
  "th",
  "td",
] as const;
export type MdTag = (typeof TAGS)[number];
const ALLOWED: ReadonlySet<string> = new Set(TAGS);

const md = new MarkdownIt({ html: false, linkify: true });

type Token = ReturnType<typeof md.parse>[number];
type Element = Exclude<MdNode, string>;

/** The tree of `source` (bounded by the caller). Unknown tags become their children. */
export function markdownTree(source: string): MdNode[] {
  const root: Element = { t: "p", c: [] };
  const stack: Element[] = [root];
  const top = () => stack[stack.length - 1] ?? root;
  const open = (tag: string, href?: string) => {
    const el: Element = { t: (ALLOWED.has(tag) ? tag : "p") as MdTag, c: [] };
    if (href !== undefined) el.href = href;
    top().c.push(el);
    stack.push(el);
  };
  const close = () => {
    if (stack.length > 1) stack.pop();
  };
  const inline = (children: Token[]) => {
    for (const tok of children) {
      switch (tok.type) {
        case "text":
        case "html_inline":
          top().c.push(tok.content);
          break;
        case "code_inline":
          top().c.push({ t: "code", c: [tok.content] });
          break;
        case "softbreak":
          top().c.push("\n");
          break;
        case "hardbreak":
          top().c.push({ t: "br", c: [] });
          break;
        case "image":
          top().c.push(tok.content);
          break;
        case "link_open": {
          const href = String(tok.attrGet("href") ?? "");
          // Only web links; anything else is its text.
          open("a", /^https?:\/\//i.test(href) ? href : undefined);
          if (!/^https?:\/\//i.test(href)) top().t = "em";
          break;
        }
        default:
          if (tok.nesting === 1 && ALLOWED.has(tok.tag)) open(tok.tag);
          else if (tok.nesting === -1 && ALLOWED.has(tok.tag)) close();
      }
    }
  };
  for (const tok of md.parse(source, {})) {
    if (tok.type === "inline") inline(tok.children ?? []);
    else if (tok.type === "fence" || tok.type === "code_block") {
      top().c.push({ t: "pre", c: [tok.content] });
    } else if (tok.type === "hr") top().c.push({ t: "hr", c: [] });
    else if (tok.type === "html_block") top().c.push({ t: "p", c: [tok.content] });
    else if (tok.nesting === 1) {
      // Tight lists hide their paragraphs: their text goes straight into the item.
      if (tok.type === "paragraph_open" && tok.hidden) continue;
      open(tok.tag);
    } else if (tok.nesting === -1) {
      if (tok.type === "paragraph_close" && tok.hidden) continue;
      close();
    }
  }
  return root.c;
}
