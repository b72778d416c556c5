// Optional peer dependencies (package.json peerDependenciesMeta: the MCP SDK, the Slack and mail
// libraries, pg, prom-client) are loaded by the commands that need them. A missing one is reported
// as one line naming the package to install, never as a stack trace.
import { createRequire } from "node:module";
import { CliError } from "./errors.js";

let optional: ReadonlySet<string> | undefined;

/** The optional peer dependencies of this package, from its package.json. */
function optionalPeers(): ReadonlySet<string> {
  if (!optional) {
    const pkg = createRequire(import.meta.url)("airlock-hitl/package.json") as {
      peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    };
    optional = new Set(
      Object.entries(pkg.peerDependenciesMeta ?? {})
        .filter(([, meta]) => meta.optional === true)
        .map(([name]) => name),
    );
  }
  return optional;
}

/** The optional peer whose absence made `err` (a failed import or require), else undefined. */
export function missingPeer(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return undefined;
  // "Cannot find package 'pg' imported from …" (import) or "Cannot find module 'pg'" (require).
  const match = /Cannot find (?:package|module) '([^']+)'/.exec(String((err as Error).message));
  const specifier = match?.[1];
  if (!specifier) return undefined;
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? "");
  return optionalPeers().has(name) ? name : undefined;
}

/** The one line for a command that needs a package that is not installed. */
export function missingPeerMessage(command: string, name: string): string {
  return `${command} needs the package "${name}": npm install ${name}`;
}

/** Runs `load` (imports of an optional peer, or of modules that import one); a missing peer
 * becomes a CliError naming it, for `command` (e.g. "serve --postgres"). */
export async function needPeer<T>(command: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    const name = missingPeer(err);
    if (name !== undefined) throw new CliError(missingPeerMessage(command, name));
    throw err;
  }
}
