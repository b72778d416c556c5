// The documentation's TypeScript snippets compile: every ```ts block of README.md and of every
// docs/**/*.md file is written to a file of its own and type-checked with the project's compiler
// options, in one compiler run, its package imports (the package's name and its subpaths, as
// package.json exports them) mapped to the sources. Two markers on a block's first line:
// `// continued` compiles the block after the one before it in the same file (same scope), and
// `// fragment` leaves the block out (a piece that cannot stand alone, shown as the skipped test's
// reason).
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { markdownFiles, ROOT } from "./markdown-files.js";

const run = promisify(execFile);

interface Snippet {
  /** Line of the opening fence in its markdown file (1-based). */
  line: number;
  code: string;
  /** The block is skipped: the text after `// fragment`. */
  fragment?: string;
  /** The block compiles after the previous one (`// continued`). */
  continued: boolean;
}

/** Every ```ts (or ```typescript) block of a markdown text. */
function snippetsOf(markdown: string): Snippet[] {
  const lines = markdown.split("\n");
  const out: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i] ?? "")) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ""); i++) body.push(lines[i] ?? "");
    const first = body[0] ?? "";
    const fragment = /^\/\/\s*fragment\b:?\s*(.*)$/.exec(first);
    out.push({
      line: start + 1,
      code: body.join("\n"),
      continued: /^\/\/\s*continued\b/.test(first),
      ...(fragment ? { fragment: fragment[1]?.trim() || "marked as a fragment" } : {}),
    });
  }
  return out;
}

/** package.json's exports as compiler `paths` to the sources: "<name>/sqlite" → src/store/sqlite-entry.ts. */
function pathsFromExports(dir: string): Record<string, string[]> {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    name: string;
    exports: Record<string, string | { types?: string }>;
  };
  const paths: Record<string, string[]> = {};
  for (const [sub, target] of Object.entries(pkg.exports)) {
    const types = typeof target === "string" ? undefined : target.types;
    if (!types?.startsWith("./dist/")) continue;
    const source = types.replace(/^\.\/dist\//, "").replace(/\.d\.ts$/, ".ts");
    const name = sub === "." ? pkg.name : `${pkg.name}/${sub.replace(/^\.\//, "")}`;
    paths[name] = [relative(dir, join(ROOT, source))];
  }
  return paths;
}

/** The snippets of one markdown file, named by its path for the messages ("docs/guide/x.md"). */
interface Source {
  source: string;
  snippets: Snippet[];
}

/** Type-checks the snippets of every source in one compiler run: the messages of each (lines of its
 * markdown file), by source and snippet index; fragments are not compiled. */
async function compileSnippets(sources: Source[]): Promise<Map<string, Map<number, string[]>>> {
  const dir = join(ROOT, ".tmp", `doc-snippets-${process.pid}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  try {
    // Each snippet (after the blocks it continues) in a module of its own, named by file and line;
    // `parts` say where in the module each block starts, so a message maps back to the markdown.
    const files = new Map<
      string,
      { source: Source; index: number; parts: { from: number; index: number }[] }
    >();
    sources.forEach((src, fileIndex) => {
      const { snippets } = src;
      let chain: number[] = [];
      snippets.forEach((s, index) => {
        chain = s.continued ? [...chain, index] : [index];
        if (s.fragment) return;
        const parts: { from: number; index: number }[] = [];
        let from = 1;
        for (const i of chain) {
          parts.push({ from, index: i });
          from += (snippets[i] as Snippet).code.split("\n").length;
        }
        const name = `doc-${fileIndex}-line-${s.line}.ts`;
        files.set(name, { source: src, index, parts });
        const code = chain.map((i) => (snippets[i] as Snippet).code).join("\n");
        writeFileSync(join(dir, name), `${code}\nexport {};\n`);
      });
    });
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        extends: relative(dir, join(ROOT, "tsconfig.json")),
        compilerOptions: { noEmit: true, paths: pathsFromExports(dir) },
        include: ["*.ts"],
      }),
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    let output = "";
    try {
      await run(process.execPath, [tsc, "-p", join(dir, "tsconfig.json"), "--pretty", "false"], {
        cwd: dir,
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      output = `${e.stdout ?? ""}${e.stderr ?? ""}`;
    }
    // The snippets' own messages; errors inside src/ are for the typecheck step to report.
    const errors = new Map<string, Map<number, string[]>>();
    for (const message of output.split("\n")) {
      const m = /^(doc-\d+-line-\d+\.ts)\((\d+),(\d+)\): (.*)$/.exec(message.trim());
      const file = m ? files.get(m[1] as string) : undefined;
      if (!m || !file) continue;
      const line = Number(m[2]);
      const part = file.parts.filter((p) => p.from <= line).at(-1) ?? file.parts[0];
      const block = file.source.snippets[part?.index ?? file.index] as Snippet;
      // The fence is block.line; the block's first line is the next one.
      const where = `${file.source.source}:${block.line + 1 + line - (part?.from ?? 1)}`;
      const bySnippet = errors.get(file.source.source) ?? new Map<number, string[]>();
      bySnippet.set(file.index, [...(bySnippet.get(file.index) ?? []), `${where}: ${m[4]}`]);
      errors.set(file.source.source, bySnippet);
    }
    return errors;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the documentation's TypeScript snippets", () => {
  const sources: Source[] = markdownFiles().map((source) => ({
    source,
    snippets: snippetsOf(readFileSync(join(ROOT, source), "utf8")),
  }));
  let errors = new Map<string, Map<number, string[]>>();
  beforeAll(async () => {
    errors = await compileSnippets(sources);
  }, 180_000);

  it("finds the snippets, in the README and under docs/", () => {
    const readme = sources.find((s) => s.source === "README.md");
    expect(readme?.snippets.length).toBeGreaterThan(0);
    const docs = sources.filter((s) => s.source.startsWith("docs/") && s.snippets.length > 0);
    expect(docs.length).toBeGreaterThan(5);
  });
  for (const { source, snippets } of sources) {
    snippets.forEach((s, index) => {
      const name = `the snippet at ${source} line ${s.line} compiles`;
      if (s.fragment) it.skip(`${name} (fragment: ${s.fragment})`, () => {});
      else it(name, () => expect(errors.get(source)?.get(index) ?? []).toEqual([]));
    });
  }
});

describe("snippet checking", () => {
  it("maps package imports to the sources, continues blocks, skips fragments, names file lines", {
    timeout: 120_000,
  }, async () => {
    const name = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { name: string })
      .name;
    const md = [
      "# Title", // 1
      "```ts", // 2
      `import { createAirlock } from "${name}";`, // 3
      `import { memoryStore } from "${name}/testing";`, // 4: not exported there
      "const airlock = await createAirlock({ store: undefined as never });", // 5
      "```", // 6
      "text", // 7
      "```ts", // 8
      "// continued", // 9
      "const n: number = airlock.kind;", // 10: no such property
      "```", // 11
      "```ts", // 12
      "// fragment: a piece of an object", // 13
      "outcome: 'approved',", // 14
      "```", // 15
      "```typescript", // 16
      "const s: string = 1;", // 17
      "```", // 18
    ].join("\n");
    const found = snippetsOf(md);
    expect(found.map((s) => [s.line, s.continued, s.fragment])).toEqual([
      [2, false, undefined],
      [8, true, undefined],
      [12, false, "a piece of an object"],
      [16, false, undefined],
    ]);
    const other = { source: "Y.md", snippets: snippetsOf("```ts\nconst t: boolean = 0;\n```") };
    const all = await compileSnippets([{ source: "X.md", snippets: found }, other]);
    const errors = all.get("X.md") ?? new Map<number, string[]>();
    // The second file's block is named by its own file and line.
    expect(all.get("Y.md")?.get(0)).toEqual([expect.stringMatching(/^Y\.md:2: error TS2322/)]);
    expect(errors.get(0)).toEqual([expect.stringMatching(/^X\.md:4: error TS2305: .*memoryStore/)]);
    // The continued block compiles after the first (its own messages counted again, at its lines).
    expect(errors.get(1)).toEqual([
      expect.stringMatching(/^X\.md:4: error TS2305/),
      expect.stringMatching(/^X\.md:10: error TS2339: .*'kind'/),
    ]);
    expect(errors.has(2)).toBe(false);
    expect(errors.get(3)).toEqual([expect.stringMatching(/^X\.md:17: error TS2322/)]);
  });
});
