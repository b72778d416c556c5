// Runs `airlock` as a child process in a folder of the test's choosing (a temporary working
// directory, to see what the command leaves there), with none of this machine's Airlock settings.
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { airlockArgs } from "../helpers.js";
import type { CliResult } from "./run-cli.js";

/** `airlockArgs()` usable from any working directory: `--import tsx` is resolved from here, not
 * from the child's folder (where no node_modules is). */
export function airlockArgsAnywhere(): string[] {
  const tsx = createRequire(import.meta.url).resolve("tsx");
  return airlockArgs().map((a) => (a === "tsx" ? tsx : a));
}

/** The environment of a child `airlock`: none of this machine's AIRLOCK_ settings, then `extra`. */
export function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith("AIRLOCK_")) delete env[k];
  return { ...env, ...extra };
}

/** Starts `airlock ...args` in `cwd`; stdin is closed at once. */
export function spawnAirlock(args: string[], env: NodeJS.ProcessEnv, cwd: string): ChildProcess {
  return spawn(process.execPath, [...airlockArgsAnywhere(), ...args], {
    env,
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Runs `airlock ...args` in `cwd` to its end. */
export function runAirlockIn(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<CliResult> {
  const child = spawnAirlock(args, env, cwd);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}
