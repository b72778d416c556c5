// The package as a user gets it. A copy of the project with the built package (test/packaging/
// packed.ts): its bin runs directly, as `npx airlock` runs it. Then `npm pack` makes the tarball,
// which is installed in an empty folder, and the installed `airlock serve --demo` runs `npm start`'s
// five agents to completion, each decided over the HTTP API with the reviewer token the demo prints.
// The declarations are checked in package-types.int.test.ts.
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  builtCopy,
  cleanEnv,
  install,
  npmMissing,
  type PackedProject,
  PKG,
  ROOT,
  run,
} from "./packed.js";

const FIVE = [
  "research-reflection",
  "robot-plan",
  "hitl-tools",
  "file-approval",
  "research-two-phase",
];

let copy: PackedProject;
let work: string;
let project: string;
const pack = () => copy.pack();

beforeAll(async () => {
  copy = await builtCopy();
  ({ work, project } = copy);
}, 180_000);

// The installed projects hold tens of thousands of files: removing them can take longer than the
// default hook timeout on a busy machine.
afterAll(() => copy?.cleanup(), 120_000);

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

/** The optional peer dependencies (package.json peerDependenciesMeta): a user installs the ones the
 * features they use need (pg for --postgres, the MCP SDK, Slack and mail libraries, prom-client). */
const OPTIONAL_PEERS = Object.entries(
  (
    JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    }
  ).peerDependenciesMeta,
)
  .filter(([, meta]) => meta.optional)
  .map(([name]) => name);

let installedApp: Promise<{ app: string; files: string[]; packages: number }> | undefined;

/** An empty project with the tarball installed, as `npm i <tarball>` does it: the optional peers
 * are not installed. Once for the tests below. */
function installApp(): Promise<{ app: string; files: string[]; packages: number }> {
  installedApp ??= (async () => {
    const env = cleanEnv();
    const { tarball, files } = await pack();
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
    // What a user's `npm i` brings in: every package under node_modules, this one included.
    const listed = await run("npm", ["ls", "--all", "--parseable"], { cwd: app, env }).catch(
      (err: { stdout?: string }) => ({ stdout: err.stdout ?? "" }),
    );
    const packages = new Set(listed.stdout.split("\n").slice(1).filter(Boolean)).size;
    process.stdout.write(`test/packaging: npm i <tarball> installed ${packages} packages\n`);
    return { app, files, packages };
  })();
  return installedApp;
}

describe.skipIf(npmMissing !== undefined)("the packed package", () => {
  it("installs from its tarball and runs npm start's five demo agents to completion", {
    timeout: 300_000,
  }, async () => {
    const env = cleanEnv();
    const { app, files } = await installApp();
    // The library, the bin, the demo and its data; no tests, no sources of the library.
    expect(files).toContain("dist/src/cli/main.js");
    expect(files).toContain("dist/examples/demo.js");
    expect(files).toContain("dist/examples/research-two-phase/corpus/sqlite-overview.md");
    expect(files.some((f) => /\.test\.(js|ts)$/.test(f))).toBe(false);
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

  it("runs without its optional peers: the library on SQLite, the server, and a one-line error from a command that needs one", {
    timeout: 300_000,
  }, async () => {
    const env = cleanEnv();
    const { app, packages } = await installApp();
    for (const name of OPTIONAL_PEERS)
      expect(existsSync(join(app, "node_modules", name))).toBe(false);
    // 154 packages when the channels, MCP, pg and prom-client were dependencies; 83 without them.
    expect(packages).toBeLessThan(100);

    // The root and every subpath that needs no peer load; the engine runs on SQLite; a server
    // answers, and its /metrics says which package it lacks.
    const script = `
      const m = await import("${PKG.name}");
      const { sqliteStore } = await import("${PKG.name}/sqlite");
      for (const sub of ["core", "policy", "audit", "tools", "channels", "console", "server"]) {
        await import("${PKG.name}/" + sub);
      }
      const airlock = await m.createAirlock({ store: sqliteStore(":memory:") });
      const request = await airlock.request({ title: "Deploy api", items: ["a", "b"] });
      const decided = await airlock.decide(request.id, { outcome: "approved", reviewer: "alice" });
      const { createServer, memoryTokenStore } = await import("${PKG.name}/server");
      // A scraper's own token opens /metrics.
      const metricsToken = "scraper-token-0123456789";
      const server = createServer({ airlock, auth: { tokens: memoryTokenStore() }, metricsToken });
      const health = await server.app.request("/healthz");
      const metrics = await server.app.request("/metrics", {
        headers: { authorization: "Bearer " + metricsToken },
      });
      console.log(JSON.stringify({
        status: decided.status,
        health: health.status,
        metrics: metrics.status,
        detail: (await metrics.json()).detail,
        registry: server.registry === undefined,
      }));
      await server.close();
      await airlock.close();
    `;
    const lib = await run(process.execPath, ["--input-type=module", "-e", script], {
      cwd: app,
      env,
    });
    expect(JSON.parse(lib.stdout.trim().split("\n").at(-1) ?? "")).toEqual({
      status: "approved",
      health: 200,
      metrics: 501,
      detail: expect.stringContaining('needs the package "prom-client": npm install prom-client'),
      registry: true,
    });

    // A command that needs a missing peer says so in one line on stderr, and fails.
    const bin = join(app, "node_modules/.bin/airlock");
    const cases: [string[], string][] = [
      [
        ["serve", "--postgres", "postgres://127.0.0.1:1/none", "--port", "0"],
        'airlock: serve --postgres needs the package "pg": npm install pg',
      ],
      [
        ["mcp"],
        'airlock: mcp needs the package "@modelcontextprotocol/server": npm install @modelcontextprotocol/server',
      ],
    ];
    for (const [args, line] of cases) {
      const failed = await run(bin, args, {
        cwd: app,
        env: { ...env, AIRLOCK_AUDIT_KEY: "an audit key of the packaging test" },
      }).then(
        () => undefined,
        (err: { code?: number; stderr?: string }) => err,
      );
      expect(failed?.code).toBe(4);
      expect(failed?.stderr).toBe(`${line}\n`);
    }
  });
});

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
