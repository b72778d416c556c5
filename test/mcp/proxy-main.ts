// Starts the `airlock` command line with `airlock mcp-proxy` registered (when src/cli/program.ts does
// not register it yet), for the proxy's tests; failures are reported as `main` does: one line on
// stderr and exit code 4.
import { CommanderError } from "commander";
import { registerMcpProxy } from "../../src/cli/commands/mcp-proxy.js";
import type { GlobalOptions } from "../../src/cli/context.js";
import { buildProgram } from "../../src/cli/program.js";

const program = buildProgram();
if (!program.commands.some((c) => c.name() === "mcp-proxy")) {
  registerMcpProxy(program, () => program.opts<GlobalOptions>());
}
try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (!(err instanceof CommanderError)) {
    process.stderr.write(`airlock: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  process.exitCode = 4;
}
