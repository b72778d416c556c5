// Redaction keys belong to whoever redacts, never to the process (issue 34): an engine's
// `createAirlock({ redaction: { keys } })` reaches its audit log and, through `airlock.redaction`, the
// tools, adapters and channels beside it; two engines in one process redact each by its own keys.
// `airlock` commands take theirs from AIRLOCK_REDACT_KEYS.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import Database from "better-sqlite3";
import pino from "pino";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { gateInput } from "../../src/adapters/openai-agents/gate.js";
import {
  builtInRedactor,
  createRedactor,
  isSensitiveKey,
  REDACTED,
  redact,
  redactionKeysFrom,
  redactorOf,
} from "../../src/audit/redact.js";
import { parseChannelsConfig } from "../../src/channels/config.js";
import { createChannels, type RunningChannels, startChannels } from "../../src/channels/setup.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { inboundDeps } from "../../src/server/channels.js";
import { memoryStore } from "../../src/store/memory.js";
import { hitlTool } from "../../src/tools/hitl-tool.js";
import { isHitlPending } from "../../src/tools/results.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";
import { airlockArgs, tempDir } from "../helpers.js";

const silent = pino({ level: "silent" });
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function engine(keys?: string[]): Promise<Airlock> {
  const airlock = await createAirlock({
    store: memoryStore(),
    logger: silent,
    sweeper: false,
    ...(keys ? { redaction: { keys } } : {}),
  });
  closers.push(() => airlock.close());
  return airlock;
}

describe("a redactor", () => {
  it("adds its keys to the built-in rules, for itself alone", () => {
    const taxes = createRedactor({ keys: ["tax-id"] });
    expect(taxes.keys).toEqual(["tax-id"]);
    expect(taxes.isSensitiveKey("customerTaxId")).toBe(true);
    expect(taxes.redact({ tax_id: "998-12", password: "x", name: "n" })).toEqual({
      tax_id: REDACTED,
      password: REDACTED,
      name: "n",
    });
    expect(taxes.redactString("refund for TAX_ID=998-12 today")).toBe(
      "refund for TAX_ID=*** today",
    );
    // Nothing of it reaches another redactor, nor the module's own functions.
    expect(createRedactor().isSensitiveKey("customerTaxId")).toBe(false);
    expect(builtInRedactor.isSensitiveKey("customerTaxId")).toBe(false);
    expect(isSensitiveKey("customerTaxId")).toBe(false);
    expect(redact({ tax_id: "998-12" })).toEqual({ tax_id: "998-12" });
  });

  it("is an engine's for an engine, the built-in one for anything else (an HTTP client)", async () => {
    const a = await engine(["tax-id"]);
    expect(redactorOf(a)).toBe(a.redaction);
    expect(redactorOf({ request: () => undefined })).toBe(builtInRedactor);
    expect(redactorOf(undefined)).toBe(builtInRedactor);
  });

  it("reads AIRLOCK_REDACT_KEYS' comma-separated list, blanks dropped", () => {
    expect(redactionKeysFrom(" tax-id, ,employee_ssn ,")).toEqual(["tax-id", "employee_ssn"]);
    expect(redactionKeysFrom(undefined)).toEqual([]);
  });
});

describe("the engine option", () => {
  it("redacts the engine's audit log by its keys; another engine in the same process by its own", async () => {
    const withKeys = await engine(["tax-id"]);
    const without = await engine();
    const args = { taxId: "998-12", amount: 3 };
    const logged = async (a: Airlock) => {
      const r = await a.request({ title: "Refund", action: "refund", args });
      const created = (await a.audit({ requestId: r.id })).find((e) => e.type === "created");
      return created?.data.args;
    };
    expect(await logged(withKeys)).toEqual({ taxId: REDACTED, amount: 3 });
    expect(await logged(without)).toEqual(args);
    expect(withKeys.redaction.keys).toEqual(["tax-id"]);
    expect(without.redaction.keys).toEqual([]);
  });

  it("reaches hitlTool: what reviewers see of a call, and its pending marker", async () => {
    const withKeys = await engine(["tax-id"]);
    const refund = hitlTool(async (_: { taxId: string; amount: number }) => "refunded", {
      name: "refund",
      airlock: withKeys,
      confidence: () => 10,
    });
    const out = await refund({ taxId: "998-12", amount: 3 });
    expect(isHitlPending(out)).toBe(true);
    if (!isHitlPending(out)) return;
    expect(out.hitl_result.toolArgs).toEqual({ taxId: REDACTED, amount: 3 });
    const stored = await withKeys.get(out.hitl_result.approvalId as string);
    expect(stored.summary).toContain(`"taxId": "${REDACTED}"`);
    expect(stored.summary).not.toContain("998-12");
    // The exact args stay on the request for the approved call to run with.
    expect(stored.args).toEqual({ taxId: "998-12", amount: 3 });
  });

  it("reaches the OpenAI Agents adapter's preview", async () => {
    const withKeys = await engine(["tax-id"]);
    const call = { tool: "refund", callId: "c1", agent: "a", args: { taxId: "998-12" } };
    const shown = gateInput({}, call, redactorOf(withKeys));
    expect(shown.preview).toContain(REDACTED);
    expect(shown.preview).not.toContain("998-12");
    expect(gateInput({}, call, redactorOf(await engine())).preview).toContain("998-12");
  });
});

describe("the channels beside an engine", () => {
  it("send a webhook's request through the engine's redaction", async () => {
    const receiver: WebhookReceiver = await startWebhookReceiver();
    closers.push(() => receiver.close());
    const config = parseChannelsConfig({
      channels: {
        hook: {
          type: "webhook",
          url: `${receiver.url}/hook`,
          secret: `whsec_${Buffer.from("redaction-option-hook-secret-0123").toString("base64")}`,
          allowPrivateTargets: true,
        },
      },
      routes: [{ match: {}, channels: ["hook"] }],
      outbox: { pollMs: 50, baseDelayMs: 50 },
    });
    const channels = await createChannels(config, { logger: silent });
    const store = memoryStore();
    let running: RunningChannels | undefined;
    const airlock = await createAirlock({
      store,
      logger: silent,
      sweeper: false,
      redaction: { keys: ["tax-id"] },
      notifiers: channels.router,
      onOutbox: () => running?.dispatcher.wake(),
    });
    closers.push(() => airlock.close());
    const serverChannels = {
      drivers: channels.drivers,
      identities: channels.identities,
      publicUrl: () => "http://127.0.0.1:9",
    };
    running = await startChannels(channels, {
      store,
      inbound: inboundDeps(airlock, serverChannels, silent),
      logger: silent,
      publicUrl: () => "http://127.0.0.1:9",
    });
    closers.push(() => running?.close());
    const r = await airlock.request({ title: "Refund for tax_id=998-12", action: "refund" });
    const deadline = Date.now() + 20_000;
    while (!receiver.received.some((m) => m.body.includes(r.id)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const body = receiver.received.find((m) => m.body.includes(r.id))?.body ?? "";
    expect(JSON.parse(body).data.request.title).toBe("Refund for tax_id=***");
    expect(body).not.toContain("998-12");
  });
});

describe("the command line", () => {
  const temp = tempDir("airlock-redact-keys-");
  afterAll(() => temp.cleanup());

  function requestWithTaxId(db: string, keys: string | undefined): string | undefined {
    const env: NodeJS.ProcessEnv = { ...process.env, AIRLOCK_DB: db };
    delete env.AIRLOCK_URL;
    delete env.AIRLOCK_REDACT_KEYS;
    if (keys !== undefined) env.AIRLOCK_REDACT_KEYS = keys;
    const run = spawnSync(
      process.execPath,
      [...airlockArgs(), "request", "--title", "Refund", "--args", '{"taxId":"998-12"}'],
      { env, encoding: "utf8", timeout: 150_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const sqlite = new Database(db, { readonly: true });
    try {
      const row = sqlite.prepare("SELECT data FROM audit WHERE type = 'created'").get() as
        | { data: string }
        | undefined;
      return (JSON.parse(row?.data ?? "{}") as { args?: { taxId?: string } }).args?.taxId;
    } finally {
      sqlite.close();
    }
  }

  it("AIRLOCK_REDACT_KEYS reaches the engine of a command, and only where it is set", {
    timeout: 320_000,
  }, () => {
    expect(requestWithTaxId(join(temp.dir, "keyed.db"), "tax-id")).toBe(REDACTED);
    expect(requestWithTaxId(join(temp.dir, "plain.db"), undefined)).toBe("998-12");
  });
});
