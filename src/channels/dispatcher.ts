// The outbox dispatcher: claims due messages from the store with a lease, hands each to its channel's
// driver, and settles it: delivered (with a `notified` audit event, in the same transaction), retried
// later with exponential backoff and jitter (or the target's Retry-After), failed, or gone. Several
// dispatchers (processes, servers) may run on one store: a claim is exclusive, and a dispatcher that
// dies mid-delivery loses its lease, so the message is delivered again by someone else. A delivery
// that succeeded is settled once, so a message is sent twice only when a process dies between the
// target's answer and the settle: at-least-once, with the message id as the target's idempotency key.
import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import type { Logger } from "pino";
import type { Redactor } from "../audit/redact.js";
import type { Clock } from "../core/clock.js";
import { InvalidInputError } from "../core/errors.js";
import type { OutboxMessage, OutboxSettlement } from "../core/outbox.js";
import type { AuditDraft } from "../core/schemas.js";
import type { Store } from "../core/store.js";
import type { ChannelDriver, DeliveryResult } from "./types.js";

export interface DispatcherOptions {
  store: Pick<Store, "claimOutbox" | "settleOutbox" | "listOutbox" | "getRequest">;
  drivers: readonly ChannelDriver[];
  logger: Logger;
  clock?: Clock;
  /** This server's absolute base URL, for links in messages. */
  publicUrl: string;
  /** The engine's redaction (`airlock.redaction`), handed to every delivery. @default the built-in
   * rules */
  redaction?: Redactor;
  /** Attempts before a message is settled `failed`. @default 8 */
  maxAttempts?: number;
  /** The first retry's delay; each next one doubles, up to `maxDelayMs`, with jitter. @default 1000 */
  baseDelayMs?: number;
  /** @default 300000 (5 minutes) */
  maxDelayMs?: number;
  /** How long a claim holds before another dispatcher may take the message. @default 60000 */
  leaseMs?: number;
  /** The longest one delivery may take. @default 30000 */
  attemptTimeoutMs?: number;
  /** How often the store is asked for due messages when nothing woke the dispatcher. @default 1000 */
  pollMs?: number;
  /** Messages claimed (and delivered concurrently) at once. @default 16 */
  batch?: number;
}

export interface Dispatcher {
  /** Starts the claim loop. */
  start(): void;
  /** Claims and delivers now (a commit wrote messages, or another process signalled a change). */
  wake(): void;
  /** Delivers everything due now and returns how many messages were settled (tests, `channels test`). */
  drain(): Promise<number>;
  /** Stops claiming, aborts deliveries in flight (their leases run out) and waits for the loop. The
   * drivers stay open: whoever made them closes them. */
  close(): Promise<void>;
}

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { store, logger } = options;
  const now = () => (options.clock ?? { now: Date.now }).now();
  const drivers = new Map(options.drivers.map((d) => [d.name, d]));
  const owner = `dispatcher-${randomUUID()}`;
  const maxAttempts = options.maxAttempts ?? 8;
  const baseDelayMs = options.baseDelayMs ?? 1000;
  const maxDelayMs = options.maxDelayMs ?? 300_000;
  const leaseMs = options.leaseMs ?? 60_000;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? 30_000;
  const pollMs = options.pollMs ?? 1000;
  const batch = options.batch ?? 16;
  if (leaseMs <= attemptTimeoutMs) {
    throw new InvalidInputError(
      `outbox leaseMs (${leaseMs}) must be longer than attemptTimeoutMs (${attemptTimeoutMs}): a lease that runs out while a delivery is still under way lets another server send the message again`,
      "leaseMs",
    );
  }
  const stopping = new AbortController();
  // Each attempt under way listens to it (a whole batch at once) and removes its listener after, so
  // more than Node's default of 10 is expected, not a leak.
  setMaxListeners(0, stopping.signal);

  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let started = false;

  /** One claim and its deliveries; returns how many messages it settled. */
  async function round(): Promise<number> {
    const claimed = await store.claimOutbox({ now: now(), limit: batch, leaseMs, owner });
    // Messages about one request to one target go in order (the gate's opening before its decision,
    // which updates it); the rest in parallel.
    const lanes = new Map<string, OutboxMessage[]>();
    for (const m of claimed) {
      const lane = `${m.target}\u0000${m.requestId ?? m.id}`;
      lanes.set(lane, [...(lanes.get(lane) ?? []), m]);
    }
    await Promise.all(
      [...lanes.values()].map(async (lane) => {
        lane.sort((x, y) => x.createdAt - y.createdAt || (x.id < y.id ? -1 : 1));
        for (const m of lane) await deliverOne(m);
      }),
    );
    return claimed.length;
  }

  async function deliverOne(message: OutboxMessage): Promise<void> {
    const result = await attempt(message).catch(
      (err: unknown): Attempted => ({
        ok: false,
        retry: true,
        error: err instanceof Error ? err.message : String(err),
      }),
    );
    // Whatever a target answered, the error text stored must be text a column can hold.
    const settlement: Attempted = result.ok
      ? result
      : { ...result, error: cleanError(result.error) };
    const outcome = settlementOf(message, settlement);
    const { status } = outcome;
    const events = auditOf(message, settlement, status);
    try {
      const settled = await store.settleOutbox(message.id, owner, outcome, events);
      if (!settled) logger.warn({ messageId: message.id }, "outbox lease lost before settling");
    } catch (err) {
      // The lease runs out and the message is delivered again: at least once.
      logger.error({ err, messageId: message.id }, "outbox settle failed");
    }
    const line = { messageId: message.id, target: message.target, topic: message.topic, status };
    if (status === "delivered") logger.info(line, "outbox delivered");
    else
      logger.warn(
        { ...line, error: settlement.ok ? undefined : settlement.error },
        "outbox not delivered",
      );
  }

  async function attempt(message: OutboxMessage): Promise<Attempted> {
    // A message late in its lane may have too little of its lease left to be delivered within it:
    // it is put back (no attempt counted) rather than risk a second server sending it too.
    if (message.leaseUntil !== undefined && now() + attemptTimeoutMs >= message.leaseUntil) {
      return {
        ok: false,
        retry: true,
        putBack: now(),
        error: "put back: too little of its lease left",
      };
    }
    const driver = drivers.get(message.target);
    if (!driver) {
      return {
        ok: false,
        retry: false,
        error: `no channel named \`${message.target}\` is configured`,
      };
    }
    const disabled = await store.listOutbox({ target: message.target, status: "gone", limit: 1 });
    if (disabled[0]) {
      return {
        ok: false,
        retry: false,
        gone: true,
        error: `channel \`${message.target}\` is disabled: its target answered 410 Gone to ${disabled[0].id}`,
      };
    }
    const request = message.requestId ? await store.getRequest(message.requestId) : undefined;
    const previous = message.requestId
      ? await store.listOutbox({
          requestId: message.requestId,
          target: message.target,
          status: "delivered",
          limit: 100,
        })
      : [];
    if (
      message.topic !== "created" &&
      message.requestId &&
      !previous.some((p) => p.topic === "created")
    ) {
      // Keep the order people see: the message about a decision waits for the one that opened the
      // gate (still being retried), so it can update it rather than arrive first.
      const opening = await store.listOutbox({
        requestId: message.requestId,
        target: message.target,
        topic: "created",
        status: "pending",
        limit: 1,
      });
      if (opening[0]) {
        return {
          ok: false,
          retry: true,
          putBack: Math.max(opening[0].availableAt, now()) + 1,
          error: `waits for ${opening[0].id} (the gate's opening message)`,
        };
      }
    }
    // One controller per attempt, tied to the dispatcher's own stop by a listener removed after.
    const attemptAbort = new AbortController();
    const stop = () => attemptAbort.abort(stopping.signal.reason);
    stopping.signal.addEventListener("abort", stop, { once: true });
    const timer = setTimeout(
      () => attemptAbort.abort(new Error(`no answer within ${attemptTimeoutMs} ms`)),
      attemptTimeoutMs,
    );
    try {
      return await driver.deliver(message, {
        request,
        previous,
        publicUrl: options.publicUrl,
        now,
        signal: attemptAbort.signal,
        ...(options.redaction ? { redactor: options.redaction } : {}),
      });
    } finally {
      clearTimeout(timer);
      stopping.signal.removeEventListener("abort", stop);
    }
  }

  function settlementOf(message: OutboxMessage, result: Attempted): OutboxSettlement {
    if (result.putBack !== undefined && !result.ok) {
      // Not an attempt: it goes back as it was, due when what it waits for may be done.
      return {
        status: "pending",
        availableAt: result.putBack,
        error: result.error,
        notAnAttempt: true,
      };
    }
    if (result.ok)
      return result.receipt
        ? { status: "delivered", receipt: result.receipt }
        : { status: "delivered" };
    if (result.gone) return { status: "gone", error: result.error };
    if (!result.retry || message.attempts >= maxAttempts)
      return { status: "failed", error: result.error };
    const delay = Math.max(
      result.retryAfterMs ?? 0,
      backoffMs(message.attempts, baseDelayMs, maxDelayMs),
    );
    return { status: "pending", availableAt: now() + delay, error: result.error };
  }

  function auditOf(message: OutboxMessage, result: Attempted, status: string): AuditDraft[] {
    if (status === "pending") return [];
    const draft: AuditDraft = {
      type: "notified",
      actor: "system",
      at: now(),
      data: {
        channel: message.target,
        topic: message.topic,
        messageId: message.id,
        attempts: message.attempts,
        delivered: result.ok,
        ...(result.ok ? {} : { error: result.error }),
      },
    };
    if (message.requestId) draft.requestId = message.requestId;
    return [draft];
  }

  /** Runs rounds while there is work (a full batch, or a wake during the round). */
  async function loop(): Promise<void> {
    do {
      again = false;
      try {
        const n = await round();
        if (n >= batch) again = true;
      } catch (err) {
        if (!stopping.signal.aborted) logger.error({ err }, "outbox claim failed");
      }
    } while (again && !stopping.signal.aborted);
  }

  function kick(): void {
    if (stopping.signal.aborted) return;
    if (running) {
      again = true;
      return;
    }
    running = loop().finally(() => {
      running = undefined;
      // A wake that came after the loop's last look is served now, not at the next poll.
      if (again) kick();
      else schedule();
    });
  }

  function schedule(): void {
    if (!started || stopping.signal.aborted) return;
    clearTimeout(timer);
    timer = setTimeout(kick, pollMs);
    timer.unref?.();
  }

  return {
    start() {
      if (started) return;
      started = true;
      kick();
    },
    wake() {
      if (started) kick();
    },
    async drain() {
      let total = 0;
      await running;
      for (let i = 0; i < 1000; i++) {
        const n = await round();
        total += n;
        if (n === 0) break;
      }
      return total;
    },
    async close() {
      stopping.abort();
      clearTimeout(timer);
      await running;
    },
  };
}

/** A delivery's result, or a message put back without an attempt counted (it waits for its gate's
 * opening message, or its lease is too short), due again at `putBack`. */
type Attempted = DeliveryResult & { putBack?: number };

const MAX_ERROR_CHARS = 500;

/** Error text as a column can hold it: no control characters (NUL included), no half of a
 * surrogate pair, at most MAX_ERROR_CHARS characters. */
export function cleanError(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
  const chars = [...text.replace(/[\u0000-\u001f\u007f]+/g, " ")];
  const cut =
    chars.length > MAX_ERROR_CHARS
      ? `${chars.slice(0, MAX_ERROR_CHARS).join("")}…`
      : chars.join("");
  // A lone surrogate (half of a pair cut elsewhere) becomes U+FFFD.
  return cut.replace(
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    "\ufffd",
  );
}

/** Full-jitter exponential backoff: a random delay between half and all of base·2^(attempt−1),
 * capped, so retries of many messages after one outage spread out instead of arriving together. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}
