// Runs the `airlock` command as a child process (built or from source, see `airlockArgs`), the way
// the CLI tests need it. Asynchronous on purpose: some tests serve HTTP from this same process, which
// a blocking spawn would starve.
import { type ChildProcess, spawn } from "node:child_process";
import { airlockArgs } from "../helpers.js";

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliRun {
  child: ChildProcess;
  /** What the command printed so far. */
  output(): { stdout: string; stderr: string };
  done: Promise<CliResult>;
}

/** Starts `airlock ...args`; `input` is written to stdin, which closes after `keepOpenMs`. */
export function startCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { input?: string; keepOpenMs?: number } = {},
): CliRun {
  const child = spawn(process.execPath, [...airlockArgs(), ...args], { env });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  if (options.input !== undefined) child.stdin?.write(options.input);
  // Kept open for a while, stdin closes then or when the command exits, whichever comes first.
  let closing: NodeJS.Timeout | undefined;
  if (!options.keepOpenMs) child.stdin?.end();
  else closing = setTimeout(() => child.stdin?.end(), options.keepOpenMs);
  const done = new Promise<CliResult>((resolve) =>
    child.on("exit", (code) => {
      clearTimeout(closing);
      resolve({ code, stdout, stderr });
    }),
  );
  return { child, output: () => ({ stdout, stderr }), done };
}

export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { input?: string; keepOpenMs?: number } = {},
): Promise<CliResult> {
  return startCli(args, env, options).done;
}
