// The library never loads the demo: no module under src/ imports from examples/ (the `airlock`
// command loads examples/demo.js at run time, by a path resolved when a demo is asked for), and no
// library code sets HUMAN_REVIEW_TIMEOUT for its users.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.(ts|tsx|mts|cts|js|mjs)$/.test(entry.name) && !/\.test\./.test(entry.name)) {
      yield path;
    }
  }
}

/** Import and export specifiers written in a module: `from "x"`, `import "x"`, `import("x")`,
 * `require("x")`. */
function specifiers(code: string): string[] {
  const found: string[] = [];
  const pattern =
    /\bfrom\s*["']([^"']+)["']|\bimport\s*["']([^"']+)["']|\bimport\s*\(\s*["'`]([^"'`]+)["'`]\s*\)|\brequire\s*\(\s*["']([^"']+)["']\s*\)/g;
  for (const m of code.matchAll(pattern)) {
    const spec = m[1] ?? m[2] ?? m[3] ?? m[4];
    if (spec) found.push(spec);
  }
  return found;
}

describe("the library (src/)", () => {
  const files = [...sources(join(ROOT, "src"))];

  it("has modules to check", () => {
    expect(files.length).toBeGreaterThan(20);
  });

  it("imports nothing from examples/", () => {
    const offending: string[] = [];
    for (const file of files) {
      for (const spec of specifiers(readFileSync(file, "utf8"))) {
        if (/(^|\/)examples(\/|$)/.test(spec)) offending.push(`${relative(ROOT, file)}: ${spec}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it("does not set HUMAN_REVIEW_TIMEOUT", () => {
    const offending = files.filter((file) =>
      /process\.env\.HUMAN_REVIEW_TIMEOUT\s*(\?\?|\|\||)=(?!=)/.test(readFileSync(file, "utf8")),
    );
    expect(offending.map((f) => relative(ROOT, f))).toEqual([]);
  });

  it("recognises every way of writing an import", () => {
    expect(
      specifiers(
        'import { a } from "../../examples/index.js";\nexport * from \'./x.js\';\nimport "./side.js";\nawait import("../examples/demo.js");\nrequire("y");',
      ),
    ).toEqual(["../../examples/index.js", "./x.js", "./side.js", "../examples/demo.js", "y"]);
  });
});
