// What `airlock serve` and the other commands take from their flags and environment: the HTTP limits
// reach the server, and every command on one SQLite file finds the same audit key (a new database
// gets a key file and signed checkpoints beside it, so a recomputed or truncated chain is caught).
import { copyFileSync, existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { GENESIS_HASH, hashEvent } from "../../src/audit/chain.js";
import { auditSettings, keyFileOf } from "../../src/cli/audit-settings.js";
import { httpSettings, startServe } from "../../src/cli/serve.js";
import type { AuditDraft } from "../../src/core/schemas.js";
import { tempDir } from "../helpers.js";
import { call } from "../server/helpers.js";
import { runCli } from "./run-cli.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function dir(): string {
  const t = tempDir("airlock-settings-");
  cleanups.push(t.cleanup);
  return t.dir;
}

describe("airlock serve's HTTP settings", () => {
  it("maps the flags onto createServer options, leaving unset ones to the defaults", () => {
    expect(httpSettings({ port: 0, host: "127.0.0.1" }, {})).toEqual({});
    expect(
      httpSettings(
        {
          port: 0,
          host: "127.0.0.1",
          rateLimit: false,
          maxPending: 5,
          maxArgsBytes: 100,
          maxStreams: 2,
          secureCookies: true,
          embedOrigin: ["https://chat.example.com", "http://127.0.0.1:7421"],
        },
        { AIRLOCK_METRICS_TOKEN: "m".repeat(20), AIRLOCK_EMBED_SECRET: "e".repeat(40) },
      ),
    ).toEqual({
      rateLimit: false,
      limits: { pendingPerRequester: 5, argsBytes: 100 },
      maxStreamsPerToken: 2,
      metricsToken: "m".repeat(20),
      inbox: { secureCookies: true },
      embedSecret: "e".repeat(40),
      embedOrigins: ["https://chat.example.com", "http://127.0.0.1:7421"],
    });
  });

  it("a server started with --max-args-bytes and --max-pending enforces them", async () => {
    const d = dir();
    const admin = "admin-token-0123456789";
    const serving = await startServe({
      db: join(d, "airlock.db"),
      port: 0,
      env: { AIRLOCK_ADMIN_TOKEN: admin },
      print: () => {},
      http: { limits: { argsBytes: 64, pendingPerRequester: 1 } },
    });
    cleanups.push(() => serving.close());
    const big = await call(serving.url, admin, "POST", "/v1/requests", {
      title: "big",
      args: { text: "x".repeat(200) },
    });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ field: "args" });
    expect((await call(serving.url, admin, "POST", "/v1/requests", { title: "one" })).status).toBe(
      201,
    );
    const second = await call(serving.url, admin, "POST", "/v1/requests", { title: "two" });
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ code: "quota_exceeded" });
  });
});

describe("the audit key of a SQLite database", () => {
  it("a new database gets a key file (0600) and checkpoints beside it; an old one stays unkeyed", () => {
    const d = dir();
    const db = join(d, "new.db");
    const settings = auditSettings({ sqlitePath: db, env: {} });
    expect(settings.auditKey).toMatch(/^[\w-]{40,}$/);
    expect(settings.checkpointFile).toBe(`${db}.checkpoints`);
    expect(statSync(keyFileOf(db)).mode & 0o777).toBe(0o600);
    // Every later command finds the same key.
    expect(auditSettings({ sqlitePath: db, env: {} }).auditKey).toBe(settings.auditKey);

    const old = join(d, "old.db");
    new Database(old).close();
    expect(auditSettings({ sqlitePath: old, env: {} })).toEqual({});
    expect(existsSync(keyFileOf(old))).toBe(false);
  });

  it("airlock token create on a new database keys it like every other command", async () => {
    const d = dir();
    const db = join(d, "airlock.db");
    const env: NodeJS.ProcessEnv = { ...process.env, AIRLOCK_DB: db, AIRLOCK_URL: "" };
    delete env.AIRLOCK_AUDIT_KEY;
    delete env.AIRLOCK_AUDIT_KEY_FILE;
    const made = await runCli(["token", "create", "--role", "agent", "--name", "bot"], env);
    expect(made.code).toBe(0);
    expect(existsSync(keyFileOf(db))).toBe(true);
    expect((await runCli(["request", "--title", "keyed", "--json"], env)).code).toBe(0);
    const raw = new Database(db);
    const head = raw.prepare("SELECT keyed_from FROM audit_head").get() as { keyed_from: number };
    raw.close();
    expect(head.keyed_from).toBe(1);
  });

  it("takes the key from the environment, and refuses a short one or checkpoints without a key", () => {
    const d = dir();
    const db = join(d, "a.db");
    expect(auditSettings({ sqlitePath: db, env: { AIRLOCK_AUDIT_KEY: "k".repeat(20) } })).toEqual({
      auditKey: "k".repeat(20),
    });
    expect(existsSync(keyFileOf(db))).toBe(false);
    expect(() => auditSettings({ sqlitePath: db, env: { AIRLOCK_AUDIT_KEY: "short" } })).toThrow(
      /at least 16 bytes/,
    );
    expect(() => auditSettings({ env: { AIRLOCK_CHECKPOINT_FILE: join(d, "c") } })).toThrow(
      /needs the audit key/,
    );
  });

  it("airlock audit verify catches a chain recomputed without the key, and a truncated one", async () => {
    const d = dir();
    const db = join(d, "airlock.db");
    const env: NodeJS.ProcessEnv = { ...process.env, AIRLOCK_DB: db, AIRLOCK_URL: "" };
    delete env.AIRLOCK_AUDIT_KEY;
    delete env.AIRLOCK_AUDIT_KEY_FILE;
    const made = await runCli(["request", "--title", "deploy", "--json"], env);
    expect(made.code).toBe(0);
    const id = (JSON.parse(made.stdout) as { id: string }).id;
    expect(
      (await runCli(["decide", id, "approve", "--as", "alice", "--comment", "ok"], env)).code,
    ).toBe(0);
    expect(existsSync(`${db}.audit-key`)).toBe(true);
    expect(readFileSync(`${db}.checkpoints`, "utf8")).toMatch(/"mac":/);
    expect((await runCli(["audit", "verify"], env)).code).toBe(0);
    const copy = join(d, "copy.db");
    copyFileSync(db, copy);

    // Someone with write access to the file rewrites the decision's comment and recomputes the
    // whole chain with plain SHA-256: without the key, the HMACs cannot be recomputed.
    recompute(db, (e) =>
      e.type === "decided" ? { ...e, data: { ...e.data, comment: "fine" } } : e,
    );
    const rewritten = await runCli(["audit", "verify"], env);
    expect(rewritten.code).not.toBe(0);
    expect(rewritten.stdout + rewritten.stderr).toMatch(/#1\b|event #1/);
    copyFileSync(copy, db);
    expect((await runCli(["audit", "verify"], env)).code).toBe(0);

    // Someone with write access to the file drops the last event and moves the head back to the one
    // before: the plain chain is consistent again, but the signed checkpoint still names the last.
    const raw = new Database(db);
    const last = raw.prepare("SELECT max(seq) AS seq FROM audit").get() as { seq: number };
    raw.prepare("DELETE FROM audit WHERE seq = ?").run(last.seq);
    raw
      .prepare(
        "UPDATE audit_head SET seq = (SELECT seq FROM audit ORDER BY seq DESC LIMIT 1), hash = (SELECT hash FROM audit ORDER BY seq DESC LIMIT 1)",
      )
      .run();
    raw.close();
    const verify = await runCli(["audit", "verify"], env);
    expect(verify.code).not.toBe(0);
    expect(verify.stdout + verify.stderr).toMatch(/checkpoint/i);
  });
});

interface Row {
  seq: number;
  request_id: string | null;
  type: string;
  actor: string;
  at: number;
  data: string;
}

/** Rewrites every audit row through `edit` and recomputes the chain with plain SHA-256, as someone
 * without the key would. */
function recompute(db: string, edit: (e: AuditDraft) => AuditDraft): void {
  const raw = new Database(db);
  const rows = raw.prepare("SELECT * FROM audit ORDER BY seq").all() as Row[];
  let prev = GENESIS_HASH;
  const update = raw.prepare("UPDATE audit SET data = ?, prev_hash = ?, hash = ? WHERE seq = ?");
  for (const r of rows) {
    const draft = edit({
      type: r.type as AuditDraft["type"],
      ...(r.request_id === null ? {} : { requestId: r.request_id }),
      actor: r.actor,
      at: r.at,
      data: JSON.parse(r.data) as Record<string, unknown>,
    });
    const hash = hashEvent(r.seq, draft, prev);
    update.run(JSON.stringify(draft.data), prev, hash, r.seq);
    prev = hash;
  }
  raw.prepare("UPDATE audit_head SET hash = ?").run(prev);
  raw.close();
}
