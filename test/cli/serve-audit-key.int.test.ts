// `airlock serve` and the audit key. On PostgreSQL there is no file beside the database to keep a key
// in, and a server without one ran a plain SHA-256 chain that a database writer could rewrite (a
// rejection into an approval) while /v1/audit/verify said ok, with nothing said anywhere. Now it refuses
// to start without a key, in one line on stderr, unless told to run unkeyed, and then it says so at
// every start, in /healthz and in every verification (HTTP and `airlock audit verify`). SQLite keeps
// making a key beside a new file; run unkeyed (asked, or an old unkeyed file) it says so the same way.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { UNKEYED_AUDIT_WARNING } from "../../src/audit/unkeyed.js";
import { keyFileOf } from "../../src/cli/audit-settings.js";
import { type ServeOptions, type Serving, startServe } from "../../src/cli/serve.js";
import { eventually, tempDir } from "../helpers.js";
import { adminQuery, describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";
import { call } from "../server/helpers.js";
import { runCli, startCli } from "./run-cli.js";

const KEY = "k".repeat(32);
const ADMIN = "admin-token-0123456789";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function dir(): string {
  const t = tempDir("airlock-audit-key-");
  cleanups.push(t.cleanup);
  return t.dir;
}

/** The environment of a child `airlock`: none of this machine's Airlock settings. */
function childEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith("AIRLOCK_")) delete env[k];
  return { ...env, ...extra };
}

/** Starts in process, collecting the start-up warnings. */
async function serve(options: ServeOptions): Promise<{ serving: Serving; warnings: string[] }> {
  const warnings: string[] = [];
  const serving = await startServe({
    port: 0,
    logger: pino({ level: "silent" }),
    print: () => {},
    warn: (line) => warnings.push(line),
    ...options,
    env: { AIRLOCK_ADMIN_TOKEN: ADMIN, ...options.env },
  });
  cleanups.push(() => serving.close());
  return { serving, warnings };
}

/** /healthz's `audit` and the verification's answer, after one request so the chain is not empty. */
async function reported(url: string) {
  const created = await call(url, ADMIN, "POST", "/v1/requests", { title: "Deploy" });
  expect(created.status).toBe(201);
  const health = await call(url, undefined, "GET", "/healthz");
  expect(health.status).toBe(200);
  const verify = await call(url, ADMIN, "GET", "/v1/audit/verify");
  expect(verify.status).toBe(200);
  expect(verify.body.ok).toBe(true);
  return { health: health.body.audit, verify: verify.body };
}

const unkeyedReport = { keyed: false, warning: UNKEYED_AUDIT_WARNING };

await describePg("airlock serve --postgres and the audit key", ({ url }) => {
  const schemas: string[] = [];
  const schema = () => {
    const s = freshSchema("airlock_audit_key");
    schemas.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of schemas) await dropSchema(url, s);
  });

  it("refuses to start without a key: one line on stderr saying how to make one, exit 4, nothing created", async () => {
    const s = schema();
    const r = await runCli(
      ["serve", "--postgres", url, "--port", "0"],
      childEnv({ AIRLOCK_POSTGRES_SCHEMA: s }),
    );
    expect(r.code).toBe(4);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^airlock: PostgreSQL needs an audit key/);
    expect(lines[0]).toContain("AIRLOCK_AUDIT_KEY=$(openssl rand -hex 32)");
    expect(lines[0]).toContain("--audit-key-file");
    expect(lines[0]).toContain("--unkeyed-audit");
    const found = await adminQuery(url, "SELECT 1 FROM pg_namespace WHERE nspname = $1", [s]);
    expect(found).toEqual([]);
  });

  it("runs unkeyed when told (--unkeyed-audit), and says so at start, in /healthz and in verify", async () => {
    const run = startCli(
      ["serve", "--postgres", url, "--port", "0", "--unkeyed-audit"],
      childEnv({ AIRLOCK_POSTGRES_SCHEMA: schema(), AIRLOCK_ADMIN_TOKEN: ADMIN }),
    );
    cleanups.push(async () => {
      if (run.child.exitCode === null) {
        run.child.kill("SIGTERM");
        await run.done;
      }
    });
    const servingAt = () => /serving at (http:\/\/127\.0\.0\.1:\d+)\//.exec(run.output().stdout);
    await eventually(() => servingAt() !== null || run.child.exitCode !== null, {
      timeoutMs: 30_000,
      intervalMs: 50,
    }).catch(() => {}); // the expectation below says it, with the command's stderr
    const serving = servingAt();
    expect(serving, run.output().stderr).not.toBeNull();
    const base = serving?.[1] as string;
    expect(run.output().stderr).toContain(`airlock: warning: ${UNKEYED_AUDIT_WARNING}\n`);
    expect(await reported(base)).toEqual({
      health: unkeyedReport,
      verify: expect.objectContaining(unkeyedReport),
    });
    run.child.kill("SIGTERM");
    expect((await run.done).code).toBe(0);
  });

  it("reads AIRLOCK_UNKEYED_AUDIT=1 like the flag, and refuses it together with a key", async () => {
    const both = await runCli(
      ["serve", "--postgres", url, "--port", "0"],
      childEnv({
        AIRLOCK_POSTGRES_SCHEMA: schema(),
        AIRLOCK_UNKEYED_AUDIT: "1",
        AIRLOCK_AUDIT_KEY: KEY,
      }),
    );
    expect(both.code).toBe(4);
    expect(both.stderr.trim().split("\n")).toEqual([
      "airlock: --unkeyed-audit (or AIRLOCK_UNKEYED_AUDIT) contradicts the audit key from AIRLOCK_AUDIT_KEY: drop one of them",
    ]);
  });

  it("with a key (AIRLOCK_AUDIT_KEY or --audit-key-file) says nothing and reports keyed", async () => {
    const keyed = await serve({
      postgres: url,
      postgresSchema: schema(),
      env: { AIRLOCK_AUDIT_KEY: KEY },
    });
    expect(keyed.warnings).toEqual([]);
    expect(await reported(keyed.serving.url)).toEqual({
      health: { keyed: true },
      verify: expect.objectContaining({ keyed: true, keyedFrom: 1 }),
    });
    const file = join(dir(), "audit.key");
    writeFileSync(file, `${KEY}\n`, { mode: 0o600 });
    const fromFile = await serve({ postgres: url, postgresSchema: schema(), auditKeyFile: file });
    expect(fromFile.warnings).toEqual([]);
    const r = await reported(fromFile.serving.url);
    expect(r.verify).toMatchObject({ keyed: true, keyedFrom: 1 });
    expect(r.verify.warning).toBeUndefined();
  });
});

describe("airlock serve on SQLite and the audit key", () => {
  it("keys a new file without being asked, warning only that the key and checkpoints sit beside it", async () => {
    const db = join(dir(), "airlock.db");
    const { serving, warnings } = await serve({ db });
    // Nothing about keying; only that the key and the checkpoints sit in the database's folder.
    expect(warnings).toEqual([
      expect.stringMatching(/^airlock: warning: the audit key file .* is in the database's folder/),
      expect.stringMatching(
        /^airlock: warning: the checkpoint file .* is in the database's folder/,
      ),
    ]);
    expect(await reported(serving.url)).toEqual({
      health: { keyed: true },
      verify: expect.objectContaining({ keyed: true, keyedFrom: 1 }),
    });
  });

  it("runs unkeyed when told, makes no key file, and says so at start, in /healthz, in both verifications", async () => {
    const db = join(dir(), "airlock.db");
    const first = await serve({ db, unkeyedAudit: true });
    expect(first.warnings).toEqual([`airlock: warning: ${UNKEYED_AUDIT_WARNING}`]);
    expect(await reported(first.serving.url)).toEqual({
      health: unkeyedReport,
      verify: expect.objectContaining(unkeyedReport),
    });
    await first.serving.close();
    // The file stays unkeyed: started again without the flag, it still says so.
    const again = await serve({ db });
    expect(again.warnings).toEqual([`airlock: warning: ${UNKEYED_AUDIT_WARNING}`]);
    expect((await reported(again.serving.url)).health).toEqual(unkeyedReport);
    await again.serving.close();
    const verified = await runCli(["--db", db, "audit", "verify"], childEnv({}));
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/^audit chain intact: \d+ events\n$/);
    expect(verified.stderr).toBe(`airlock: warning: ${UNKEYED_AUDIT_WARNING}\n`);
    const json = await runCli(["--db", db, "audit", "verify", "--json"], childEnv({}));
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, ...unkeyedReport });
    // A key file beside it and --unkeyed-audit contradict each other.
    writeFileSync(keyFileOf(db), `${KEY}\n`, { mode: 0o600 });
    await expect(serve({ db, unkeyedAudit: true })).rejects.toThrow(
      `--unkeyed-audit (or AIRLOCK_UNKEYED_AUDIT) contradicts the audit key from ${keyFileOf(db)}`,
    );
  });

  it("`airlock audit verify` on a keyed file reports keyed and warns of nothing", async () => {
    const db = join(dir(), "airlock.db");
    const { serving } = await serve({ db });
    await reported(serving.url);
    await serving.close();
    const verified = await runCli(["--db", db, "audit", "verify", "--json"], childEnv({}));
    expect(verified.code).toBe(0);
    expect(verified.stderr).toBe("");
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, keyed: true, keyedFrom: 1 });
  });
});
