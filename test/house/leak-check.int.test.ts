// test/setup/leaks.ts, the check after every test file, on files made to leak: a file that leaves a
// server, a child process or a SQLite store open fails naming it; a file that closes everything
// (a child killed without waiting, a socket still closing) passes.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const VITEST = fileURLToPath(new URL("../../node_modules/vitest/vitest.mjs", import.meta.url));
const run = promisify(execFile);

let output = "";
let code = 0;
beforeAll(async () => {
  const args = [VITEST, "run", "--config", "test/house/fixtures/vitest.leaks.config.ts"];
  const env = { ...process.env, NO_COLOR: "1", AIRLOCK_TEST_LEAKS: "" };
  try {
    const r = await run(process.execPath, args, { cwd: ROOT, env, maxBuffer: 1 << 24 });
    output = r.stdout + r.stderr;
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    code = e.code;
    output = e.stdout + e.stderr;
  }
}, 120_000);

describe("leak check after each test file", () => {
  it("fails a file that leaves a server listening", () => {
    expect(code).toBe(1);
    expect(output).toMatch(/FAIL {2}test\/house\/fixtures\/server\.leak\.ts/);
    expect(output).toMatch(
      /server\.leak\.ts leaks:\n {2}still open after the file .*TCPServerWrap/,
    );
  });

  it("fails a file that leaves a child process running", () => {
    expect(output).toMatch(/FAIL {2}test\/house\/fixtures\/child\.leak\.ts/);
    expect(output).toMatch(/child\.leak\.ts leaks:\n {2}still open after the file .*ProcessWrap/);
  });

  it("fails a file that never closes a SQLite store", () => {
    expect(output).toMatch(/FAIL {2}test\/house\/fixtures\/store\.leak\.ts/);
    expect(output).toMatch(/store\.leak\.ts leaks:\n {2}SQLite database never closed: :memory:/);
  });

  it("passes a file that closes everything, a child still exiting and a socket still closing", () => {
    expect(output).toMatch(/✓ test\/house\/fixtures\/clean\.leak\.ts/);
    expect(output).not.toMatch(/clean\.leak\.ts leaks/);
  });
});
