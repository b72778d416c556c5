// A scripted terminal for console tests: piped stdin/stdout, and a way to wait for a prompt.
import { PassThrough } from "node:stream";
import pino from "pino";

export interface Terminal {
  input: PassThrough;
  output: PassThrough;
  text(): string;
  /** Resolves once `needle` has been printed `times` times. */
  waitFor(needle: string, times?: number): Promise<void>;
  type(line: string): void;
}

export function terminal(): Terminal {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = "";
  output.on("data", (chunk: Buffer) => {
    printed += chunk.toString("utf8");
  });
  return {
    input,
    output,
    text: () => printed,
    async waitFor(needle, times = 1) {
      const started = Date.now();
      while (printed.split(needle).length - 1 < times) {
        if (Date.now() - started > 5000) {
          throw new Error(`"${needle}" was not printed ${times} time(s); output:\n${printed}`);
        }
        await new Promise((r) => setTimeout(r, 2));
      }
    },
    type(line) {
      input.write(`${line}\n`);
    },
  };
}

/** A pino logger whose JSON lines are kept for assertions. */
export function captureLogs(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "info" },
    { write: (s: string) => lines.push(JSON.parse(s) as Record<string, unknown>) },
  );
  return { logger, lines };
}

export const PROMPT = "Your decision [a/r/d]: ";

/** The reviewer's console (`airlock review`) on a request whose items may be chosen. */
export const REVIEW_PROMPT = "Your decision [a/s/r/d]: ";
