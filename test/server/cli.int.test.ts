// `airlock serve` and `airlock token` as processes: the admin token printed once, SIGTERM answering
// in-flight long-polls and exiting cleanly, tokens created from the command line working on the server.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer as createNetServer } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ENV_ADMIN_ID, ensureAdminToken } from "../../src/cli/serve.js";
import { hashToken, memoryTokenStore } from "../../src/server/tokens.js";
import { airlockArgs, eventually, tempDir } from "../helpers.js";
import { call } from "./helpers.js";

const temps: (() => void)[] = [];
afterAll(() => {
  for (const c of temps) c();
});

interface Run {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  exited: Promise<number | null>;
}

function run(args: string[], env: NodeJS.ProcessEnv = {}): Run {
  const clean = { ...process.env };
  delete clean.AIRLOCK_ADMIN_TOKEN;
  delete clean.AIRLOCK_URL;
  const child = spawn(process.execPath, [...airlockArgs(), ...args], {
    env: { ...clean, AIRLOCK_LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stdout?.on("data", (d: Buffer) => stdout.push(d.toString()));
  child.stderr?.on("data", (d: Buffer) => stderr.push(d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  return { child, stdout, stderr, exited };
}

async function output(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = run(args, env);
  const code = await r.exited;
  return { code, stdout: r.stdout.join(""), stderr: r.stderr.join("") };
}

async function until<T>(what: string, fn: () => T | undefined, ms = 20_000): Promise<T> {
  return eventually(() => fn() ?? false, { timeoutMs: ms, intervalMs: 25, what }) as Promise<T>;
}

function dbFile(): string {
  const t = tempDir("airlock-cli-");
  temps.push(t.cleanup);
  return join(t.dir, "airlock.db");
}

describe("airlock serve", () => {
  it("prints the URL and an admin token once; SIGTERM answers long-polls and exits 0", {
    timeout: 90_000,
  }, async () => {
    const db = dbFile();
    const serve = run(["--db", db, "serve", "--port", "0", "--demo"]);
    try {
      const lines = await until("the admin token", () => {
        const text = serve.stdout.join("");
        return /Admin token.*: (alk_\S+)/.test(text) ? text : undefined;
      });
      const url = /serving at (http:\/\/127\.0\.0\.1:\d+)\//.exec(lines)?.[1] as string;
      const admin = /Admin token.*: (alk_\S+)/.exec(lines)?.[1] as string;
      expect(url).toBeDefined();

      // The demo's five example agents open their gates against this server, as demo-agent.
      const reviewer = await until(
        "the demo reviewer token",
        () => /sign in with the reviewer token\n\s+(alk_\S+)/.exec(serve.stdout.join(""))?.[1],
      );
      let items: { id: string; action: string; requester: string; title: string }[] = [];
      // Up to 30 s: five agents start at once, and CI machines can be busy.
      for (let i = 0; i < 600; i++) {
        const list = await call(url, admin, "GET", "/v1/requests?status=pending");
        expect(list.status).toBe(200);
        items = list.body.items;
        const actions = new Set(items.map((r) => r.action));
        if (actions.has("research.search") && actions.has("send_bulk_notification")) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(items.every((r) => r.requester === "demo-agent")).toBe(true);
      const research = items.find((r) => r.action === "research.search");
      expect(research).toBeDefined();
      // Deciding in the "inbox" (as the demo reviewer) lets that agent finish, visibly.
      const decided = await call(url, reviewer, "POST", `/v1/requests/${research?.id}/decisions`, {
        outcome: "approved",
      });
      expect(decided.status).toBe(200);
      await until("the research agent to finish", () =>
        serve.stdout.join("").includes("[research-reflection] finished") ? true : undefined,
      );
      // A gate of hitl-tools: it stays pending when the agents stop (research-two-phase, for one,
      // withdraws its plan's gate then), so the long-poll below is answered by the server stopping.
      const pending = items.find((r) => r.action === "send_bulk_notification")?.id as string;
      expect(pending).toBeDefined();

      const waiting = call(url, admin, "GET", `/v1/requests/${pending}/wait?timeout=30`);
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      serve.child.kill("SIGTERM");
      const answered = await waiting;
      expect(answered.status).toBe(200);
      expect(answered.body.status).toBe("pending");
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(await serve.exited).toBe(0);
      expect(serve.stderr.join("")).toContain("stopping gracefully");
      expect(serve.stderr.join("")).not.toContain(admin);
    } finally {
      serve.child.kill("SIGKILL");
    }

    // Second start on the same database: no new admin token is printed.
    const again = run(["--db", db, "serve", "--port", "0"]);
    try {
      await until("the URL", () => (/serving at/.test(again.stdout.join("")) ? true : undefined));
      expect(again.stdout.join("")).not.toContain("Admin token");
      again.child.kill("SIGINT");
      expect(await again.exited).toBe(0);
    } finally {
      again.child.kill("SIGKILL");
    }
  });

  it("stops gracefully (exit 0) on a SIGINT that arrives while it is starting", async () => {
    // Its handler is in place before anything is opened or printed: a Ctrl-C right after the address
    // appears (or earlier) is never met by the default action, which kills the process.
    const db = dbFile();
    const serve = run(["--db", db, "serve", "--port", "0"]);
    try {
      // The database file appears while the server is starting, before it listens.
      const end = Date.now() + 20_000;
      while (!existsSync(db) && Date.now() < end) await new Promise((r) => setImmediate(r));
      expect(existsSync(db)).toBe(true);
      serve.child.kill("SIGINT");
      expect(await serve.exited).toBe(0);
      expect(serve.child.signalCode).toBeNull();
      expect(serve.stderr.join("")).toContain("SIGINT, stopping gracefully");
    } finally {
      serve.child.kill("SIGKILL");
    }
  });

  it("fails with one line when its port is taken, and makes the admin token only once it listens", async () => {
    const db = dbFile();
    const blocker = createNetServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const busy = await output(["--db", db, "serve", "--port", String(port)]);
      expect(busy.code).toBe(4);
      expect(busy.stdout).not.toContain("Admin token");
      // Besides the warnings every start on the default layout prints (key and checkpoints beside
      // the database), one line says what failed.
      const lines = busy.stderr.trim().split("\n");
      expect(lines.filter((l) => !l.startsWith("airlock: warning:"))).toEqual([
        `airlock: 127.0.0.1:${port} is already in use (another airlock serve?); stop it or choose another port with --port`,
      ]);
    } finally {
      await new Promise((r) => blocker.close(r));
    }
    // The port is free again: this start makes and prints the admin token.
    const serve = run(["--db", db, "serve", "--port", String(port)]);
    try {
      const text = await until("the admin token", () => {
        const t = serve.stdout.join("");
        return /Admin token.*: alk_\S+/.test(t) ? t : undefined;
      });
      expect(text).toContain(`serving at http://127.0.0.1:${port}/`);
      serve.child.kill("SIGTERM");
      expect(await serve.exited).toBe(0);
    } finally {
      serve.child.kill("SIGKILL");
    }
  });

  it("uses AIRLOCK_ADMIN_TOKEN as the admin token and prints none", async () => {
    const db = dbFile();
    const secret = "an-admin-token-from-the-environment";
    const serve = run(["--db", db, "serve", "--port", "0"], { AIRLOCK_ADMIN_TOKEN: secret });
    try {
      const text = await until("the URL", () => {
        const t = serve.stdout.join("");
        return /serving at/.test(t) ? t : undefined;
      });
      expect(text).not.toContain("Admin token");
      const url = /serving at (http:\/\/127\.0\.0\.1:\d+)\//.exec(text)?.[1] as string;
      expect((await call(url, secret, "GET", "/v1/audit/verify")).status).toBe(200);
      serve.child.kill("SIGTERM");
      expect(await serve.exited).toBe(0);
    } finally {
      serve.child.kill("SIGKILL");
    }
  });
});

describe("airlock token", () => {
  it("creates a token printed alone on stdout, lists and revokes it", async () => {
    const db = dbFile();
    const created = await output([
      "--db",
      db,
      "token",
      "create",
      "--role",
      "reviewer",
      "--name",
      "alice",
      "--group",
      "ops",
      "--group",
      "sre",
    ]);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^alk_[A-Za-z0-9_-]{43}\n$/);

    const listed = await output(["--db", db, "token", "list", "--json"]);
    const tokens = JSON.parse(listed.stdout) as {
      id: string;
      name: string;
      roles: string[];
      groups: string[];
    }[];
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toMatchObject({ name: "alice", roles: ["reviewer"], groups: ["ops", "sre"] });
    expect(listed.stdout).not.toContain(created.stdout.trim());

    const table = await output(["--db", db, "token", "list"]);
    expect(table.stdout).toMatch(/ID\s+NAME\s+ROLES/);
    expect(table.stdout).toContain("alice");

    const id = tokens[0]?.id as string;
    expect((await output(["--db", db, "token", "revoke", id])).code).toBe(0);
    expect(JSON.parse((await output(["--db", db, "token", "list", "--json"])).stdout)).toEqual([]);
    const missing = await output(["--db", db, "token", "revoke", "tok_missing"]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("tok_missing");

    const badRole = await output(["--db", db, "token", "create", "--role", "root", "--name", "x"]);
    expect(badRole.code).not.toBe(0);
    expect(badRole.stderr).toContain("--role");
  });

  it("creates tokens through the server when AIRLOCK_URL is set", async () => {
    const db = dbFile();
    const secret = "an-admin-token-from-the-environment";
    const serve = run(["--db", db, "serve", "--port", "0"], { AIRLOCK_ADMIN_TOKEN: secret });
    try {
      const text = await until("the URL", () => {
        const t = serve.stdout.join("");
        return /serving at/.test(t) ? t : undefined;
      });
      const url = /serving at (http:\/\/127\.0\.0\.1:\d+)\//.exec(text)?.[1] as string;
      const created = await output(["token", "create", "--role", "agent", "--name", "bot"], {
        AIRLOCK_URL: url,
        AIRLOCK_TOKEN: secret,
      });
      expect(created.code).toBe(0);
      const token = created.stdout.trim();
      const made = await call(url, token, "POST", "/v1/requests", {
        title: "From a CLI-made token",
      });
      expect(made.status).toBe(201);
      expect(made.body.requester).toBe("bot");
      serve.child.kill("SIGTERM");
      expect(await serve.exited).toBe(0);
    } finally {
      serve.child.kill("SIGKILL");
    }
  });
});

describe("ensureAdminToken", () => {
  it("makes one admin token on first start, takes AIRLOCK_ADMIN_TOKEN, and drops it when unset", async () => {
    const tokens = memoryTokenStore();
    const first = await ensureAdminToken(tokens, {});
    expect(first).toMatch(/^alk_/);
    expect(await ensureAdminToken(tokens, {})).toBeUndefined();

    const secret = "0123456789abcdef-env";
    expect(await ensureAdminToken(tokens, { AIRLOCK_ADMIN_TOKEN: secret })).toBeUndefined();
    expect((await tokens.findByHash(hashToken(secret)))?.id).toBe(ENV_ADMIN_ID);

    await ensureAdminToken(tokens, {});
    expect(await tokens.findByHash(hashToken(secret))).toBeUndefined();
    await expect(ensureAdminToken(tokens, { AIRLOCK_ADMIN_TOKEN: "short" })).rejects.toThrow(/16/);
  });
});
