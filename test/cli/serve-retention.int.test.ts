// `airlock serve --retention-days N`: the daily prune starts with the server and stops with it; a
// value that is not a positive number stops the start with one line.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { startServe } from "../../src/cli/serve.js";
import { airlockArgs, tempDir } from "../helpers.js";

const t = tempDir("airlock-retention-");
afterAll(() => t.cleanup());

describe("airlock serve --retention-days", () => {
  it("starts the daily prune with the server and stops it on close", async () => {
    const printed: string[] = [];
    const serving = await startServe({
      db: join(t.dir, "airlock.db"),
      port: 0,
      host: "127.0.0.1",
      env: {},
      logger: pino({ level: "silent" }),
      print: (line) => printed.push(line),
      retentionDays: 30,
    });
    try {
      const health = await fetch(`${serving.url}/healthz`);
      expect(health.status).toBe(200);
    } finally {
      await serving.close();
    }
    expect(printed.join("\n")).toContain("Airlock is serving at");
  });

  it("refuses a retention that is not a positive number, with one line", () => {
    const r = spawnSync(
      process.execPath,
      [
        ...airlockArgs(),
        "--db",
        join(t.dir, "x.db"),
        "serve",
        "--port",
        "0",
        "--retention-days",
        "0",
      ],
      { encoding: "utf8", timeout: 60_000 },
    );
    expect(r.status).not.toBe(0);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("--retention-days");
  });
});
