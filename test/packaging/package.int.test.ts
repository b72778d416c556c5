// The package as a user gets it. A copy of the project is built (so the dist/ of this checkout is left
// alone): its bin runs directly, as `npx airlock` runs it. Then `npm pack` makes the tarball, which is
// installed in an empty folder, and the installed `airlock serve --demo` runs `npm start`'s five
// agents to completion, each decided over the HTTP API with the reviewer token the demo prints.
import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);
const FIVE = [
  "research-reflection",
  "robot-plan",
  "hitl-tools",
  "file-approval",
  "research-two-phase",
];
const PKG = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  name: string;
  version: string;
};

/** npm's own settings from an `npm test` around us (npm_config_*, lifecycle) must not reach the
 * npm commands run here. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^npm_/i.test(k) && !k.startsWith("AIRLOCK_") && k !== "HUMAN_REVIEW_TIMEOUT") env[k] = v;
  }
  return { ...env, ...extra };
}

const npmCheck = spawnSync("npm", ["--version"], { env: cleanEnv(), encoding: "utf8" });
const npmMissing =
  npmCheck.status === 0
    ? undefined
    : `npm is not available here (${npmCheck.error?.message ?? npmCheck.stderr})`;
if (npmMissing) {
  process.stderr.write(`test/packaging: skipping npm pack: ${npmMissing}\n`);
}

let work: string;
let project: string;
let packed: Promise<{ tarball: string; files: string[] }> | undefined;

/** `npm pack` of the built copy, once for every test that installs the tarball. */
function pack(): Promise<{ tarball: string; files: string[] }> {
  packed ??= (async () => {
    const out = await run("npm", ["pack", "--json", "--pack-destination", work], {
      cwd: project,
      env: cleanEnv(),
      maxBuffer: 64 * 1024 * 1024,
    });
    const [info] = JSON.parse(out.stdout.slice(out.stdout.indexOf("["))) as {
      filename: string;
      files: { path: string }[];
    }[];
    return {
      tarball: join(work, info?.filename as string),
      files: (info?.files ?? []).map((f) => f.path),
    };
  })();
  return packed;
}

/** `npm install` from the local cache when it holds everything (after `npm ci`), else with the
 * registry too. */
async function install(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const installArgs = ["install", "--no-audit", "--no-fund", "--ignore-scripts", ...args];
  const offline = await run("npm", [...installArgs, "--offline"], { cwd, env }).catch(
    () => undefined,
  );
  if (!offline) await run("npm", [...installArgs, "--prefer-offline"], { cwd, env });
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "airlock-package-"));
  project = join(work, "project");
  // What the package is built from, without node_modules, dist, databases or the git folder.
  for (const entry of [
    "package.json",
    "package-lock.json",
    "tsconfig.json",
    "tsconfig.build.json",
    "README.md",
    "LICENSE",
    "scripts",
    "src",
    "examples",
  ]) {
    const from = join(ROOT, entry);
    if (!existsSync(from)) continue;
    cpSync(from, join(project, entry), {
      recursive: true,
      filter: (src) => !/\.(db|db-wal|db-shm)$/.test(src),
    });
  }
  symlinkSync(join(ROOT, "node_modules"), join(project, "node_modules"), "dir");
  await run(process.execPath, ["scripts/build.mjs"], { cwd: project, env: cleanEnv() });
}, 180_000);

// The installed projects hold tens of thousands of files: removing them can take longer than the
// default hook timeout on a busy machine.
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
}, 120_000);

describe("the package's name", () => {
  it("is a name of its own on npm, not `airlock` (an unrelated package there)", () => {
    expect(PKG.name).toBe("airlock-hitl");
    // The command keeps its name.
    const bin = (
      JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
        bin: Record<string, string>;
      }
    ).bin;
    expect(Object.keys(bin)).toEqual(["airlock"]);
  });
});

describe("the build", () => {
  it("leaves the bin executable: the built airlock runs directly, as npx runs it", async () => {
    const bin = join(project, "dist/src/cli/main.js");
    expect(statSync(bin).mode & 0o111).not.toBe(0);
    const version = await run(bin, ["--version"], { cwd: work, env: cleanEnv() });
    expect(version.stdout.trim()).toBe(PKG.version);
    const demos = await run(bin, ["demo"], { cwd: work, env: cleanEnv() });
    for (const name of FIVE) expect(demos.stdout).toContain(name);
  });

  it("ships the examples' data files (research-two-phase's corpus) beside the compiled demo", () => {
    const corpus = join(project, "dist/examples/research-two-phase/corpus");
    expect(existsSync(join(corpus, "sqlite-overview.md"))).toBe(true);
  });
});

describe.skipIf(npmMissing !== undefined)("the packed package", () => {
  it("installs from its tarball and runs npm start's five demo agents to completion", {
    timeout: 300_000,
  }, async () => {
    const env = cleanEnv();
    const { tarball, files } = await pack();
    // The library, the bin, the demo and its data; no tests, no sources of the library.
    expect(files).toContain("dist/src/cli/main.js");
    expect(files).toContain("dist/examples/demo.js");
    expect(files).toContain("dist/examples/research-two-phase/corpus/sqlite-overview.md");
    expect(files.some((f) => /\.test\.(js|ts)$/.test(f))).toBe(false);

    const app = join(work, "app");
    mkdirSync(app);
    // better-sqlite3 at the version this checkout runs (see below for its native part).
    const sqliteVersion = (
      JSON.parse(readFileSync(join(ROOT, "node_modules/better-sqlite3/package.json"), "utf8")) as {
        version: string;
      }
    ).version;
    writeFileSync(
      join(app, "package.json"),
      JSON.stringify({
        name: "airlock-install-check",
        private: true,
        overrides: { "better-sqlite3": sqliteVersion },
      }),
    );
    await install(app, [tarball], env);
    // Install scripts are off: better-sqlite3's would download or compile its native module. The one
    // this checkout built is the same version for the same node.
    cpSync(
      join(ROOT, "node_modules/better-sqlite3/build"),
      join(app, "node_modules/better-sqlite3/build"),
      { recursive: true },
    );
    const installed = join(app, "node_modules", PKG.name);
    expect(existsSync(join(installed, "dist/src/index.js"))).toBe(true);
    // The installed library does not pull in the demo.
    const lib = await run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const m = await import("${PKG.name}"); console.log(typeof m.createAirlock);`,
      ],
      { cwd: app, env },
    );
    expect(lib.stdout.trim()).toBe("function");

    const serve = startServe(join(app, "node_modules/.bin/airlock"), app, env);
    try {
      const url = await serve.until(/serving at (http:\/\/127\.0\.0\.1:\d+)\//);
      const reviewer = await serve.until(/sign in with the reviewer token\n\s+(alk_\S+)/);
      const decided = new Set<string>();
      const finished = () => FIVE.every((n) => serve.stdout().includes(`[${n}] finished`));
      const deadline = Date.now() + 240_000;
      while (!finished()) {
        if (Date.now() > deadline) {
          throw new Error(`the demo agents did not finish:\n${serve.stdout()}\n${serve.stderr()}`);
        }
        if (serve.exited()) throw new Error(`airlock serve exited:\n${serve.stderr()}`);
        const list = await api(url, reviewer, "GET", "/v1/requests?status=pending&limit=100");
        expect(list.status).toBe(200);
        for (const r of (list.body as { items: { id: string }[] }).items) {
          if (decided.has(r.id)) continue;
          const answer = await api(url, reviewer, "POST", `/v1/requests/${r.id}/decisions`, {
            outcome: "approved",
            comment: "approved by the packaging test",
          });
          if (answer.status === 200) decided.add(r.id);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      const out = serve.stdout();
      for (const name of FIVE) expect(out).toContain(`[${name}] finished`);
      expect(out).not.toMatch(/\] (stopped|failed):/);
      expect(out).toContain("[research-two-phase]");
      expect(decided.size).toBe(11);
    } finally {
      await serve.stop();
    }
    // The demo's files under the system's temporary directory are gone after a clean stop.
    const sandbox = /\[file-approval\] sandbox: (\S+)/.exec(serve.stdout())?.[1];
    expect(sandbox).toBeDefined();
    expect(existsSync(sandbox as string)).toBe(false);
    expect(serve.stdout()).toContain("Demo stopped");
    expect(serve.stdout()).not.toMatch(/failed/);
    expect(relative(app, installed)).toBe(join("node_modules", PKG.name));
  });
});

// The declarations as a strict user project type-checks them (importing the package by its name,
// package.json's, as every import below does): `strict`, `skipLibCheck: false`,
// `moduleResolution: "nodenext"`, the tarball and `typescript` installed and nothing else. The
// declarations of `airlock-hitl/sqlite` and `airlock-hitl/postgres` name better-sqlite3's Database (the
// `configure` hook) and pg's Pool (a pool you own, `store.pool`), and `airlock-hitl/server` names the Pool
// of its PostgreSQL rate-limit store: their `@types/*` are dependencies of the package, like
// better-sqlite3 and pg themselves, so no user meets TS7016 (a SQLite-only user of `airlock-hitl/server`
// did). The frameworks (langgraph, openai agents, ai sdk, react) are optional peers: only the
// declarations of their own subpaths name them, so a project that imports `.`, `/sqlite` and
// `/server` needs none of them installed.
const CORE_USER = `import { type ApprovalRequest, createAirlock, type Decision, parseReply } from "${PKG.name}";
import { type SqliteStoreOptions, sqliteStore } from "${PKG.name}/sqlite";
import { createServer, memoryTokenStore, type ServerOptions } from "${PKG.name}/server";

const options: SqliteStoreOptions = {
  configure: (db) => {
    db.pragma("cache_size = 2000");
  },
};
const airlock = await createAirlock({ store: sqliteStore(":memory:", options) });
const request: ApprovalRequest = await airlock.request({ title: "Deploy api", items: ["a", "b"] });
const reply = parseReply("SELECT 1", request.items ?? []);
const decided: ApprovalRequest = await airlock.decide(request.id, {
  outcome: "approved",
  reviewer: "alice",
});
const last: Decision | undefined = decided.decisions.at(-1);
const serverOptions: ServerOptions = { airlock, auth: { tokens: memoryTokenStore() } };
const server = createServer(serverOptions);
// @ts-expect-error a database path is a string: the declarations are real types, not any
sqliteStore(42);
export { last, reply, server };
`;

const EVERY_SUBPATH = `import { createAirlock, hitlTool, memoryStore } from "${PKG.name}";
import { canonicalJson, type OnTimeout, type Store } from "${PKG.name}/core";
import { calculateConfidence, determineApprovalLevel } from "${PKG.name}/policy";
import { createRedactor, type VerifyResult } from "${PKG.name}/audit";
import { getHitlTools, type HitlContext } from "${PKG.name}/tools";
import { createChannels, verifyWebhook } from "${PKG.name}/channels";
import { runReview } from "${PKG.name}/console";
import { sqliteStore } from "${PKG.name}/sqlite";
import { type PostgresStore, postgresStore } from "${PKG.name}/postgres";
import { createServer, memoryTokenStore } from "${PKG.name}/server";
import { airlockGate, isGateInterrupt } from "${PKG.name}/langgraph";
import { airlockNeedsApproval, type ParkedTurn } from "${PKG.name}/openai-agents";
import { airlockToolApproval, approvalKey } from "${PKG.name}/ai-sdk";
import { makeRequest, runStoreContract } from "${PKG.name}/testing";
import { createMcpServer, MCP_TOOLS, waitBounded } from "${PKG.name}/mcp";
import { type ApprovalStatus, useApproval } from "${PKG.name}/react";

const store: Store = memoryStore();
const airlock = await createAirlock({ store, redaction: { keys: ["tax-id"] } });
const hidden: string = airlock.redaction.redactString("TAX_ID=1") + createRedactor().keys.length;
const level = determineApprovalLevel(calculateConfidence("sign_contract", {}, {}));
const onTimeout: OnTimeout = "reject";
const context: HitlContext = {};
const json: string = canonicalJson({ b: 1, a: 2 });
const verified: VerifyResult | undefined = undefined;
const pg: PostgresStore = postgresStore("postgres://127.0.0.1:5432/test");
const rows = await pg.pool.query<{ one: number }>("select 1 as one");
const one: number | undefined = rows.rows[0]?.one;
const server = createServer({ airlock, auth: { tokens: memoryTokenStore() } });
const needs = airlockNeedsApproval(airlock, { tool: "send_email" });
const mcp = createMcpServer(airlock, { maxWaitMs: 1000 });
const status: ApprovalStatus = "loading";
const tools: readonly string[] = MCP_TOOLS;
// @ts-expect-error a pool or a connection string
postgresStore(42);
// @ts-expect-error a list of key names, not one
createAirlock({ store, redaction: { keys: "tax-id" } });
export {
  airlockGate,
  airlockToolApproval,
  approvalKey,
  context,
  createChannels,
  getHitlTools,
  hidden,
  hitlTool,
  json,
  level,
  onTimeout,
  runReview,
  verified,
  verifyWebhook,
  isGateInterrupt,
  makeRequest,
  mcp,
  needs,
  one,
  runStoreContract,
  server,
  sqliteStore,
  status,
  tools,
  useApproval,
  waitBounded,
};
export type { ParkedTurn };
`;

/** The optional peers of the framework subpaths, at the versions this checkout runs. */
const PEERS = [
  "@openai/agents",
  "ai",
  "@langchain/core",
  "@langchain/langgraph",
  "react",
  "@types/react",
];

describe.skipIf(npmMissing !== undefined)("the packed package's type declarations", () => {
  let app: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    env = cleanEnv();
    const { tarball } = await pack();
    app = join(work, "types-app");
    mkdirSync(app);
    writeFileSync(
      join(app, "package.json"),
      JSON.stringify({ name: "airlock-types-check", private: true, type: "module" }),
    );
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "nodenext",
          moduleResolution: "nodenext",
          strict: true,
          skipLibCheck: false,
          noEmit: true,
        },
        files: ["main.ts"],
      }),
    );
    await install(app, [tarball, `typescript@${versionHere("typescript")}`], env);
  }, 300_000);

  async function typecheck(code: string): Promise<string> {
    writeFileSync(join(app, "main.ts"), code);
    const tsc = join(app, "node_modules/typescript/bin/tsc");
    const result = await run(process.execPath, [tsc, "-p", "."], {
      cwd: app,
      env,
      maxBuffer: 64 * 1024 * 1024,
    }).then(
      (r) => r.stdout + r.stderr,
      (err: { stdout?: string; stderr?: string; message: string }) =>
        `${err.stdout ?? ""}${err.stderr ?? ""}` || err.message,
    );
    return result.trim();
  }

  it("compile under strict, skipLibCheck off, for a project of ., /sqlite and /server with no optional peer installed", {
    timeout: 120_000,
  }, async () => {
    for (const peer of PEERS) expect(existsSync(join(app, "node_modules", peer))).toBe(false);
    expect(await typecheck(CORE_USER)).toBe("");
  });

  it("compile under strict, skipLibCheck off, with every subpath export imported and the peers installed", {
    timeout: 300_000,
  }, async () => {
    const exported = Object.keys(
      (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { exports: object }).exports,
    )
      .filter((k) => k !== "./package.json")
      .map((k) => (k === "." ? PKG.name : `${PKG.name}/${k.slice(2)}`));
    for (const name of exported) expect(EVERY_SUBPATH).toContain(`from "${name}"`);
    // @types/node at this Node's major, as a user on it has: @openai/agents 0.20's own declarations
    // do not compile against @types/node 25 and later (their EventEmitter), whoever imports them.
    const nodeMajor = process.versions.node.split(".")[0];
    await install(
      app,
      [...PEERS.map((p) => `${p}@${versionHere(p)}`), `@types/node@${nodeMajor}`],
      env,
    );
    expect(await typecheck(EVERY_SUBPATH)).toBe("");
  });
});

/** The version of a package this checkout has installed. */
function versionHere(name: string): string {
  return (
    JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")) as {
      version: string;
    }
  ).version;
}

function startServe(bin: string, cwd: string, env: NodeJS.ProcessEnv) {
  const child: ChildProcess = spawn(bin, ["serve", "--demo", "--port", "0"], {
    cwd,
    env: { ...env, AIRLOCK_LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  let exit: number | null | undefined;
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code) => {
      exit = code;
      resolve();
    }),
  );
  return {
    stdout: () => out,
    stderr: () => err,
    exited: () => exit !== undefined,
    async until(pattern: RegExp, ms = 60_000): Promise<string> {
      const end = Date.now() + ms;
      for (;;) {
        const m = pattern.exec(out);
        if (m?.[1]) return m[1];
        if (exit !== undefined || Date.now() > end) {
          throw new Error(`airlock serve did not print ${pattern}:\n${out}\n${err}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop(): Promise<void> {
      if (exit === undefined) child.kill("SIGINT");
      const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

async function api(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
