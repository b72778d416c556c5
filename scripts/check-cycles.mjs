// The dependency check of `npm run lint`: fails (exit 1) when
//   - src/ has a circular import (type-only imports are erased first, as at run time: `dpdm -T`);
//   - a file of src/ imports a folder of src/ that is not below its own in LAYERS (types included):
//     a folder imports itself and the folders of lower layers only, never a folder of its own layer
//     nor one above (src/core, the bottom layer, imports nothing of the project outside itself);
//   - a file of src/ sits in a folder LAYERS does not place;
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

/** The folders of src/, bottom first. `.` is the files directly in src/ (index.ts, the package's
 * root entry), which the adapters build on. */
const LAYERS = [
  ["core"],
  ["audit", "reply"],
  ["policy", "store", "engine"],
  // The HTTP client speaks the engine's verbs to a server: the console reviews through it.
  ["client"],
  ["tools", "mcp", "channels", "testing"],
  ["."],
  ["server", "adapters"],
  ["cli"],
];
const LAYER_OF = new Map(LAYERS.flatMap((folders, i) => folders.map((f) => [f, i])));

/** The folder of a file of src/ (`.` for src/index.ts), or undefined outside src/. */
function folderOf(path) {
  const m = /^src\/(?:([^/]+)\/)?[^/]+$/.exec(path) ?? /^src\/([^/]+)\//.exec(path);
  if (!m) return undefined;
  return m[1] ?? ".";
}

/** Why `file` may not import `target` (both under src/), or undefined when it may. */
function layerProblem(file, target) {
  const from = folderOf(file);
  const to = folderOf(target);
  if (from === undefined || to === undefined || from === to) return undefined;
  const a = LAYER_OF.get(from);
  const b = LAYER_OF.get(to);
  if (a === undefined || b === undefined) return undefined; // reported once per folder below
  if (b < a) return undefined;
  const allowed = LAYERS.slice(0, a).flat();
  const where = (f) => (f === "." ? "src/" : `src/${f}`);
  return `${where(from)} (layer ${a}) may import ${allowed.length === 0 ? "nothing of src/ outside itself" : `only itself and ${allowed.map(where).join(", ")}`}; ${where(to)} is in layer ${b}, ${b === a ? "the same" : "above it"} (LAYERS in scripts/check-cycles.mjs)`;
}

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
const unplaced = new Set();
for (const file of Object.keys(all)) {
  const folder = file.startsWith("src/") ? folderOf(file) : undefined;
  if (folder !== undefined && !LAYER_OF.has(folder) && !unplaced.has(folder)) {
    unplaced.add(folder);
    problems.push(
      `src/${folder} (${file}) has no place in the layer order: add the folder to LAYERS in scripts/check-cycles.mjs`,
    );
  }
}
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
    } else if (d.id.startsWith("src/")) {
      const why = layerProblem(file, d.id);
      if (why) problems.push(`${file} imports ${d.id} ("${d.request}"): ${why}`);
    }
  }
}

if (problems.length > 0) {
  process.stderr.write(`dependency check failed:\n${problems.map((p) => `- ${p}`).join("\n")}\n`);
  process.exit(1);
}
const files = Object.keys(runtime).filter((f) => f.startsWith("src/")).length;
process.stdout.write(
  `dependency check: ${files} files of src/, no circular import, layers kept (${LAYERS.map((l) => l.join(" ")).join(" < ")})\n`,
);
