// The package's root, `airlock-hitl`, keeps to what most programs need: at most 40 names, values and
// types counted alike (issue 34: it had grown to 162). Everything else lives in a subpath of
// package.json "exports", each backed by an entry file of src/. This counts the root's names so it
// cannot grow back silently: a name added to src/index.ts past the bound fails here, and so does an
// `export *` or a declaration, which would hide names from the count.
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAX_ROOT_NAMES = 40;

interface Exported {
  name: string;
  /** Erased at run time (`export type { … }` or `type X` inside the braces). */
  typeOnly: boolean;
}

/** The names an entry file re-exports, each as it is exported (`a as b` counts as `b`). */
function exportedNames(source: string): Exported[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
  const out: Exported[] = [];
  for (const m of code.matchAll(/export\s+(type\s+)?\{([^}]*)\}\s*from\s*"[^"]+"\s*;/g)) {
    const whole = m[1] !== undefined;
    for (const raw of (m[2] ?? "").split(",")) {
      const part = raw.trim();
      if (part === "") continue;
      const typeOnly = whole || /^type\s/.test(part);
      const name = part
        .replace(/^type\s+/, "")
        .split(/\s+as\s+/)
        .at(-1) as string;
      out.push({ name: name.trim(), typeOnly });
    }
  }
  return out;
}

/** What is left of an entry file once its `export { … } from "…"` statements are taken out. */
function otherStatements(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/\/\/.*$/gm, "")
    .replace(/export\s+(type\s+)?\{[^}]*\}\s*from\s*"[^"]+"\s*;/g, "")
    .trim();
}

const rootSource = readFileSync(`${ROOT}src/index.ts`, "utf8");

describe("the package root", () => {
  it(`exports at most ${MAX_ROOT_NAMES} names, values and types counted alike`, () => {
    const names = exportedNames(rootSource).map((e) => e.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBeGreaterThan(0);
    expect(
      names.length,
      `src/index.ts exports ${names.length} names: move some to a subpath`,
    ).toBeLessThanOrEqual(MAX_ROOT_NAMES);
  });

  it("lists every name it exports: re-exports only, no export * nor declaration", () => {
    expect(otherStatements(rootSource)).toBe("");
  });

  it("exports at run time exactly the values it lists, so the count above is the real one", async () => {
    const listed = exportedNames(rootSource)
      .filter((e) => !e.typeOnly)
      .map((e) => e.name)
      .sort();
    const root = (await import("../../src/index.js")) as Record<string, unknown>;
    expect(Object.keys(root).sort()).toEqual(listed);
  });

  it("keeps the engine, its errors, hitlTool, the client and verifyApproval", () => {
    const names = new Set(exportedNames(rootSource).map((e) => e.name));
    for (const name of [
      "createAirlock",
      "AirlockError",
      "ApprovalRequest",
      "RequestInput",
      "DecisionInput",
      "hitlTool",
      "parseReply",
      "createClient",
      "verifyApproval",
      "runApproved",
    ]) {
      expect(names.has(name), name).toBe(true);
    }
  });
});

describe("the subpaths", () => {
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as {
    exports: Record<string, string | { types: string; default: string }>;
  };

  it("each lead to an entry file of src/ that only re-exports, one name from one place", () => {
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (typeof target === "string") continue; // ./package.json
      const source = target.default.replace(/^\.\/dist\//, "").replace(/\.js$/, ".ts");
      const tsx = source.replace(/\.ts$/, ".tsx");
      const file = existsSync(`${ROOT}${source}`) ? source : tsx;
      expect(existsSync(`${ROOT}${file}`), `${subpath} → ${file}`).toBe(true);
      expect(target.types, subpath).toBe(target.default.replace(/\.js$/, ".d.ts"));
      const names = exportedNames(readFileSync(`${ROOT}${file}`, "utf8")).map((e) => e.name);
      expect(new Set(names).size, `${subpath} exports a name twice`).toBe(names.length);
    }
  });

  it("do not repeat the root's names: each name is imported from one entry", () => {
    const rootNames = new Set(exportedNames(rootSource).map((e) => e.name));
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (typeof target === "string" || subpath === ".") continue;
      const file = target.default.replace(/^\.\/dist\//, "").replace(/\.js$/, ".ts");
      if (!existsSync(`${ROOT}${file}`)) continue; // a .tsx entry declares its own names
      const again = exportedNames(readFileSync(`${ROOT}${file}`, "utf8"))
        .map((e) => e.name)
        .filter((n) => rootNames.has(n));
      expect(again, `${subpath} repeats the root's names`).toEqual([]);
    }
  });
});
