// The project's documentation as the docs tests read it: README.md and every markdown file under
// docs/ (the site's build output and cache, under docs/.vitepress, left out).
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** README.md and docs/**\/*.md, as paths relative to the root ("docs/guide/inbox.md"), sorted. */
export function markdownFiles(): string[] {
  const found: string[] = ["README.md"];
  const walk = (dir: string, depth: number): void => {
    if (depth > 8) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path, depth + 1);
      else if (entry.name.endsWith(".md")) found.push(relative(ROOT, path));
    }
  };
  walk(join(ROOT, "docs"), 0);
  return found.sort((a, b) =>
    a === "README.md" ? -1 : b === "README.md" ? 1 : a.localeCompare(b),
  );
}
