// Starting a child process (a TypeScript script, see `scriptArgs`) that talks JSON over IPC, and waiting for
// its messages with a time limit. Children are always killed by `stop()` if still running.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { scriptArgs } from "../helpers.js";

export type Message = Record<string, unknown> & { type: string };

export interface Child {
  readonly process: ChildProcess;
  send(message: Message): void;
  /** The next message of this type not yet taken (messages are queued until asked for). */
  next<T extends Message = Message>(type: string, timeoutMs?: number): Promise<T>;
  /** Resolves with the exit code once the child has exited. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export function startChild(script: string, env: Record<string, string>): Child {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const proc = spawn(process.execPath, scriptArgs(path), {
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const queue: Message[] = [];
  const wakers = new Set<() => void>();
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    proc.on("exit", (code) => {
      exitCode = code;
      for (const w of [...wakers]) w();
      resolve(code);
    });
  });
  proc.on("message", (m: Message) => {
    queue.push(m);
    for (const w of [...wakers]) w();
  });
  return {
    process: proc,
    exited,
    send(message) {
      if (proc.connected) proc.send(message);
    },
    async next<T extends Message>(type: string, timeoutMs = 30_000): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const i = queue.findIndex((m) => m.type === type);
        if (i >= 0) return queue.splice(i, 1)[0] as T;
        const failed = queue.find((m) => m.type === "error");
        if (failed) throw new Error(`${script} failed: ${String(failed.message)}`);
        if (exitCode !== undefined) {
          throw new Error(`${script} exited (code ${exitCode}) before sending "${type}"`);
        }
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`${script} sent no "${type}" within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(done, left);
          function done() {
            clearTimeout(t);
            wakers.delete(done);
            resolve();
          }
          wakers.add(done);
        });
      }
    },
    async stop() {
      if (exitCode !== undefined) return;
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 3_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** In a child: send a message to the parent. */
export function tell(message: Message): void {
  process.send?.(message);
}

/** In a child: report an unexpected failure to the parent and exit non-zero. */
export function failWith(err: unknown): void {
  const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`${message}\n`);
  if (process.send) process.send({ type: "error", message }, () => process.exit(1));
  else process.exit(1);
}
