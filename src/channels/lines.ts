// Reading answers line by line from a stream, with a time limit per read. Lines that arrive in one
// chunk with the answer are kept per stream (not per prompt), so a script piping "r\ncomment\na\n"
// into several prompts in a row loses nothing; between prompts the stream is paused, so a process
// reading stdin can still exit.
import { StringDecoder } from "node:string_decoder";

export type LineResult = { kind: "line"; text: string } | { kind: "timeout" } | { kind: "end" };

export interface LineReader {
  /** The next line, or `timeout` after `timeoutMs`, or `end` when the stream has ended. */
  next(timeoutMs: number): Promise<LineResult>;
  /** Stops listening and pauses the stream; unread lines stay for the next reader. */
  release(): void;
}

interface StreamState {
  decoder: StringDecoder;
  partial: string;
  lines: string[];
  ended: boolean;
}

const states = new WeakMap<NodeJS.ReadableStream, StreamState>();
/** setTimeout fires at once beyond this; longer waits are taken in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export function readLines(input: NodeJS.ReadableStream): LineReader {
  let state = states.get(input);
  if (!state) {
    state = { decoder: new StringDecoder("utf8"), partial: "", lines: [], ended: false };
    states.set(input, state);
  }
  const s = state;
  if ((input as { readableEnded?: boolean }).readableEnded) s.ended = true;
  let wake: (() => void) | undefined;

  const onData = (chunk: Buffer | string) => {
    const text = s.partial + (typeof chunk === "string" ? chunk : s.decoder.write(chunk));
    const parts = text.split("\n");
    s.partial = parts.pop() ?? "";
    for (const p of parts) s.lines.push(p.endsWith("\r") ? p.slice(0, -1) : p);
    wake?.();
  };
  const onEnd = () => {
    const rest = s.partial + s.decoder.end();
    s.partial = "";
    if (rest !== "") s.lines.push(rest);
    s.ended = true;
    wake?.();
  };
  input.on("data", onData);
  input.on("end", onEnd);
  input.on("error", onEnd);
  input.resume();

  return {
    async next(timeoutMs) {
      const until = performance.now() + timeoutMs;
      for (;;) {
        const line = s.lines.shift();
        if (line !== undefined) return { kind: "line", text: line };
        if (s.ended) return { kind: "end" };
        const left = until - performance.now();
        if (left <= 0) return { kind: "timeout" };
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(Math.ceil(left), MAX_TIMER_MS));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    },
    release() {
      input.removeListener("data", onData);
      input.removeListener("end", onEnd);
      input.removeListener("error", onEnd);
      if (!s.ended) input.pause();
    },
  };
}
