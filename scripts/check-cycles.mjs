// The dependency check of `npm run lint`: fails (exit 1) when
//   - src/ has a circular import (type-only imports are erased first, as at run time: `dpdm -T`);
//   - a file of src/core imports anything of this project outside src/core (types included: core is
//     the bottom layer, only packages and Node's own modules below it);
//   - a file of src/ imports examples/ or test/.
// Usage: node scripts/check-cycles.mjs [--root DIR]   (default: the folder above scripts/)
import { existsSync } from "node:fs";
import { isBuiltin } from "node:module";
import { join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { parseCircular, parseDependencyTree, prettyCircular } from "dpdm";

const rootArg = process.argv.indexOf("--root");
const root = resolve(
  rootArg >= 0 ? (process.argv[rootArg + 1] ?? ".") : fileURLToPath(new URL("..", import.meta.url)),
);
const entries = ["src/**/*.ts", "src/**/*.tsx"];

/** The dependency tree of src/, keys and ids relative to `root` with forward slashes. */
async function tree(transform) {
  const raw = await parseDependencyTree(entries, {
    cwd: root,
    context: root,
    transform,
    // The project's tsconfig.json resolves "./x.js" to x.ts (NodeNext), as tsc does.
    tsconfig: existsSync(join(root, "tsconfig.json")) ? join(root, "tsconfig.json") : undefined,
  });
  const slash = (p) => p.split(sep).join("/");
  const out = {};
  for (const [file, deps] of Object.entries(raw)) {
    out[slash(relative(root, resolve(root, file)))] = deps?.map((d) => ({
      ...d,
      id: d.id === null || isBuiltin(d.request) ? d.id : slash(relative(root, resolve(root, d.id))),
    }));
  }
  return out;
}

const problems = [];

const runtime = await tree(true);
const circulars = parseCircular(runtime);
if (circulars.length > 0) {
  problems.push(
    `${circulars.length} circular import${circulars.length === 1 ? "" : "s"} in src/ (type-only imports are not counted):\n${prettyCircular(circulars, "  ")}`,
  );
}

const all = await tree(false);
const project = (d) => d.id !== null && !isBuiltin(d.request) && !/(^|\/)node_modules\//.test(d.id);
for (const [file, deps] of Object.entries(all)) {
  if (!file.startsWith("src/") || !deps) continue;
  for (const d of deps) {
    // An import of the project that does not resolve would hide its edges from both checks.
    if (d.id === null && /^\.\.?\//.test(d.request)) {
      problems.push(`${file} imports "${d.request}", which does not resolve to a file`);
    }
    if (!project(d)) continue;
    if (/^(examples|test)\//.test(d.id)) {
      problems.push(
        `${file} imports ${d.id} ("${d.request}"): src/ must not import examples/ or test/`,
      );
    } else if (file.startsWith("src/core/") && !d.id.startsWith("src/core/")) {
      problems.push(
        `${file} imports ${d.id} ("${d.request}"): src/core is the bottom layer and imports nothing of the project outside src/core`,
      );
    }
  }
}

if (problems.length > 0) {
  process.stderr.write(`dependency check failed:\n${problems.map((p) => `- ${p}`).join("\n")}\n`);
  process.exit(1);
}
const files = Object.keys(runtime).filter((f) => f.startsWith("src/")).length;
process.stdout.write(`dependency check: ${files} files of src/, no circular import, layers kept\n`);
