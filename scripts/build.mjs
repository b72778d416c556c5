// `npm run build`: compiles src/ and examples/ into dist/ (tsc), then copies what tsc does not carry
// (the data files of src/ and of the examples, e.g. src/audit/redaction-rules.json and
// research-two-phase's corpus/) and marks the `airlock` bin executable, since a fresh dist/ loses the
// mode `npx airlock` needs.
// Usage: node scripts/build.mjs [--out DIR]   (default: dist, next to package.json)
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outArg = process.argv.indexOf("--out");
const out = resolve(root, outArg >= 0 ? (process.argv[outArg + 1] ?? "dist") : "dist");

rmSync(out, { recursive: true, force: true });
const typescript = dirname(
  createRequire(join(root, "package.json")).resolve("typescript/package.json"),
);
const tsc = join(typescript, "bin", "tsc");
execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), "--outDir", out], {
  cwd: root,
  stdio: "inherit",
});

// Data files of src/ (e.g. src/audit/redaction-rules.json, read at run time) and of the examples
// (anything that is not TypeScript), at the same place under dist/.
for (const dir of ["src", "examples"]) {
  for (const file of walk(join(root, dir))) {
    if (/\.(ts|tsx)$/.test(file)) continue;
    cpSync(file, join(out, dir, relative(join(root, dir), file)));
  }
}

// Every bin of package.json is executable.
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
for (const bin of Object.values(typeof pkg.bin === "string" ? { [pkg.name]: pkg.bin } : pkg.bin)) {
  const target = join(out, relative("dist", bin));
  chmodSync(target, statSync(target).mode | 0o111);
}

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.isFile()) yield path;
  }
}
