#!/usr/bin/env node
// Entry point of the `airlock` command (package bin).
import { terminalSafe } from "./output.js";
import { ERROR_EXIT, main } from "./program.js";

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(
      `airlock: ${terminalSafe(err instanceof Error ? err.message : String(err))}\n`,
    );
    process.exitCode = ERROR_EXIT;
  },
);
