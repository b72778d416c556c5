// The agent may only touch files inside its sandbox folder. A path is refused when it is absolute or
// climbs out (`../`), and also when a symbolic link inside the sandbox points outside it.
import { realpathSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";

export class SandboxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SandboxError";
  }
}

/** The absolute path of `path` (relative to `root`), or a SandboxError when it escapes `root`. */
export function resolveInSandbox(root: string, path: string): string {
  if (typeof path !== "string" || path.trim() === "") {
    throw new SandboxError("the path is empty");
  }
  if (isAbsolute(path)) {
    throw new SandboxError(`\`${path}\` is absolute; give a path relative to the sandbox`);
  }
  const realRoot = realpathSync(root);
  const target = resolve(realRoot, path);
  if (!inside(realRoot, target) || target === realRoot) {
    throw new SandboxError(`\`${path}\` is outside the sandbox`);
  }
  // Follow links on the part of the path that exists already.
  let existing = target;
  for (;;) {
    try {
      existing = realpathSync(existing);
      break;
    } catch {
      const parent = dirname(existing);
      if (parent === existing) break;
      existing = parent;
    }
  }
  if (!inside(realRoot, existing)) {
    throw new SandboxError(`\`${path}\` leads outside the sandbox through a link`);
  }
  return target;
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}
