// What the README promises a newcomer, checked: it opens with the two-command quick start that
// scripts/fresh-clone-check.sh runs on a fresh clone, stays short (the rest lives in docs/), shows
// the Python client and a screenshot on its first screen, lists the five patterns with their guides,
// and never tells anyone to install the unrelated npm package named `airlock`.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./markdown-files.js";

const README = readFileSync(join(ROOT, "README.md"), "utf8");
const LINES = README.split("\n");
const PKG = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { name: string };

/** The first fenced block: its info string and its lines. */
function firstBlock(lines: string[]): { info: string; body: string[]; line: number } | undefined {
  const start = lines.findIndex((l) => l.startsWith("```"));
  if (start < 0) return undefined;
  const end = lines.findIndex((l, i) => i > start && l.startsWith("```"));
  return {
    info: (lines[start] as string).slice(3).trim(),
    body: lines.slice(start + 1, end),
    line: start + 1,
  };
}

describe("the README", () => {
  it("starts with the quick start: npm ci && npm start, npm ci && npm test", () => {
    const block = firstBlock(LINES);
    expect(block?.info).toBe("sh");
    // Only the title comes before it.
    expect(LINES.slice(0, (block?.line ?? 1) - 1).filter((l) => l.trim() !== "")).toEqual([
      "# Airlock",
    ]);
    const commands = (block?.body ?? []).map((l) => l.replace(/\s+#.*$/, "").trim());
    expect(commands).toEqual(["npm ci && npm start", "npm ci && npm test"]);
  });

  it("is at most 250 lines", () => {
    expect(LINES.length).toBeLessThanOrEqual(250);
  });

  it("links the Python client and the docs on its first screen, and shows the inbox", () => {
    const firstScreen = LINES.slice(0, 25).join("\n");
    expect(firstScreen).toContain("](clients/python/README.md)");
    expect(firstScreen).toContain("](docs/index.md)");
    expect(firstScreen).toMatch(/!\[[^\]]*\]\(docs\/inbox-queue\.png\)/);
  });

  it("lists the five patterns, each linking to its guide", () => {
    for (const guide of [
      "research-reflection",
      "robot-plan",
      "hitl-tools",
      "file-approval",
      "research-two-phase",
    ]) {
      expect(README).toContain(`](docs/patterns/${guide}.md)`);
    }
  });

  it("has one TypeScript, one HTTP and one Python example", () => {
    const infos = LINES.filter((l) => /^```\w/.test(l)).map((l) => l.slice(3).trim());
    expect(infos).toContain("ts");
    expect(infos).toContain("python");
    expect(README).toMatch(/curl [^\n]*\/v1\/requests/);
  });

  it("installs and imports the package by its own name, never the registry's `airlock`", () => {
    expect(PKG.name).not.toBe("airlock");
    expect(README).toContain(`npm install ${PKG.name}`);
    expect(README).not.toMatch(/npm (i|install) airlock(\s|$)/m);
    expect(README).not.toMatch(/from "airlock(\/[\w-]+)?"/);
    expect(README).not.toMatch(/import\("airlock"\)/);
  });
});
