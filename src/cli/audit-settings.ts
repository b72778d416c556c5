// Where the command line finds the audit key and the checkpoint file, so every `airlock` command on
// one database opens it the same way (a keyed chain refuses to open without its key).
//
// - `--audit-key-file` (serve), AIRLOCK_AUDIT_KEY (the key itself, 16+ bytes) or
//   AIRLOCK_AUDIT_KEY_FILE (a file holding it).
// - Otherwise, for a SQLite file: `<db>.audit-key` beside it. A database created by this command
//   gets a new random key there (mode 0600); an existing database without that file stays unkeyed.
// - PostgreSQL has no file beside it: `airlock serve` refuses to start without a key unless told to
//   run unkeyed (`--unkeyed-audit`, AIRLOCK_UNKEYED_AUDIT=1), which it then says wherever it can.
// - Checkpoints: `--checkpoint-file`, AIRLOCK_CHECKPOINT_FILE, or `<db>.checkpoints` beside a
//   SQLite file keyed by its key file. Keep both files on another volume or host for the strongest
//   guarantee: someone who can rewrite the database then cannot also rewrite what vouches for it.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
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
  /** A file holding the key (`--audit-key-file`); before the environment. */
  keyFile?: string;
  /** Run unkeyed on purpose (`--unkeyed-audit`): no key file is made beside a new SQLite file, and
   * a key found anyway is an error (the two contradict each other). */
  unkeyed?: boolean;
  env?: NodeJS.ProcessEnv;
}

/** How to make a key, for the messages that ask for one. */
const MAKE_KEY =
  "set AIRLOCK_AUDIT_KEY to a secret of 16 bytes or more (e.g. `export AIRLOCK_AUDIT_KEY=$(openssl rand -hex 32)`, the same for every server on the database) or give a file holding it (--audit-key-file FILE, AIRLOCK_AUDIT_KEY_FILE)";

/** The one line `airlock serve --postgres` fails with when it has no audit key. */
export const POSTGRES_NEEDS_KEY = `PostgreSQL needs an audit key, so that whoever can write to the database cannot rewrite the audit log unnoticed: ${MAKE_KEY}; or pass --unkeyed-audit (AIRLOCK_UNKEYED_AUDIT=1) to run with an unkeyed chain`;

/** Whether AIRLOCK_UNKEYED_AUDIT asks to run unkeyed ("1" or "true"); anything else set is an error. */
export function unkeyedFromEnv(env: NodeJS.ProcessEnv): boolean {
  const v = env.AIRLOCK_UNKEYED_AUDIT?.trim().toLowerCase();
  if (v === undefined || v === "" || v === "0" || v === "false") return false;
  if (v === "1" || v === "true") return true;
  throw new CliError(
    `AIRLOCK_UNKEYED_AUDIT expects 1 or true (or 0, false), got \`${env.AIRLOCK_UNKEYED_AUDIT}\``,
  );
}

export function keyFileOf(sqlitePath: string): string {
  return `${sqlitePath}.audit-key`;
}

export function auditSettings(o: AuditSettingsOptions): AuditSettings {
  const env = o.env ?? process.env;
  const db = o.sqlitePath === ":memory:" ? undefined : o.sqlitePath;
  let key: string | undefined;
  let besideDb = false;
  let from: string | undefined;
  if (o.keyFile !== undefined) {
    key = readKey(o.keyFile, "--audit-key-file");
    from = "--audit-key-file";
  } else if (env.AIRLOCK_AUDIT_KEY) {
    key = env.AIRLOCK_AUDIT_KEY;
    from = "AIRLOCK_AUDIT_KEY";
  } else if (env.AIRLOCK_AUDIT_KEY_FILE) {
    key = readKey(env.AIRLOCK_AUDIT_KEY_FILE, "AIRLOCK_AUDIT_KEY_FILE");
    from = "AIRLOCK_AUDIT_KEY_FILE";
  } else if (db !== undefined && o.unkeyed) {
    // Run unkeyed on purpose: an existing key file still wins over that, below, as an error.
    if (existsSync(keyFileOf(db))) from = keyFileOf(db);
  } else if (db !== undefined) {
    // The database first, then its key: a process that creates both writes the key before the
    // database, so whoever sees the database also sees the key (no unkeyed start of a new chain).
    const file = keyFileOf(db);
    if (!existsSync(db)) key = createKey(file);
    else if (existsSync(file)) key = readNewKey(file);
    besideDb = key !== undefined;
  }
  if (o.unkeyed && from !== undefined) {
    throw new CliError(
      `--unkeyed-audit (or AIRLOCK_UNKEYED_AUDIT) contradicts the audit key from ${from}: drop one of them`,
    );
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

/** Warnings for the audit key file and the checkpoint file when they sit in the SQLite database's
 * own folder: whoever can rewrite the database can usually write beside it too, so a key read there
 * lets them recompute the chain, and checkpoints there can be deleted with the rows they vouch for. */
export function auditFilesBesideDatabase(
  sqlitePath: string | undefined,
  settings: AuditSettings,
  env: NodeJS.ProcessEnv = process.env,
  /** The key file named on the command line, when one was. */
  explicitKeyFile?: string,
): string[] {
  if (sqlitePath === undefined || sqlitePath === ":memory:" || sqlitePath === "") return [];
  const folder = folderOf(sqlitePath);
  // Where the key was read from, in the order auditSettings looks (none: it came in AIRLOCK_AUDIT_KEY).
  const keyFile =
    settings.auditKey === undefined
      ? undefined
      : (explicitKeyFile ??
        (env.AIRLOCK_AUDIT_KEY
          ? undefined
          : env.AIRLOCK_AUDIT_KEY_FILE ||
            (existsSync(keyFileOf(sqlitePath)) ? keyFileOf(sqlitePath) : undefined)));
  const out: string[] = [];
  if (keyFile !== undefined && folderOf(keyFile) === folder) {
    out.push(
      `the audit key file ${keyFile} is in the database's folder (${folder}): whoever can rewrite the database there can likely read the key too, and then recompute the audit chain undetected. Keep the key elsewhere (--audit-key-file or AIRLOCK_AUDIT_KEY_FILE on another volume, or AIRLOCK_AUDIT_KEY)`,
    );
  }
  const cp = settings.checkpointFile;
  if (cp !== undefined && folderOf(cp) === folder) {
    out.push(
      `the checkpoint file ${cp} is in the database's folder (${folder}): whoever can rewrite the database there can likely delete or replace the checkpoints too. Keep them on another volume or host (--checkpoint-file or AIRLOCK_CHECKPOINT_FILE)`,
    );
  }
  return out;
}

/** The folder a file is in, symbolic links resolved where they exist. */
function folderOf(file: string): string {
  const dir = dirname(resolve(file));
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
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
