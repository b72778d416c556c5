// `airlock serve --config` as a process, with a signed webhook channel: a server killed while it
// delivers (the receiver never answered) delivers after a restart, once; `airlock channels test`
// sends a test message and says what happened; a bad config stops the start with one line.
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";
import { airlockArgs, tempDir } from "../helpers.js";

const SECRET = `whsec_${Buffer.from("serve-channels-secret-0123456789").toString("base64")}`;
const ADMIN = "alk_test_admin_token_for_channels_0123";
const temps: Array<() => void> = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  for (const t of temps) t();
});

function start(args: string[]) {
  const clean = { ...process.env };
  delete clean.AIRLOCK_URL;
  delete clean.AIRLOCK_CONFIG;
  delete clean.AIRLOCK_LOG_LEVEL;
  const child = spawn(process.execPath, [...airlockArgs(), ...args], {
    env: { ...clean, AIRLOCK_ADMIN_TOKEN: ADMIN },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const out = { stdout: "", stderr: "" };
  child.stdout?.on("data", (d: Buffer) => {
    out.stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out.stderr += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, out, exited };
}

async function until<T>(
  what: string,
  fn: () => T | undefined | Promise<T | undefined>,
  ms = 30_000,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function serve(db: string, config: string) {
  const s = start(["--db", db, "serve", "--port", "0", "--config", config]);
  const url = await until("the server's URL", () => {
    if (s.child.exitCode !== null) throw new Error(`serve exited: ${s.out.stderr}`);
    return /serving at (http:\/\/127\.0\.0\.1:\d+)\//.exec(s.out.stdout)?.[1];
  });
  return { ...s, url };
}

function api(url: string, method: string, path: string, body?: unknown) {
  return fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

function setup(receiver: WebhookReceiver, extra: Record<string, unknown> = {}) {
  const t = tempDir("airlock-serve-channels-");
  temps.push(t.cleanup);
  const config = join(t.dir, "airlock.config.json");
  writeFileSync(
    config,
    JSON.stringify({
      channels: {
        hook: {
          type: "webhook",
          url: `${receiver.url}/hook`,
          secret: { env: "TEST_HOOK_SECRET" },
          allowPrivateTargets: true,
          timeoutMs: 60_000,
        },
      },
      routes: [{ match: { action: "deploy.*" }, channels: ["hook"] }],
      outbox: { leaseMs: 6000, attemptTimeoutMs: 5000, baseDelayMs: 100 },
      ...extra,
    }),
  );
  return { db: join(t.dir, "airlock.db"), config };
}

describe("airlock serve --config (webhook channel)", () => {
  it("a server killed mid-delivery delivers after restart, and only once on success", {
    timeout: 120_000,
  }, async () => {
    process.env.TEST_HOOK_SECRET = SECRET;
    const receiver = await startWebhookReceiver({ hook: SECRET });
    try {
      const { db, config } = setup(receiver);
      receiver.reply("hang"); // the first attempt never gets an answer
      const first = await serve(db, config);
      const created = await api(first.url, "POST", "/v1/requests", {
        title: "Deploy 1.2.3",
        action: "deploy.prod",
        approvers: ["ops"],
      });
      expect(created.status).toBe(201);
      const gate = (await created.json()) as { id: string };
      // Not routed (action): no message.
      await api(first.url, "POST", "/v1/requests", { title: "other", action: "files.write" });
      await until("the first attempt", () => (receiver.received.length === 1 ? true : undefined));
      first.child.kill("SIGKILL");
      await first.exited;

      const second = await serve(db, config);
      await until("the delivery after restart", async () => {
        const res = await api(second.url, "GET", `/v1/outbox?requestId=${gate.id}`);
        const page = (await res.json()) as { items: Array<{ status: string }> };
        return page.items[0]?.status === "delivered" ? true : undefined;
      });
      await new Promise((r) => setTimeout(r, 500)); // a second delivery would arrive now
      expect(receiver.received).toHaveLength(2);
      const [hung, delivered] = receiver.received;
      expect(delivered?.headers["webhook-id"]).toBe(hung?.headers["webhook-id"]);
      const check = delivered?.verified.hook;
      expect(check?.ok).toBe(true);
      if (check?.ok) {
        expect(check.event.type).toBe("request.created");
      }
      const log = (await (await api(second.url, "GET", "/v1/outbox")).json()) as {
        items: Array<{ requestId: string; attempts: number; status: string }>;
      };
      expect(log.items).toHaveLength(1);
      expect(log.items[0]).toMatchObject({ requestId: gate.id, attempts: 2, status: "delivered" });
      const audit = (await (
        await api(second.url, "GET", `/v1/audit?requestId=${gate.id}`)
      ).json()) as {
        items: Array<{ type: string; data: Record<string, unknown> }>;
      };
      expect(audit.items.filter((e) => e.type === "notified")).toHaveLength(1);
      // The secret is nowhere in what the API shows.
      expect(JSON.stringify(log)).not.toContain(SECRET);
      expect(JSON.stringify(audit)).not.toContain(SECRET);
      second.child.kill("SIGTERM");
      expect(await second.exited).toBe(0);
      expect(second.out.stderr).not.toContain(SECRET);
    } finally {
      await receiver.close();
    }
  });

  it("`airlock channels test` sends one signed test message and says what happened", {
    timeout: 60_000,
  }, async () => {
    process.env.TEST_HOOK_SECRET = SECRET;
    const receiver = await startWebhookReceiver({ hook: SECRET });
    try {
      const { config } = setup(receiver);
      const ok = start(["channels", "test", "hook", "--config", config]);
      expect(await ok.exited).toBe(0);
      const printed = JSON.parse(ok.out.stdout) as Record<string, unknown>;
      expect(printed).toMatchObject({ channel: "hook", type: "webhook", ok: true });
      expect(receiver.received).toHaveLength(1);
      const check = receiver.received[0]?.verified.hook;
      expect(check?.ok && check.event.type).toBe("request.test");

      receiver.reply({ status: 500 });
      const failing = start(["channels", "test", "hook", "--config", config]);
      expect(await failing.exited).not.toBe(0);
      expect(failing.out.stderr.trim().split("\n")).toHaveLength(1);
      expect(failing.out.stderr).toMatch(/channel hook \(webhook\): not delivered: .*500/);

      const unknown = start(["channels", "test", "nope", "--config", config]);
      expect(await unknown.exited).not.toBe(0);
      expect(unknown.out.stderr).toContain("no channel named `nope`");
    } finally {
      await receiver.close();
    }
  });

  it("refuses to start on a bad config, with one line naming the problem", {
    timeout: 60_000,
  }, async () => {
    const receiver = await startWebhookReceiver();
    try {
      delete process.env.TEST_HOOK_SECRET;
      const { db, config } = setup(receiver);
      const s = start(["--db", db, "serve", "--port", "0", "--config", config]);
      expect(await s.exited).not.toBe(0);
      expect(s.out.stderr).toMatch(/environment variable TEST_HOOK_SECRET is not set/);
      process.env.TEST_HOOK_SECRET = SECRET;
      const { db: db2, config: config2 } = setup(receiver, {
        routes: [{ channels: ["missing"] }],
      });
      const s2 = start(["--db", db2, "serve", "--port", "0", "--config", config2]);
      expect(await s2.exited).not.toBe(0);
      expect(s2.out.stderr).toMatch(/names channel `missing`/);
    } finally {
      await receiver.close();
    }
  });
});
