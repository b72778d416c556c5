// Where the command line finds the audit key and the checkpoint file, so every `airlock` command on
// one database opens it the same way (a keyed chain refuses to open without its key).
//
// - AIRLOCK_AUDIT_KEY (the key itself, 16+ bytes) or AIRLOCK_AUDIT_KEY_FILE (a file holding it).
// - Otherwise, for a SQLite file: `<db>.audit-key` beside it. A database created by this command
//   gets a new random key there (mode 0600); an existing database without that file stays unkeyed.
// - Checkpoints: `--checkpoint-file`, AIRLOCK_CHECKPOINT_FILE, or `<db>.checkpoints` beside a
//   SQLite file keyed by its key file. Keep both files on another volume or host for the strongest
//   guarantee: someone who can rewrite the database then cannot also rewrite what vouches for it.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { MIN_AUDIT_KEY_BYTES } from "../audit/chain.js";
import { CliError } from "./errors.js";

export interface AuditSettings {
  auditKey?: string;
  checkpointFile?: string;
}

export interface AuditSettingsOptions {
  /** The SQLite file; undefined for PostgreSQL (the key then comes from the environment only). */
  sqlitePath?: string;
  checkpointFile?: string;
  env?: NodeJS.ProcessEnv;
}

export function keyFileOf(sqlitePath: string): string {
  return `${sqlitePath}.audit-key`;
}

export function auditSettings(o: AuditSettingsOptions): AuditSettings {
  const env = o.env ?? process.env;
  const db = o.sqlitePath === ":memory:" ? undefined : o.sqlitePath;
  let key: string | undefined;
  let besideDb = false;
  if (env.AIRLOCK_AUDIT_KEY) {
    key = env.AIRLOCK_AUDIT_KEY;
  } else if (env.AIRLOCK_AUDIT_KEY_FILE) {
    key = readKey(env.AIRLOCK_AUDIT_KEY_FILE, "AIRLOCK_AUDIT_KEY_FILE");
  } else if (db !== undefined) {
    // The database first, then its key: a process that creates both writes the key before the
    // database, so whoever sees the database also sees the key (no unkeyed start of a new chain).
    const file = keyFileOf(db);
    if (!existsSync(db)) key = createKey(file);
    else if (existsSync(file)) key = readNewKey(file);
    besideDb = key !== undefined;
  }
  if (key !== undefined && Buffer.byteLength(key) < MIN_AUDIT_KEY_BYTES) {
    throw new CliError(
      `the audit key must hold at least ${MIN_AUDIT_KEY_BYTES} bytes, got ${Buffer.byteLength(key)}`,
    );
  }
  const checkpointFile =
    o.checkpointFile ??
    (env.AIRLOCK_CHECKPOINT_FILE || undefined) ??
    (besideDb && db !== undefined ? `${db}.checkpoints` : undefined);
  if (checkpointFile !== undefined && key === undefined) {
    throw new CliError(
      "a checkpoint file needs the audit key (AIRLOCK_AUDIT_KEY or AIRLOCK_AUDIT_KEY_FILE): checkpoints are signed with it",
    );
  }
  return {
    ...(key === undefined ? {} : { auditKey: key }),
    ...(checkpointFile === undefined ? {} : { checkpointFile }),
  };
}

function readKey(file: string, what: string): string {
  try {
    return readFileSync(file, "utf8").trim();
  } catch (err) {
    throw new CliError(`cannot read ${what} ${file}: ${(err as Error).message}`);
  }
}

function createKey(file: string): string {
  const key = randomBytes(32).toString("base64url");
  try {
    // `wx`: never overwrite a key another process has just made.
    writeFileSync(file, `${key}\n`, { mode: 0o600, flag: "wx" });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return readNewKey(file);
    throw new CliError(`cannot create the audit key file ${file}: ${(err as Error).message}`);
  }
}

/** Another process created the key file a moment ago: wait (briefly) until it has written the key. */
function readNewKey(file: string): string {
  for (let attempt = 0; attempt < 50; attempt++) {
    const key = readKey(file, "the audit key file");
    if (key !== "") return key;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
  }
  throw new CliError(`the audit key file ${file} is empty`);
}
