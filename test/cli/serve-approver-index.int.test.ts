// `airlock serve --approver-index auto|always|never`: the choice reaches the store (an unknown one,
// given programmatically, is refused by the store itself at start), and the flag refuses anything
// else with one line.
import { join } from "node:path";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { startServe } from "../../src/cli/serve.js";
import type { ApproverIndexUse } from "../../src/store/approver-index.js";
import { tempDir } from "../helpers.js";
import { runCli } from "./run-cli.js";

const t = tempDir("airlock-approver-index-");
afterAll(() => t.cleanup());

const serve = (db: string, approverIndex: ApproverIndexUse) =>
  startServe({
    db: join(t.dir, db),
    port: 0,
    host: "127.0.0.1",
    env: {},
    logger: pino({ level: "silent" }),
    print: () => {},
    approverIndex,
  });

describe("airlock serve --approver-index", () => {
  it("serves with each choice", async () => {
    for (const use of ["auto", "always", "never"] as const) {
      const serving = await serve(`${use}.db`, use);
      try {
        expect((await fetch(`${serving.url}/healthz`)).status).toBe(200);
      } finally {
        await serving.close();
      }
    }
  });

  it("hands the choice to the store, which checks it", async () => {
    await expect(serve("odd.db", "sometimes" as ApproverIndexUse)).rejects.toThrow(
      /Expected `approverIndex` to be "auto", "always" or "never", got "sometimes"/,
    );
  });

  it("refuses another value with one line naming the choices", async () => {
    const args = [
      "--db",
      join(t.dir, "x.db"),
      "serve",
      "--port",
      "0",
      "--approver-index",
      "sometimes",
    ];
    const r = await runCli(args, process.env);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(
      "--approver-index expects one of auto, always, never, got `sometimes`",
    );
  });
});
