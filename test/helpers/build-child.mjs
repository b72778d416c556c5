// Compiles a test's child-process script (TypeScript) into one ES module that runs with plain node:
// the test's own files it imports are bundled in, packages stay imports, and every import of a file of
// src/ or examples/ becomes an import of its built module under dist/ (so the child runs the package
// as `npm run build` made it, without tsx). Used by scriptArgs (test/helpers.ts), only when dist/ is
// current. Usage: node test/helpers/build-child.mjs SCRIPT.ts OUT.mjs
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const [script, out] = process.argv.slice(2);
if (!script || !out) throw new Error("usage: build-child.mjs SCRIPT.ts OUT.mjs");

const toDist = {
  name: "built-package",
  setup(b) {
    b.onResolve({ filter: /^\./ }, (args) => {
      const path = relative(ROOT, resolve(args.resolveDir, args.path));
      if (!/^(src|examples)\//.test(path)) return undefined;
      const built = join(ROOT, "dist", path.replace(/\.tsx?$/, ".js"));
      return { path: pathToFileURL(built).href, external: true };
    });
  },
};

const result = await build({
  entryPoints: [script],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  write: false,
  logLevel: "error",
  plugins: [toDist],
  outfile: out,
});
// Written under another name, then renamed: test files running side by side may build the same
// child at the same time, and none may start a half-written one.
mkdirSync(dirname(out), { recursive: true });
const partial = `${out}.${process.pid}.partial`;
writeFileSync(partial, result.outputFiles[0].contents);
renameSync(partial, out);
