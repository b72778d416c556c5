// The package as npm would publish it, for the packaging tests (package.int.test.ts: the build, the
// installed bin and demo; package-types.int.test.ts: the declarations in a strict user project). Each
// file makes its own copy of the project in a temporary folder (so the dist/ of this checkout is left
// alone) with the built package in it, and `npm pack`s that copy once for all its tests.
import { execFile, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { builtIsCurrent } from "../helpers.js";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const run = promisify(execFile);
export const PKG = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  name: string;
  version: string;
};

/** npm's own settings from an `npm test` around us (npm_config_*, lifecycle) must not reach the
 * npm commands run here. */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^npm_/i.test(k) && !k.startsWith("AIRLOCK_") && k !== "HUMAN_REVIEW_TIMEOUT") env[k] = v;
  }
  return { ...env, ...extra };
}

const npmCheck = spawnSync("npm", ["--version"], { env: cleanEnv(), encoding: "utf8" });
/** Why npm cannot be used here, or undefined when it can. */
export const npmMissing =
  npmCheck.status === 0
    ? undefined
    : `npm is not available here (${npmCheck.error?.message ?? npmCheck.stderr})`;
if (npmMissing) process.stderr.write(`test/packaging: skipping npm pack: ${npmMissing}\n`);

/** The version of a package this checkout has installed. */
export function versionHere(name: string): string {
  return (
    JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")) as {
      version: string;
    }
  ).version;
}

/** `npm install` from the local cache when it holds everything (after `npm ci`), else with the
 * registry too. */
export async function install(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const installArgs = ["install", "--no-audit", "--no-fund", "--ignore-scripts", ...args];
  const offline = await run("npm", [...installArgs, "--offline"], { cwd, env }).catch(
    () => undefined,
  );
  if (!offline) await run("npm", [...installArgs, "--prefer-offline"], { cwd, env });
}

export interface PackedProject {
  /** The temporary folder everything lives in (the copy, the tarball, the test's own projects). */
  work: string;
  /** The copy of the project, built. */
  project: string;
  /** `npm pack` of the copy, once for every test that installs the tarball. */
  pack(): Promise<{ tarball: string; files: string[] }>;
  cleanup(): void;
}

/** A copy of the project with the built package in it: the dist/ of this checkout, copied as it is
 * when it is current (`npm test` builds it with `npm run build` first), else built in the copy by
 * the same build script. */
export async function builtCopy(): Promise<PackedProject> {
  const work = mkdtempSync(join(tmpdir(), "airlock-package-"));
  const project = join(work, "project");
  // What the package is built from, without node_modules, dist, databases or the git folder.
  for (const entry of [
    "package.json",
    "package-lock.json",
    "tsconfig.json",
    "tsconfig.build.json",
    "README.md",
    "LICENSE",
    "scripts",
    "src",
    "examples",
  ]) {
    const from = join(ROOT, entry);
    if (!existsSync(from)) continue;
    cpSync(from, join(project, entry), {
      recursive: true,
      filter: (src) => !/\.(db|db-wal|db-shm)$/.test(src),
    });
  }
  symlinkSync(join(ROOT, "node_modules"), join(project, "node_modules"), "dir");
  const bin = join(ROOT, "dist", "src", "cli", "main.js");
  if (builtIsCurrent() && statSync(bin).mode & 0o111) {
    // cpSync keeps each file's mode: the bin stays as `npm run build` left it.
    cpSync(join(ROOT, "dist"), join(project, "dist"), { recursive: true });
  } else {
    await run(process.execPath, ["scripts/build.mjs"], { cwd: project, env: cleanEnv() });
  }
  let packed: Promise<{ tarball: string; files: string[] }> | undefined;
  return {
    work,
    project,
    pack() {
      // --ignore-scripts: the copy is built already; npm pack would run `prepare` (the build) again.
      packed ??= run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", work], {
        cwd: project,
        env: cleanEnv(),
        maxBuffer: 64 * 1024 * 1024,
      }).then((out) => {
        const [info] = JSON.parse(out.stdout.slice(out.stdout.indexOf("["))) as {
          filename: string;
          files: { path: string }[];
        }[];
        return {
          tarball: join(work, info?.filename as string),
          files: (info?.files ?? []).map((f) => f.path),
        };
      });
      return packed;
    },
    cleanup() {
      rmSync(work, { recursive: true, force: true });
    },
  };
}
