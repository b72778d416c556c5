import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ListFilter, Store } from "../src/core/store.js";

/** A fresh temporary folder, removed by the returned cleanup. */
export function tempDir(prefix = "airlock-test-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The ids of every page of a listing's summaries, followed by cursor (pages of 2 unless
 * `filter.limit` says; 500 pages at most). */
export async function allIds(store: Store, filter: ListFilter): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 500; pages++) {
    const page = await store.listSummaries({ limit: 2, ...filter, cursor });
    ids.push(...page.items.map((s) => s.id));
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  return ids;
}

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BUILT_MAIN = join(ROOT, "dist", "src", "cli", "main.js");
const SOURCE_MAIN = join(ROOT, "src", "cli", "main.ts");
let builtIsFresh: boolean | undefined;

/** Node's arguments that start the `airlock` command in a child process (`spawn(process.execPath,
 * [...airlockArgs(), ...args])`): the built dist/src/cli/main.js when it is newer than every file of
 * src/ and examples/ (`npm test` builds first), which starts about three times faster; else the
 * sources through tsx. AIRLOCK_TEST_FROM_SOURCE=1 always takes the sources. */
export function airlockArgs(): string[] {
  return builtIsCurrent() ? [BUILT_MAIN] : ["--import", "tsx", SOURCE_MAIN];
}

/** Whether dist/ was built from the sources as they are (`npm test` builds first), so that a test
 * may import the built package (`builtModule`). */
export function builtIsCurrent(): boolean {
  builtIsFresh ??= process.env.AIRLOCK_TEST_FROM_SOURCE !== "1" && builtIsNewerThanSources();
  return builtIsFresh;
}

/** A module of the built package, e.g. `builtModule("src/audit/verify.js")`. */
export async function builtModule<T>(path: string): Promise<T> {
  return (await import(pathToFileURL(join(ROOT, "dist", path)).href)) as T;
}

function builtIsNewerThanSources(): boolean {
  let built: number;
  try {
    built = statSync(BUILT_MAIN).mtimeMs;
  } catch {
    return false;
  }
  const newer = (dir: string): boolean => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && newer(path)) return true;
      } else if (entry.isFile() && !/\.test\.tsx?$/.test(entry.name)) {
        if (statSync(path).mtimeMs > built) return true;
      }
    }
    return false;
  };
  return !newer(join(ROOT, "src")) && !newer(join(ROOT, "examples"));
}

const BUILD_CHILD = join(ROOT, "test", "helpers", "build-child.mjs");
const compiledChildren = new Map<string, string>();

/** Node's arguments that run the TypeScript file `script` (a test's child process, or a program of
 * examples/) in a child process: `spawn(process.execPath, [...scriptArgs(script), ...args])`. When
 * dist/ is current (`builtIsCurrent`), a file of src/ or examples/ runs as built, and a test's own
 * file runs compiled on its own into .tmp/test-children/ (once per test process), importing the
 * built modules of src/ and examples/ in place of the sources: it starts about three times faster
 * than through tsx, which is what it does otherwise. */
export function scriptArgs(script: string): string[] {
  if (!builtIsCurrent()) return ["--import", createRequire(import.meta.url).resolve("tsx"), script];
  const path = relative(ROOT, script);
  if (/^(src|examples)\//.test(path)) return [join(ROOT, "dist", path.replace(/\.tsx?$/, ".js"))];
  let compiled = compiledChildren.get(script);
  if (!compiled) {
    compiled = join(ROOT, ".tmp", "test-children", path.replace(/\.tsx?$/, ".mjs"));
    execFileSync(process.execPath, [BUILD_CHILD, script, compiled], { stdio: "pipe" });
    compiledChildren.set(script, compiled);
  }
  return [compiled];
}

/** Waits until `check` passes (returns without throwing, and not `false`), trying it every
 * `intervalMs` (default 20) for at most `timeoutMs` (default 10 s); resolves with what it returned.
 * On timeout, throws the check's last error, or says what was awaited. For waiting on something
 * that happens by itself (a child's output, a delivery, a file growing) instead of sleeping a fixed
 * time. */
export async function eventually<T>(
  check: () => T | Promise<T>,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<Exclude<T, false>> {
  const { timeoutMs = 10_000, intervalMs = 20, what = "the condition" } = options;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (let attempt = 0; ; attempt++) {
    try {
      const value = await check();
      if (value !== false) return value as Exclude<T, false>;
      last = undefined;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) {
      if (last instanceof Error) throw last;
      throw new Error(`${what} did not hold within ${timeoutMs} ms (${attempt + 1} tries)`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Watches the event loop with a 10 ms interval; `stop()` returns the longest gap between two ticks,
 * in ms (a loop blocked by synchronous work shows as one long gap). */
export function watchEventLoop(): { stop(): number } {
  let last = Date.now();
  let maxGap = 0;
  const tick = setInterval(() => {
    const now = Date.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
  }, 10);
  return {
    stop() {
      clearInterval(tick);
      return maxGap;
    },
  };
}

/** A child running the TypeScript file SCRIPT with `args` (see `scriptArgs`) whose stdout is read as
 * lines, for multi-process tests:
 * `until(match)` resolves once the lines so far satisfy `match`, `line(prefix)` with the first line
 * starting with `prefix`; both fail after `ms` with the child's stderr. Kill it in the test's cleanup. */
export function startLineChild(script: string, args: string[]) {
  const child = spawn(process.execPath, [...scriptArgs(script), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let buf = "";
  let stderr = "";
  const waiters: { match: (l: string[]) => boolean; resolve: () => void }[] = [];
  child.stdout?.on("data", (d: Buffer) => {
    buf += d.toString();
    const parts = buf.split("\n");
    buf = parts.pop() ?? "";
    lines.push(...parts);
    for (const w of [...waiters]) if (w.match(lines)) w.resolve();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const until = (match: (l: string[]) => boolean, ms = 20_000, what = "get there") =>
    new Promise<void>((resolve, reject) => {
      if (match(lines)) return resolve();
      const t = setTimeout(
        () => reject(new Error(`child did not ${what} in ${ms} ms; stderr: ${stderr}`)),
        ms,
      );
      waiters.push({
        match,
        resolve: () => {
          clearTimeout(t);
          resolve();
        },
      });
    });
  const line = async (prefix: string, ms = 25_000) => {
    const find = (l: string[]) => l.find((x) => x.startsWith(prefix));
    await until((l) => find(l) !== undefined, ms, `print ${prefix}`);
    return find(lines) as string;
  };
  return { child, lines, until, line, exited, stderr: () => stderr };
}
