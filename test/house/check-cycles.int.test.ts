// scripts/check-cycles.mjs, the dependency check of `npm run lint`, on small trees of its own: it
// must fail on a cycle, on a folder importing one of its own layer or above (src/core reaching up,
// src/channels reaching into src/server), on a folder the order does not place, and on src/
// importing examples/ or test/.
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../helpers.js";

const SCRIPT = fileURLToPath(new URL("../../scripts/check-cycles.mjs", import.meta.url));
const run = promisify(execFile);

let cleanup: (() => void) | undefined;
afterEach(() => {
  cleanup?.();
  cleanup = undefined;
});

async function check(files: Record<string, string>): Promise<{ code: number; out: string }> {
  const t = tempDir("airlock-cycles-");
  cleanup = t.cleanup;
  const tsconfig = JSON.stringify({
    compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", strict: true },
  });
  for (const [path, text] of Object.entries({ "tsconfig.json": tsconfig, ...files })) {
    mkdirSync(dirname(join(t.dir, path)), { recursive: true });
    writeFileSync(join(t.dir, path), text);
  }
  try {
    const { stdout, stderr } = await run(process.execPath, [SCRIPT, "--root", t.dir]);
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

describe("dependency check", () => {
  it("passes a tree without cycles whose core imports only core and packages", async () => {
    const res = await check({
      "src/core/a.ts":
        'import { z } from "zod";\nimport { b } from "./b.js";\nexport const a = b + String(z);\n',
      "src/core/b.ts": 'import { join } from "node:path";\nexport const b = join("x");\n',
      "src/engine/e.ts": 'import { a } from "../core/a.js";\nexport const e = a;\n',
    });
    expect(res).toMatchObject({ code: 0 });
    expect(res.out).toContain("no circular import");
  });

  it("fails on a circular import", async () => {
    const res = await check({
      "src/engine/a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
      "src/engine/b.ts": 'import { a } from "./a.js";\nexport const b = () => a;\n',
    });
    expect(res.code).toBe(1);
    expect(res.out).toMatch(/1 circular import/);
    expect(res.out).toContain("src/engine/a.ts");
  });

  it("does not count a cycle made only of type imports", async () => {
    const res = await check({
      "src/engine/a.ts": 'import type { B } from "./b.js";\nexport type A = { b?: B };\n',
      "src/engine/b.ts": 'import type { A } from "./a.js";\nexport type B = { a?: A };\n',
    });
    expect(res).toMatchObject({ code: 0 });
  });

  it("fails when src/core imports from a layer above, a type import included", async () => {
    const res = await check({
      "src/core/a.ts": 'import type { S } from "../store/s.js";\nexport type A = S;\n',
      "src/store/s.ts": "export type S = string;\n",
    });
    expect(res.code).toBe(1);
    expect(res.out).toContain("src/core/a.ts imports src/store/s.ts");
  });

  it("passes imports that go down the folder order, the root entry and the adapters included", async () => {
    const res = await check({
      "src/core/c.ts": "export const c = 1;\n",
      "src/audit/a.ts": 'import { c } from "../core/c.js";\nexport const a = c;\n',
      "src/engine/e.ts": 'import { a } from "../audit/a.js";\nexport const e = a;\n',
      "src/channels/ch.ts": 'import { e } from "../engine/e.js";\nexport const ch = e;\n',
      "src/index.ts": 'export { e } from "./engine/e.js";\n',
      "src/adapters/ad.ts": 'import { e } from "../index.js";\nexport const ad = e;\n',
      "src/server/s.ts":
        'import { ch } from "../channels/ch.js";\nimport { c } from "../core/c.js";\nexport const s = ch + c;\n',
      "src/cli/main.ts": 'import { s } from "../server/s.js";\nexport const m = s;\n',
    });
    expect(res).toMatchObject({ code: 0 });
    expect(res.out).toContain("layers kept");
  });

  it("fails when src/channels imports src/server, naming the file and the import", async () => {
    const res = await check({
      "src/core/c.ts": "export const c = 1;\n",
      "src/server/problem.ts": 'import { c } from "../core/c.js";\nexport const problem = c;\n',
      "src/channels/slack/routes.ts":
        'import type { problem } from "../../server/problem.js";\nexport type R = typeof problem;\n',
    });
    expect(res.code).toBe(1);
    expect(res.out).toContain(
      'src/channels/slack/routes.ts imports src/server/problem.ts ("../../server/problem.js")',
    );
    expect(res.out).toContain("src/server is in layer 6, above it");
  });

  it("fails when a folder imports another of its own layer", async () => {
    const res = await check({
      "src/engine/e.ts": "export const e = 1;\n",
      "src/store/s.ts": 'import { e } from "../engine/e.js";\nexport const s = e;\n',
    });
    expect(res.code).toBe(1);
    expect(res.out).toContain('src/store/s.ts imports src/engine/e.ts ("../engine/e.js")');
    expect(res.out).toContain("the same");
  });

  it("fails when a lower layer imports the root entry src/index.ts", async () => {
    const res = await check({
      "src/engine/e.ts": "export const e = 1;\n",
      "src/index.ts": 'export { e } from "./engine/e.js";\n',
      "src/tools/t.ts": 'import { e } from "../index.js";\nexport const t = e;\n',
    });
    expect(res.code).toBe(1);
    expect(res.out).toContain('src/tools/t.ts imports src/index.ts ("../index.js")');
  });

  it("fails on a folder of src/ the order does not place", async () => {
    const res = await check({
      "src/core/c.ts": "export const c = 1;\n",
      "src/gadgets/g.ts": 'import { c } from "../core/c.js";\nexport const g = c;\n',
    });
    expect(res.code).toBe(1);
    expect(res.out).toContain("src/gadgets (src/gadgets/g.ts) has no place in the layer order");
  });

  it("fails when src/ imports examples/ or test/", async () => {
    const res = await check({
      "src/tools/t.ts":
        'import { h } from "../../test/h.js";\nimport { x } from "../../examples/x.js";\nexport const t = h + x;\n',
      "test/h.ts": "export const h = 1;\n",
      "examples/x.ts": "export const x = 2;\n",
    });
    expect(res.code).toBe(1);
    expect(res.out).toContain("src/tools/t.ts imports test/h.ts");
    expect(res.out).toContain("src/tools/t.ts imports examples/x.ts");
  });

  it("fails on an import of the project that does not resolve, whose edges it cannot see", async () => {
    const res = await check({ "src/engine/a.ts": 'export { b } from "./gone.js";\n' });
    expect(res.code).toBe(1);
    expect(res.out).toContain('src/engine/a.ts imports "./gone.js", which does not resolve');
  });
});
