// The durable outbox on the embedded SQLite store, to a local webhook receiver on loopback:
//   outbox.deliveries_per_s   messages delivered (signed webhook, 2xx, settled with its audit event)
//                             per second by one dispatcher, from a backlog of gates created first
//   outbox.roundtrip_ms_no_channels / outbox.roundtrip_ms_3_channels
//                             a gate's round trip (create → decide → waiter resumed) with no channel
//                             routed, and with three webhook channels routed and their dispatcher
//                             delivering meanwhile, in the same run
//   outbox.added_latency_ms   the difference: what writing three outbox rows per change costs a gate
//                             (creating or deciding a gate never waits for a delivery)
// Every loop is bounded in count and time. Run alone: `node --import tsx bench/index.ts outbox`.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import pino from "pino";
import { createDispatcher } from "../src/channels/dispatcher.js";
import { createWebhookChannel } from "../src/channels/webhook.js";
import { createAirlock } from "../src/engine/engine.js";
import { sqliteStore } from "../src/store/sqlite.js";
import { tempDir } from "../test/helpers.js";
import { bounded, type Figure } from "./figures.js";

const BACKLOG = 2_000;
const DRAIN_MAX_MS = 20_000;
const ROUND_TRIPS = 2_000;
const ROUND_TRIP_MAX_MS = 6_000;
const SECRET = `whsec_${Buffer.from("airlock-bench-secret-0123456789ab").toString("base64")}`;
const silent = pino({ level: "silent" });

export async function benchOutbox(): Promise<Figure[]> {
  const t = tempDir("airlock-bench-outbox-");
  const receiver = await startReceiver();
  try {
    const rate = await deliveries(join(t.dir, "drain.db"), receiver);
    const none = await roundTrips(join(t.dir, "none.db"), receiver, 0);
    const three = await roundTrips(join(t.dir, "three.db"), receiver, 3);
    return [
      { name: "outbox.deliveries_per_s", value: rate, unit: "1/s" },
      { name: "outbox.roundtrip_ms_no_channels", value: none, unit: "ms" },
      { name: "outbox.roundtrip_ms_3_channels", value: three, unit: "ms" },
      { name: "outbox.added_latency_ms", value: three - none, unit: "ms" },
    ];
  } finally {
    await new Promise((r) => receiver.server.close(r));
    t.cleanup();
  }
}

interface Receiver {
  server: Server;
  url: string;
  count: number;
}

async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { server: createServer(), url: "", count: 0 };
  receiver.server.on("request", (req, res) => {
    req.resume();
    req.on("end", () => {
      receiver.count++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.server.listen(0, "127.0.0.1", r));
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hook`;
  return receiver;
}

function webhooks(receiver: Receiver, n: number) {
  return Array.from({ length: n }, (_, i) =>
    createWebhookChannel(
      `hook${i}`,
      { type: "webhook", url: receiver.url, secret: SECRET, allowPrivateTargets: true },
      { logger: silent },
    ),
  );
}

async function deliveries(file: string, receiver: Receiver): Promise<number> {
  const store = sqliteStore(file);
  const airlock = await createAirlock({ store, logger: silent, notifiers: () => ["hook0"] });
  for (let i = 0; i < BACKLOG; i++) await airlock.request({ title: `gate ${i}`, action: "bench" });
  const dispatcher = createDispatcher({
    store,
    drivers: webhooks(receiver, 1),
    logger: silent,
    publicUrl: "http://127.0.0.1:7420",
    batch: 64,
  });
  const before = receiver.count;
  const start = performance.now();
  while (receiver.count - before < BACKLOG && performance.now() - start < DRAIN_MAX_MS) {
    if ((await dispatcher.drain()) === 0) break;
  }
  const rate = ((receiver.count - before) / (performance.now() - start)) * 1000;
  await dispatcher.close();
  await airlock.close();
  return rate;
}

/** Mean ms per gate round trip, with `channels` webhook channels routed and delivering meanwhile. */
async function roundTrips(file: string, receiver: Receiver, channels: number): Promise<number> {
  const store = sqliteStore(file);
  const drivers = webhooks(receiver, channels);
  const names = drivers.map((d) => d.name);
  const dispatcher = createDispatcher({
    store,
    drivers,
    logger: silent,
    publicUrl: "http://127.0.0.1:7420",
    pollMs: 50,
  });
  const airlock = await createAirlock({
    store,
    logger: silent,
    notifiers: () => names,
    onOutbox: () => dispatcher.wake(),
  });
  dispatcher.start();
  const trip = async () => {
    const r = await airlock.request({ title: "bench", action: "bench", approvers: ["bob"] });
    const waiting = airlock.waitFor(r.id);
    await airlock.decide(r.id, { outcome: "approved", reviewer: "bob" });
    await waiting;
  };
  await bounded(200, 2_000, trip); // warm-up
  const { n, ms } = await bounded(ROUND_TRIPS, ROUND_TRIP_MAX_MS, trip);
  await dispatcher.close();
  await airlock.close();
  return ms / n;
}
