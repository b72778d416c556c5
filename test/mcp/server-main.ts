// Starts the `airlock` command line with `airlock mcp` registered (when src/cli/program.ts does not
// register it yet), for the MCP server tests.
import { registerMcp } from "../../src/cli/commands/mcp.js";
import type { GlobalOptions } from "../../src/cli/context.js";
import { buildProgram } from "../../src/cli/program.js";

const program = buildProgram();
if (!program.commands.some((c) => c.name() === "mcp")) {
  registerMcp(program, () => program.opts<GlobalOptions>());
}
try {
  await program.parseAsync(process.argv);
} catch (err) {
  process.stderr.write(`airlock: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 4;
}
