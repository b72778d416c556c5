import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** A fresh temporary folder, removed by the returned cleanup. */
export function tempDir(prefix = "airlock-test-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
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
  builtIsFresh ??= process.env.AIRLOCK_TEST_FROM_SOURCE !== "1" && builtIsNewerThanSources();
  return builtIsFresh ? [BUILT_MAIN] : ["--import", "tsx", SOURCE_MAIN];
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
