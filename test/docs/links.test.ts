// Every relative link of README.md and docs/**/*.md points to a file that exists in the checkout,
// and a link to a heading of a markdown file (`guide.md#audit-key`) names a heading that file has,
// under both GitHub's anchors and the docs site's (VitePress), so it works in either place.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { markdownFiles, ROOT } from "./markdown-files.js";

interface Link {
  line: number;
  target: string;
}

/** The links and images of a markdown text, outside code blocks and inline code. */
function linksOf(markdown: string): Link[] {
  const out: Link[] = [];
  let fence = false;
  markdown.split("\n").forEach((raw, i) => {
    if (/^\s*(```|~~~)/.test(raw)) {
      fence = !fence;
      return;
    }
    if (fence || /^( {4}|\t)/.test(raw)) return;
    const line = raw.replace(/`[^`]*`/g, "``");
    for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      out.push({ line: i + 1, target: m[1] as string });
    }
  });
  return out;
}

/** A heading's text as both renderers see it: code marks, emphasis and links reduced to words. */
function headingText(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`/g, "")
    .replace(/(\*\*|__|\*)/g, "")
    .trim();
}

/** GitHub's anchor for a heading. */
function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** VitePress's anchor for a heading (@mdit-vue/shared's slugify). */
function vitepressSlug(text: string): string {
  return [...text.normalize("NFKD")]
    .filter((c) => c.charCodeAt(0) >= 0x20)
    .join("")
    .replace(/[\u0300-\u036F]/g, "")
    .replace(/[\s~`!@#$%^&*()\-_+=[\]{}|\\;:"'“”‘’<>,.?/]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^-+|-+$/g, "")
    .replace(/^(\d)/, "_$1")
    .toLowerCase();
}

/** The anchors a markdown text's headings get under one slug function (duplicates numbered). */
function anchorsOf(markdown: string, slug: (text: string) => string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    const m = fence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(headingText(m[1] as string));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** What is wrong with the relative links of `file` (a path from the root), one line each. */
function brokenLinks(file: string, markdown: string, read: (path: string) => string | undefined) {
  const problems: string[] = [];
  for (const { line, target } of linksOf(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue;
    const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined];
    const path = pathPart === "" ? file : normalize(join(dirname(file), decodeURI(pathPart)));
    const where = `${file}:${line}: ${target}`;
    if (path.startsWith("..") || path.startsWith("/")) {
      problems.push(`${where}: leaves the repository`);
      continue;
    }
    const text = read(path);
    if (text === undefined) {
      problems.push(`${where}: no such file`);
      continue;
    }
    if (anchor === undefined || !path.endsWith(".md")) continue;
    const github = anchorsOf(text, githubSlug);
    const site = anchorsOf(text, vitepressSlug);
    if (!github.has(anchor) || !site.has(anchor)) {
      problems.push(`${where}: ${path} has no heading with that anchor on GitHub and on the site`);
    }
  }
  return problems;
}

/** A path's text (a directory reads as ""), or undefined when nothing is there. */
function readRepo(path: string): string | undefined {
  const full = join(ROOT, path);
  if (!existsSync(full)) return undefined;
  try {
    return readFileSync(full, "utf8");
  } catch {
    return "";
  }
}

describe("relative links in the documentation", () => {
  const files = markdownFiles();

  it("reads the README and the docs", () => {
    expect(files[0]).toBe("README.md");
    expect(files.filter((f) => f.startsWith("docs/")).length).toBeGreaterThan(10);
  });
  for (const file of files) {
    it(`${file}: every relative link points to a file that exists`, () => {
      const text = readFileSync(join(ROOT, file), "utf8");
      expect(brokenLinks(file, text, readRepo)).toEqual([]);
    });
  }
  it("the README links to every guide and reference page under docs/, through docs/index.md", () => {
    const index = readFileSync(join(ROOT, "docs/index.md"), "utf8");
    const linked = new Set(
      linksOf(index).map((l) => normalize(join("docs", l.target.split("#")[0] as string))),
    );
    const pages = files.filter((f) => f.startsWith("docs/") && f !== "docs/index.md");
    expect(pages.filter((p) => !linked.has(p))).toEqual([]);
    expect(linksOf(readFileSync(join(ROOT, "README.md"), "utf8")).map((l) => l.target)).toContain(
      "docs/index.md",
    );
  });
});

describe("link checking", () => {
  const repo: Record<string, string> = {
    "docs/a.md": "# Audit log\n\n## The `airlock/server` entry (HTTP)\n\n## Keys\n\n## Keys\n",
    "docs/img.png": "",
    "src/x.ts": "",
  };
  const read = (p: string) => repo[p];

  it("finds links and images, not those in code", () => {
    const md = "[a](x.md) ![i](img.png)\n`[no](no.md)`\n```\n[no](no.md)\n```\n    [no](no.md)\n";
    expect(linksOf(md)).toEqual([
      { line: 1, target: "x.md" },
      { line: 1, target: "img.png" },
    ]);
  });

  it("reports a missing file, a missing anchor and a link out of the repository", () => {
    const md = [
      "[ok](a.md#audit-log) [ok](../src/x.ts) [ok](img.png) [web](https://example.com/x)",
      "[missing](b.md) [anchor](a.md#nothing) [out](../../etc/passwd) [self](#keys-1)",
    ].join("\n");
    expect(brokenLinks("docs/c.md", md, read)).toEqual([
      "docs/c.md:2: b.md: no such file",
      "docs/c.md:2: a.md#nothing: docs/a.md has no heading with that anchor on GitHub and on the site",
      "docs/c.md:2: ../../etc/passwd: leaves the repository",
      "docs/c.md:2: #keys-1: no such file",
    ]);
  });

  it("accepts an anchor only where GitHub and the site agree", () => {
    const text = repo["docs/a.md"] as string;
    expect([...anchorsOf(text, githubSlug)]).toEqual([
      "audit-log",
      "the-airlockserver-entry-http",
      "keys",
      "keys-1",
    ]);
    expect([...anchorsOf(text, vitepressSlug)]).toEqual([
      "audit-log",
      "the-airlock-server-entry-http",
      "keys",
      "keys-1",
    ]);
    expect(
      brokenLinks("docs/b.md", "[x](a.md#keys-1) [y](a.md#the-airlockserver-entry-http)", read),
    ).toEqual([
      "docs/b.md:1: a.md#the-airlockserver-entry-http: docs/a.md has no heading with that anchor on GitHub and on the site",
    ]);
  });
});
