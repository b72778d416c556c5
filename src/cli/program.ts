// The `airlock` command. Each group of commands registers itself from its own module.
import { createRequire } from "node:module";
import { Command, CommanderError } from "commander";
import { registerAudit } from "./commands/audit.js";
import { registerChannels } from "./commands/channels.js";
import { registerDecide } from "./commands/decide.js";
import { registerInspect } from "./commands/inspect.js";
import { registerMcp } from "./commands/mcp.js";
import { registerMcpProxy } from "./commands/mcp-proxy.js";
import { registerPrune } from "./commands/prune.js";
import { registerRequest } from "./commands/request.js";
import { registerReview } from "./commands/review.js";
import { CliError, type GlobalOptions } from "./context.js";
import { registerDemo } from "./demo.js";
import { terminalSafe } from "./output.js";
import { missingPeer, missingPeerMessage } from "./peer.js";
import { registerServe } from "./serve.js";
import { registerToken } from "./token.js";

/** This package's version, from its package.json (found by the package's own name). */
function packageVersion(): string {
  const pkg = createRequire(import.meta.url)("airlock-hitl/package.json") as { version: string };
  return pkg.version;
}

export function buildProgram(): Command {
  const program = new Command("airlock")
    .description("Human-in-the-loop approval gates for AI agents")
    .version(packageVersion(), "-V, --version", "print the version of airlock")
    .option("--db <file>", "the SQLite database (default: AIRLOCK_DB or ./airlock.db)")
    .showHelpAfterError("(run airlock --help for the commands)")
    .exitOverride();
  const globals = () => program.opts<GlobalOptions>();
  registerRequest(program, globals);
  registerInspect(program, globals);
  registerDecide(program, globals);
  registerAudit(program, globals);
  registerPrune(program, globals);
  registerReview(program, globals);
  registerServe(program, globals);
  registerToken(program, globals);
  registerDemo(program, globals);
  registerMcp(program, globals);
  registerChannels(program);
  registerMcpProxy(program, globals);
  return program;
}

/** Exit code for failures; 0–3 are decisions (see `airlock request --wait`). */
export const ERROR_EXIT = 4;

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are not failures; commander already printed its message.
      return err.exitCode === 0 ? 0 : ERROR_EXIT;
    }
    // A missing optional peer that no command reported itself (e.g. a channel in --config).
    const peer = missingPeer(err);
    const command = program.args[0] ?? argv[2] ?? "airlock";
    const message =
      peer !== undefined
        ? missingPeerMessage(command, peer)
        : err instanceof Error
          ? err.message
          : String(err);
    process.stderr.write(`airlock: ${terminalSafe(message)}\n`);
    return err instanceof CliError ? err.exitCode : ERROR_EXIT;
  }
}
