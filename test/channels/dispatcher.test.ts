// The outbox dispatcher on a real engine (memory store) with a scripted driver: a change's messages
// are delivered once per target and audited; failures are retried with backoff (or the target's
// Retry-After), then failed; a 410 disables the target; a decision waits for the gate's opening
// message; a dispatcher that dies mid-delivery loses its lease and another delivers.
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { backoffMs, cleanError, createDispatcher } from "../../src/channels/dispatcher.js";
import type { ChannelDriver, DeliveryContext, DeliveryResult } from "../../src/channels/types.js";
import type { OutboxMessage } from "../../src/core/outbox.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { memoryStore } from "../../src/store/memory.js";

const silent = pino({ level: "silent" });

interface Script {
  driver: ChannelDriver;
  calls: Array<{ message: OutboxMessage; ctx: DeliveryContext }>;
  /** Answers in order; once used up, success. */
  answers: DeliveryResult[];
}

function scripted(name: string): Script {
  const s: Script = {
    calls: [],
    answers: [],
    driver: {
      name,
      type: "webhook",
      async deliver(message, ctx) {
        s.calls.push({ message, ctx });
        return s.answers.shift() ?? { ok: true, receipt: { n: s.calls.length } };
      },
    },
  };
  return s;
}

let clockMs = 1_000_000;
const clock = { now: () => clockMs };
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function setup(targets: string[]) {
  const store = memoryStore();
  const airlock: Airlock = await createAirlock({
    store,
    logger: silent,
    clock,
    sweeper: false,
    notifiers: () => targets,
  });
  closers.push(() => airlock.close());
  return { store, airlock };
}

describe("outbox dispatcher", () => {
  it("delivers each change's message once per routed target and audits each delivery", async () => {
    const { store, airlock } = await setup(["a", "b"]);
    const a = scripted("a");
    const b = scripted("b");
    const d = createDispatcher({
      store,
      drivers: [a.driver, b.driver],
      logger: silent,
      clock,
      publicUrl: "http://127.0.0.1:1",
    });
    const r = await airlock.request({ title: "t", action: "x", approvers: ["bob"] });
    await airlock.decide(r.id, { outcome: "approved", reviewer: "bob" });
    expect(await d.drain()).toBe(4);
    expect(await d.drain()).toBe(0);
    expect(a.calls.map((c) => c.message.topic)).toEqual(["created", "decided"]);
    expect(b.calls.map((c) => c.message.topic)).toEqual(["created", "decided"]);
    // The decision's delivery sees the opening message's receipt, and the request as it stands.
    const decided = a.calls[1];
    expect(decided?.ctx.previous.map((p) => p.topic)).toEqual(["created"]);
    expect(decided?.ctx.previous[0]?.receipt).toEqual({ n: 1 });
    expect(decided?.ctx.request?.status).toBe("approved");
    const log = await airlock.outbox({ requestId: r.id });
    expect(log.map((m) => m.status)).toEqual(["delivered", "delivered", "delivered", "delivered"]);
    const notified = (await airlock.audit({ requestId: r.id })).filter(
      (e) => e.type === "notified",
    );
    expect(notified).toHaveLength(4);
    expect(notified.map((e) => e.data.channel).sort()).toEqual(["a", "a", "b", "b"]);
    expect(notified.every((e) => e.data.delivered === true)).toBe(true);
    expect((await airlock.verifyAudit()).ok).toBe(true);
  });

  it("keeps a whole batch in flight without Node's listener-leak warning (one stop listener per attempt)", async () => {
    const { store, airlock } = await setup(["a"]);
    let inFlight = 0;
    let most = 0;
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const driver: ChannelDriver = {
      name: "a",
      type: "webhook",
      async deliver() {
        inFlight += 1;
        most = Math.max(most, inFlight);
        if (most === 16) release();
        await held;
        inFlight -= 1;
        return { ok: true, receipt: {} };
      },
    };
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    try {
      const d = createDispatcher({
        store,
        drivers: [driver],
        logger: silent,
        clock,
        publicUrl: "http://127.0.0.1:1",
        batch: 16,
      });
      for (let i = 0; i < 16; i++) await airlock.request({ title: `t${i}`, action: "x" });
      expect(await d.drain()).toBe(16);
      expect(most).toBe(16);
      // Node emits the warning on a later tick.
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.includes("MaxListeners"))).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("retries with backoff, honours Retry-After, and fails after maxAttempts", async () => {
    const { store, airlock } = await setup(["a"]);
    const a = scripted("a");
    a.answers.push(
      { ok: false, retry: true, error: "503" },
      { ok: false, retry: true, error: "429", retryAfterMs: 120_000 },
      { ok: false, retry: true, error: "503 again" },
    );
    const d = createDispatcher({
      store,
      drivers: [a.driver],
      logger: silent,
      clock,
      publicUrl: "http://127.0.0.1:1",
      maxAttempts: 3,
      baseDelayMs: 1000,
    });
    const r = await airlock.request({ title: "t", action: "x" });
    expect(await d.drain()).toBe(1);
    let [m] = await airlock.outbox({ requestId: r.id });
    expect(m?.status).toBe("pending");
    expect(m?.lastError).toBe("503");
    // First retry: half to all of baseDelayMs later; not due before.
    expect(m?.availableAt).toBeGreaterThanOrEqual(clockMs + 500);
    expect(m?.availableAt).toBeLessThanOrEqual(clockMs + 1000);
    expect(await d.drain()).toBe(0);
    clockMs += 1000;
    expect(await d.drain()).toBe(1);
    [m] = await airlock.outbox({ requestId: r.id });
    expect(m?.availableAt).toBe(clockMs + 120_000); // Retry-After beats the backoff
    clockMs += 120_000;
    expect(await d.drain()).toBe(1);
    [m] = await airlock.outbox({ requestId: r.id });
    expect(m?.status).toBe("failed");
    expect(m?.attempts).toBe(3);
    expect(a.calls).toHaveLength(3);
    const [notified] = (await airlock.audit({ requestId: r.id })).filter(
      (e) => e.type === "notified",
    );
    expect(notified?.data).toMatchObject({ delivered: false, error: "503 again", attempts: 3 });
  });

  it("disables a target that answered gone: its later messages are not sent", async () => {
    const { store, airlock } = await setup(["a"]);
    const a = scripted("a");
    a.answers.push({ ok: false, retry: false, gone: true, error: "410 Gone" });
    const d = createDispatcher({
      store,
      drivers: [a.driver],
      logger: silent,
      clock,
      publicUrl: "http://127.0.0.1:1",
    });
    await airlock.request({ title: "one", action: "x" });
    await d.drain();
    await airlock.request({ title: "two", action: "x" });
    await d.drain();
    expect(a.calls).toHaveLength(1);
    const log = await airlock.outbox({ target: "a" });
    expect(log.map((m) => m.status)).toEqual(["gone", "gone"]);
    expect(log[1]?.lastError).toMatch(/disabled: its target answered 410/);
  });

  it("settles a message for an unconfigured channel as failed, saying so", async () => {
    const { store, airlock } = await setup(["nowhere"]);
    const d = createDispatcher({ store, drivers: [], logger: silent, clock, publicUrl: "x" });
    await airlock.request({ title: "t", action: "x" });
    await d.drain();
    const [m] = await airlock.outbox({});
    expect(m?.status).toBe("failed");
    expect(m?.lastError).toBe("no channel named `nowhere` is configured");
  });

  it("holds a decision's message until the gate's opening message is delivered", async () => {
    const { store, airlock } = await setup(["a"]);
    const a = scripted("a");
    a.answers.push({ ok: false, retry: true, error: "down" });
    const d = createDispatcher({
      store,
      drivers: [a.driver],
      logger: silent,
      clock,
      publicUrl: "x",
      baseDelayMs: 10,
    });
    const r = await airlock.request({ title: "t", action: "x", approvers: ["bob"] });
    await airlock.decide(r.id, { outcome: "rejected", reviewer: "bob", comment: "no" });
    await d.drain(); // opening fails, decision waits
    expect(a.calls.map((c) => c.message.topic)).toEqual(["created"]);
    // Waiting cost the decision no attempt, and it is due when the opening message is.
    const waiting = (await airlock.outbox({ topic: "decided" }))[0];
    const opening = (await airlock.outbox({ topic: "created" }))[0];
    expect(waiting?.attempts).toBe(0);
    expect(waiting?.availableAt).toBe((opening?.availableAt ?? 0) + 1);
    clockMs += 60_000;
    await d.drain();
    await d.drain();
    expect(a.calls.map((c) => c.message.topic)).toEqual(["created", "created", "decided"]);
  });

  it("a dispatcher that dies mid-delivery loses its lease; another delivers, once", async () => {
    const { store, airlock } = await setup(["a"]);
    const stuck = scripted("a");
    let release: () => void = () => {};
    stuck.driver.deliver = () =>
      new Promise<DeliveryResult>((resolve) => {
        release = () => resolve({ ok: true });
      });
    const dying = createDispatcher({
      store,
      drivers: [stuck.driver],
      logger: silent,
      clock,
      publicUrl: "x",
      leaseMs: 30_000,
      attemptTimeoutMs: 10_000,
    });
    await airlock.request({ title: "t", action: "x" });
    const inFlight = dying.drain();
    await new Promise((r) => setImmediate(r));
    const healthy = scripted("a");
    const other = createDispatcher({
      store,
      drivers: [healthy.driver],
      logger: silent,
      clock,
      publicUrl: "x",
    });
    expect(await other.drain()).toBe(0); // leased
    clockMs += 30_000;
    expect(await other.drain()).toBe(1);
    expect(healthy.calls).toHaveLength(1);
    release(); // the first one's late answer cannot settle: it lost the lease
    await inFlight;
    const [m] = await airlock.outbox({});
    expect(m?.status).toBe("delivered");
    expect(m?.attempts).toBe(2);
    expect(
      (await airlock.audit({})).filter((e) => e.type === "notified" && e.data.delivered),
    ).toHaveLength(1);
  });

  it("stores a target's error text a column can hold (NUL, a cut surrogate pair, length)", async () => {
    const { store, airlock } = await setup(["a"]);
    const a = scripted("a");
    a.answers.push({ ok: false, retry: false, error: `bad\u0000body ${"x".repeat(600)}\ud83d` });
    const d = createDispatcher({
      store,
      drivers: [a.driver],
      logger: silent,
      clock,
      publicUrl: "x",
    });
    await airlock.request({ title: "t", action: "x" });
    expect(await d.drain()).toBe(1);
    const [m] = await airlock.outbox({});
    expect(m?.status).toBe("failed");
    expect(m?.lastError?.startsWith("bad body xxx")).toBe(true);
    expect(m?.lastError?.length).toBeLessThanOrEqual(501);
    expect(cleanError("a\ud83d")).toBe("a\ufffd");
  });

  it("refuses a lease no longer than one attempt may take", async () => {
    const { store } = await setup([]);
    expect(() =>
      createDispatcher({
        store,
        drivers: [],
        logger: silent,
        publicUrl: "x",
        leaseMs: 1000,
        attemptTimeoutMs: 1000,
      }),
    ).toThrow(/leaseMs \(1000\) must be longer than attemptTimeoutMs/);
  });

  it("backs off exponentially with jitter, capped", () => {
    for (let i = 0; i < 50; i++) {
      const first = backoffMs(1, 1000, 60_000);
      expect(first).toBeGreaterThanOrEqual(500);
      expect(first).toBeLessThanOrEqual(1000);
      const fifth = backoffMs(5, 1000, 60_000);
      expect(fifth).toBeGreaterThanOrEqual(8000);
      expect(fifth).toBeLessThanOrEqual(16_000);
      expect(backoffMs(30, 1000, 60_000)).toBeLessThanOrEqual(60_000);
    }
  });
});
