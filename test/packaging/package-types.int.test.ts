// The packed package's type declarations, as a strict user project type-checks them (the package
// itself: package.int.test.ts; the copy and the tarball: packed.ts).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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
  versionHere,
} from "./packed.js";

let copy: PackedProject;
let work: string;
const pack = () => copy.pack();

beforeAll(async () => {
  copy = await builtCopy();
  ({ work } = copy);
}, 180_000);

afterAll(() => copy?.cleanup(), 120_000);

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

/** The optional peers of the framework subpaths and of the MCP one, at the versions this checkout
 * runs. (pg's types come with the package, as @types/pg; the server names no prom-client type.) */
const PEERS = [
  "@openai/agents",
  "ai",
  "@langchain/core",
  "@langchain/langgraph",
  "react",
  "@types/react",
  "@modelcontextprotocol/server",
  "@modelcontextprotocol/client",
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
