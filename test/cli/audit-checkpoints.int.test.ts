// The command line on a keyed SQLite database: `airlock audit verify` fails when the tail of the log
// was cut, the head rewritten to match and the checkpoint file deleted (the chain itself says that
// checkpoints were being written); `airlock serve` warns when the audit key file or the checkpoint
// file sits in the database's folder, where whoever rewrites the database can reach them too.
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { startServe } from "../../src/cli/serve.js";
import { tempDir } from "../helpers.js";
import { runCli } from "./run-cli.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function folder(): string {
  const t = tempDir("airlock-cli-cp-");
  cleanups.push(t.cleanup);
  return t.dir;
}

function cliEnv(db: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, AIRLOCK_DB: db, AIRLOCK_URL: "" };
  delete env.AIRLOCK_AUDIT_KEY;
  delete env.AIRLOCK_AUDIT_KEY_FILE;
  delete env.AIRLOCK_CHECKPOINT_FILE;
  return env;
}

describe("airlock audit verify without the checkpoint file", () => {
  it("a cut tail with a rewritten head and a deleted checkpoint file exits 1 with one line", async () => {
    const db = join(folder(), "airlock.db");
    const env = cliEnv(db);
    const ids: string[] = [];
    for (const title of ["first", "second"]) {
      const made = await runCli(["request", "--title", title, "--json"], env);
      expect(made.code).toBe(0);
      ids.push((JSON.parse(made.stdout) as { id: string }).id);
    }
    expect((await runCli(["audit", "verify"], env)).code).toBe(0);

    // Someone with write access to the database (not the key) drops the second request with its
    // events, moves the head back to the event before, and deletes the checkpoint file.
    const raw = new Database(db);
    const from = raw
      .prepare("SELECT MIN(seq) AS seq FROM audit WHERE request_id = ?")
      .get(ids[1]) as { seq: number };
    raw.prepare("DELETE FROM audit WHERE seq >= ?").run(from.seq);
    raw.prepare("DELETE FROM requests WHERE id = ?").run(ids[1]);
    raw
      .prepare(
        "UPDATE audit_head SET seq = (SELECT MAX(seq) FROM audit), hash = (SELECT hash FROM audit ORDER BY seq DESC LIMIT 1)",
      )
      .run();
    raw.close();
    rmSync(`${db}.checkpoints`);

    const verify = await runCli(["audit", "verify"], env);
    expect(verify.code).toBe(1);
    const lines = verify.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^audit chain broken at event #1: event #1 records that signed checkpoints of the chain (were being written|started), but the checkpoint file .*airlock\.db\.checkpoints (holds none|has no checkpoint of it)/,
    );
    // Every later run (each one starting the file anew) still fails.
    expect((await runCli(["audit", "verify"], env)).code).toBe(1);
  });
});

describe("airlock audit verify --from-checkpoint without the checkpoint file", () => {
  it("a tail cut after the verified event, with the file deleted, exits 1", async () => {
    const db = join(folder(), "airlock.db");
    const env = cliEnv(db);
    expect((await runCli(["request", "--title", "first", "--json"], env)).code).toBe(0);
    expect((await runCli(["audit", "verify"], env)).code).toBe(0);
    const made = await runCli(["request", "--title", "second", "--json"], env);
    const id = (JSON.parse(made.stdout) as { id: string }).id;
    const raw = new Database(db);
    const from = raw.prepare("SELECT MIN(seq) AS seq FROM audit WHERE request_id = ?").get(id) as {
      seq: number;
    };
    raw.prepare("DELETE FROM audit WHERE seq >= ?").run(from.seq);
    raw.prepare("DELETE FROM requests WHERE id = ?").run(id);
    raw
      .prepare(
        "UPDATE audit_head SET seq = (SELECT MAX(seq) FROM audit), hash = (SELECT hash FROM audit ORDER BY seq DESC LIMIT 1)",
      )
      .run();
    raw.close();
    rmSync(`${db}.checkpoints`);
    const resumed = await runCli(["audit", "verify", "--from-checkpoint"], env);
    expect(resumed.code).toBe(1);
    expect(resumed.stderr.trim()).toMatch(
      /^audit chain broken at event #\d+: the verified mark at event #\d+ says signed checkpoints of the chain were being written, but the checkpoint file .* holds none from before it/,
    );
  });
});

describe("airlock serve's warning about audit files beside the database", () => {
  /** Starts `airlock serve` on `db` and returns the warnings it printed. */
  async function serveWarnings(
    db: string,
    env: NodeJS.ProcessEnv,
    files: { checkpointFile?: string; auditKeyFile?: string } = {},
  ): Promise<string[]> {
    const warnings: string[] = [];
    const serving = await startServe({
      db,
      port: 0,
      env: { AIRLOCK_ADMIN_TOKEN: "admin-token-0123456789", ...env },
      print: () => {},
      warn: (line) => warnings.push(line),
      logger: pino({ level: "silent" }),
      ...files,
    });
    await serving.close();
    return warnings;
  }

  it("warns for a key file and a checkpoint file in the database's folder", async () => {
    const db = join(folder(), "airlock.db");
    const warnings = await serveWarnings(db, {});
    expect(existsSync(`${db}.audit-key`)).toBe(true);
    expect(warnings).toEqual([
      expect.stringMatching(
        /^airlock: warning: the audit key file .*airlock\.db\.audit-key is in the database's folder/,
      ),
      expect.stringMatching(
        /^airlock: warning: the checkpoint file .*airlock\.db\.checkpoints is in the database's folder/,
      ),
    ]);
  });

  it("says nothing when both are kept in another folder", async () => {
    const db = join(folder(), "airlock.db");
    const elsewhere = folder();
    const keyFile = join(elsewhere, "audit-key");
    writeFileSync(keyFile, "k".repeat(32), { mode: 0o600 });
    const checkpointFile = join(elsewhere, "checkpoints");
    expect(
      await serveWarnings(db, { AIRLOCK_AUDIT_KEY_FILE: keyFile }, { checkpointFile }),
    ).toEqual([]);
    expect(existsSync(checkpointFile)).toBe(true);
    const other = join(folder(), "airlock.db");
    expect(await serveWarnings(other, {}, { auditKeyFile: keyFile, checkpointFile })).toEqual([]);
  });

  it("names a key file given by flag or environment in the database's folder", async () => {
    const d = folder();
    const keyFile = join(d, "my-key");
    writeFileSync(keyFile, "k".repeat(32), { mode: 0o600 });
    const checkpointFile = join(folder(), "checkpoints");
    const byFlag = await serveWarnings(
      join(d, "a.db"),
      {},
      { auditKeyFile: keyFile, checkpointFile },
    );
    const byEnv = await serveWarnings(
      join(d, "b.db"),
      { AIRLOCK_AUDIT_KEY_FILE: keyFile },
      {
        checkpointFile,
      },
    );
    for (const warnings of [byFlag, byEnv]) {
      expect(warnings).toEqual([
        expect.stringMatching(
          /^airlock: warning: the audit key file .*my-key is in the database's folder/,
        ),
      ]);
    }
  });
});
